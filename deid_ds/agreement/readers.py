"""Readers of annotation answers: Prodigy ``db-out`` JSONL, doccano JSONL, Label Studio JSON.

Each reader turns its format into :class:`~deid_ds.agreement.model.Annotation` objects and a
:class:`~deid_ds.agreement.model.ReadReport`. Rules common to all formats:

* A malformed record (invalid JSON, not an object, no ``text``, a span outside the text or with
  ``start >= end``) is an error naming the file and the line (or the task number of a Label Studio
  file); no content is quoted, since answers hold note text.
* Records that are well-formed but not annotations are skipped and *counted with their reason*:
  Prodigy answers other than ``accept`` (``reject``: the annotator refused the pre-annotated sentence;
  ``ignore``: skipped it — neither is a statement about the entities), answers without an ``answer``
  field, cancelled Label Studio annotations, Label Studio results that are not ``labels`` regions.
* Items are identified across annotators by ``meta.id_document`` + ``meta.sentence_index`` when both
  are present (top level or under ``meta``), else by the tool's own key: Prodigy's ``_input_hash``,
  Label Studio's task ``id``, a hash of the text for doccano (whose example ids differ between
  per-annotator projects).
* Tokens: the answer's own ``tokens`` when present (with their ``html_start``/``html_end``, or those of
  ``tokens_parser``), else none here; :mod:`deid_ds.agreement.kappa` then tokenises the text with the
  project tokenizer, so every format is compared on the same tokens.

Annotators: Prodigy's ``_annotator_id`` (else ``_session_id``) has the form ``DATASET-NAME``; the
``DATASET-`` prefix is stripped (``dataset`` when given; else the longest prefix ending in ``-`` shared
by all the ids read, when there are several; else the file name's stem followed by ``-``; else what
follows the last ``-``). The open tools (``annotator_from``, ``--annotator-from``):

* ``auto`` (default): doccano: the ``user`` field of a line or of each of its annotations (the export of a
  project with collaborative annotation) when present, else ``assigned_to`` (the annotator whose file
  ``deid-ds campaign --tool doccano`` put the line in), else the file name's stem (doccano names each
  per-account export file after the account). Label Studio: ``assigned_to`` of the task's data (``deid-ds
  campaign --tool label-studio``: each annotator imports their own file in their own project), else
  ``completed_by``.
* ``user``: the tool's own user only: doccano's ``user`` field (an error when a line has none), Label
  Studio's ``completed_by`` (its ``email``, else ``username``, when it is an object; else the user id).
  For a shared project where annotators answer each other's tasks.
* ``file``: the file name's stem, for both.

Label Studio exports read: the full JSON export (a list of tasks with ``data`` and ``annotations``,
each annotation's ``result`` regions of type ``labels``) and JSON-MIN (one flat object per annotation:
the data fields, ``annotator``, and the regions under the labels tag's name, ``label`` in the campaign's
configuration; a row without ``annotation_id`` is a task without annotation). Label Studio 1.23 counts
offsets in code points, as Python does; a client that counts in UTF-16 code units (JavaScript's) is read
too: when a region's ``text`` is not the text at its offsets but is at the offsets read as UTF-16, those
are used (a character outside the Basic Multilingual Plane, such as an emoji, before the region).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from deid_ds.agreement.model import Annotation, ReadReport, Span
from deid_ds.errors import InputError
from deid_ds.io.jsonl import iter_json_objects
from deid_ds.io.notes import as_identifier

FORMATS: tuple[str, ...] = ("prodigy", "doccano", "labelstudio")
ANNOTATOR_SOURCES: tuple[str, ...] = ("auto", "file", "user")


# --------------------------------------------------------------------------------------------------
# Format detection


def detect_format(path: str | Path) -> str:
    """Guess the format of ``path`` from its first record (a clear error when it cannot)."""
    path = Path(path)
    first = _first_non_blank(path)
    if first is None:
        raise InputError(f"{path}: empty file, cannot detect its format (use --format)")
    if first.lstrip().startswith("["):
        return "labelstudio"
    try:
        record = json.loads(first)
    except json.JSONDecodeError:
        if first.lstrip().startswith("{") and path.suffix.lower() == ".json":
            return "labelstudio"  # a pretty-printed single object: let the reader report it
        raise InputError(f"{path}:1: not JSON, cannot detect the format (use --format)") from None
    if not isinstance(record, dict):
        raise InputError(f"{path}:1: not a JSON object, cannot detect the format (use --format)")
    if any(key in record for key in ("_annotator_id", "_session_id", "_input_hash", "_task_hash", "answer")):
        return "prodigy"
    if any(key in record for key in ("label", "labels", "entities", "annotations")) and "data" not in record:
        return "doccano"
    if "data" in record:
        return "labelstudio"
    if "spans" in record:
        return "prodigy"
    raise InputError(f"{path}:1: format not recognised (expected Prodigy, doccano or Label Studio; use --format)")


def _first_non_blank(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    return line
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    return None


# --------------------------------------------------------------------------------------------------
# Shared helpers


def _tool_id(value: Any) -> str | None:
    """A tool's own id of a task or an answer, for messages (short; ``None`` when absent or not a scalar)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or value == "":
        return None
    return str(value)[:40]


def _where_task(path: Path, number: int, tool_id: Any, line: bool = False, name: str = "id") -> str:
    """Where a task is, for messages: the tool's task id first (what its interface shows), then the position
    (``path:LINE`` for JSONL files, ``task N of the file`` for a JSON list)."""
    position = f"{path}:{number}" if line else f"{path}: task {number} of the file"
    shown = _tool_id(tool_id)
    if shown is None:
        return position
    return f"{path}:{number} ({name} {shown})" if line else f"{path}: task {name} {shown} (task {number} of the file)"


def _text_of(record: dict, where: str) -> str:
    text = record.get("text")
    if not isinstance(text, str):
        raise InputError(f"{where}: no 'text' string")
    return text


def _int(value: Any, where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise InputError(f"{where}: {what} is not an integer")
    return int(value)


def _span(start: Any, end: Any, label: Any, text: str, where: str) -> Span:
    start, end = _int(start, where, "span start"), _int(end, where, "span end")
    if not isinstance(label, str) or not label:
        raise InputError(f"{where}: span without a label")
    if not 0 <= start < end <= len(text):
        raise InputError(f"{where}: span [{start}, {end}) outside the text (length {len(text)}) or empty")
    return Span(start, end, label)


def _tokens(record: dict, text: str, where: str) -> tuple[list[tuple[int, int]] | None, list[tuple[int, int]] | None]:
    """Token text offsets and, when present, their HTML offsets (``tokens`` or ``tokens_parser``)."""
    tokens = record.get("tokens")
    parser = record.get("tokens_parser")
    offsets: list[tuple[int, int]] | None = None
    html: list[tuple[int, int]] | None = None
    if isinstance(tokens, list) and tokens:
        offsets = []
        html = []
        for token in tokens:
            if not isinstance(token, dict):
                raise InputError(f"{where}: a token is not an object")
            start, end = _int(token.get("start"), where, "token start"), _int(token.get("end"), where, "token end")
            if not 0 <= start < end <= len(text):
                raise InputError(f"{where}: token [{start}, {end}) outside the text (length {len(text)})")
            offsets.append((start, end))
            if html is not None and token.get("html_start") is not None and token.get("html_end") is not None:
                html.append(
                    (
                        _int(token["html_start"], where, "token html_start"),
                        _int(token["html_end"], where, "token html_end"),
                    )
                )
            else:
                html = None
    if isinstance(parser, list) and parser and html is None:
        html = _parser_offsets(parser, offsets, text, where)
        if offsets is None and html is not None:
            offsets = [(_int(t["start"], where, "token start"), _int(t["end"], where, "token end")) for t in parser]
    if offsets is not None and html is not None and len(html) != len(offsets):
        raise InputError(f"{where}: {len(offsets)} tokens but {len(html)} tokens_parser entries")
    return offsets, html


def _parser_offsets(
    parser: list, offsets: list[tuple[int, int]] | None, text: str, where: str
) -> list[tuple[int, int]] | None:
    """HTML offsets of ``tokens_parser``: the paper's ``start_char``/``end_char`` form (``start``/``end``
    then being text offsets), or weak-label's ``start``/``end`` form (HTML offsets, one per token)."""
    out = []
    for entry in parser:
        if not isinstance(entry, dict):
            raise InputError(f"{where}: a tokens_parser entry is not an object")
        if "start_char" in entry and "end_char" in entry:
            out.append(
                (
                    _int(entry["start_char"], where, "tokens_parser start_char"),
                    _int(entry["end_char"], where, "tokens_parser end_char"),
                )
            )
        elif offsets is not None and "start" in entry and "end" in entry:
            out.append(
                (_int(entry["start"], where, "tokens_parser start"), _int(entry["end"], where, "tokens_parser end"))
            )
        else:
            return None
    return out


def _meta(record: dict) -> dict:
    """Metadata from ``meta`` (Prodigy, doccano ≥ 1.5, Label Studio ``data.meta``) or the top level."""
    meta = record.get("meta")
    merged = dict(record)
    if isinstance(meta, dict):
        merged.update(meta)
    return merged


def _fill_meta(annotation: Annotation, meta: dict, where: str) -> None:
    annotation.id_document = as_identifier(meta.get("id_document"))
    annotation.id_patient = as_identifier(meta.get("id_patient"))
    doc_type = meta.get("doc_type")
    annotation.doc_type = str(doc_type) if doc_type is not None else None
    index = meta.get("sentence_index")
    if index is not None:
        annotation.sentence_index = _int(index, where, "meta.sentence_index")
    continues = meta.get("continues")  # deid_ds.campaign.continuation
    annotation.continues = str(continues) if continues else None
    primary = meta.get("primary_annotator", meta.get("annotator"))  # Label Studio, doccano; Prodigy
    annotation.primary = str(primary) if primary is not None else None
    for key in ("sentence_start", "text_start"):
        if meta.get(key) is not None:
            annotation.sentence_start = _int(meta[key], where, f"meta.{key}")
            break


def _item_key(annotation: Annotation, tool_key: object | None) -> str:
    if annotation.id_document is not None and annotation.sentence_index is not None:
        return f"{annotation.id_document}#{annotation.sentence_index}"
    if tool_key is not None:
        return f"key:{tool_key}"
    return "text:" + hashlib.sha1(annotation.text.encode("utf-8")).hexdigest()[:20]


# --------------------------------------------------------------------------------------------------
# Prodigy


def read_prodigy(path: str | Path, report: ReadReport) -> list[tuple[Annotation, str]]:
    """Accepted answers of a Prodigy ``db-out`` file, each with its raw annotator id (stripped later)."""
    path = Path(path)
    report.files += 1
    out: list[tuple[Annotation, str]] = []
    for number, record in iter_json_objects(path):
        report.lines += 1
        where = _where_task(path, number, record.get("_task_hash"), line=True, name="_task_hash")
        answer = record.get("answer")
        if answer is None:
            report.skip("prodigy: no 'answer' field (a task, not a saved answer)")
            continue
        if answer != "accept":
            report.skip(
                f"prodigy: answer '{answer}'" if answer in ("reject", "ignore") else "prodigy: unknown answer value"
            )
            continue
        text = _text_of(record, where)
        spans_field = record.get("spans") or []
        if not isinstance(spans_field, list):
            raise InputError(f"{where}: 'spans' is not a list")
        spans = []
        for span in spans_field:
            if not isinstance(span, dict):
                raise InputError(f"{where}: a span is not an object")
            spans.append(_span(span.get("start"), span.get("end"), span.get("label"), text, where))
        tokens, html = _tokens(record, text, where)
        raw = record.get("_annotator_id") or record.get("_session_id")
        raw = str(raw) if raw else f"{path.stem}-{path.stem}"
        timestamp = record.get("_timestamp")
        annotation = Annotation(
            "",
            "",
            text,
            spans,
            tokens,
            html,
            order=float(timestamp) if isinstance(timestamp, (int, float)) else float(number),
            source=where,
        )
        _fill_meta(annotation, _meta(record), where)
        annotation.item_key = _item_key(annotation, record.get("_input_hash"))
        report.accepted += 1
        out.append((annotation, raw))
    return out


def strip_dataset(raw_ids: Iterable[str], dataset: str | None = None, stems: Sequence[str] = ()) -> dict[str, str]:
    """Annotator names from Prodigy's ``DATASET-NAME`` ids (rules: module docstring)."""
    ids = sorted(set(raw_ids))
    if dataset:
        prefix = f"{dataset}-"
        return {i: i[len(prefix) :] if i.startswith(prefix) and len(i) > len(prefix) else i for i in ids}
    if len(ids) >= 2:
        common = _common_prefix(ids)
        cut = common.rfind("-")
        if cut >= 0:
            prefix = common[: cut + 1]
            if all(len(i) > len(prefix) for i in ids):
                return {i: i[len(prefix) :] for i in ids}
    out = {}
    for i in ids:
        stem = next((s for s in stems if i.startswith(f"{s}-") and len(i) > len(s) + 1), None)
        out[i] = i[len(stem) + 1 :] if stem else (i.rsplit("-", 1)[1] or i if "-" in i else i)
    return out


def _common_prefix(values: Sequence[str]) -> str:
    first, last = min(values), max(values)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


# --------------------------------------------------------------------------------------------------
# doccano


def read_doccano(path: str | Path, report: ReadReport, annotator_from: str = "auto") -> list[Annotation]:
    """A doccano JSONL export: ``label: [[start, end, LABEL]]`` (``labels`` in doccano 1.0-1.2), ``entities:
    [{start_offset, end_offset, label}]``, or the multi-user ``annotations: [{start_offset, end_offset, label,
    user}]`` form.

    Every line counts as an annotation (export the confirmed examples only), except lines marked
    ``"is_confirmed": false``, skipped and counted.
    """
    path = Path(path)
    report.files += 1
    out: list[Annotation] = []
    for number, record in iter_json_objects(path):
        report.lines += 1
        where = _where_task(path, number, record.get("id"), line=True)
        if record.get("is_confirmed") is False:
            report.skip("doccano: example not confirmed")
            continue
        text = _text_of(record, where)
        by_user: dict[str, list[Span]] = {}
        default_user = _doccano_user(record, path, annotator_from)
        if "label" in record or "entities" in record or "labels" in record:
            spans = []
            key = next(k for k in ("label", "entities", "labels") if k in record)  # labels: doccano 1.0-1.2
            labels = record.get(key)
            if labels is None:
                labels = []
            if not isinstance(labels, list):
                raise InputError(f"{where}: 'label'/'entities' is not a list")
            for entry in labels:
                if isinstance(entry, (list, tuple)) and len(entry) == 3:
                    spans.append(_span(entry[0], entry[1], entry[2], text, where))
                elif isinstance(entry, dict):
                    spans.append(
                        _span(entry.get("start_offset"), entry.get("end_offset"), entry.get("label"), text, where)
                    )
                elif isinstance(entry, str):
                    report.skip("doccano: document-level label ignored")
                else:
                    raise InputError(f"{where}: a label is neither [start, end, LABEL] nor an object")
            by_user[default_user] = spans
        elif isinstance(record.get("annotations"), list):
            for entry in record["annotations"]:
                if not isinstance(entry, dict) or "start_offset" not in entry:
                    raise InputError(f"{where}: an annotation has no start_offset")
                user = (
                    str(entry["user"]) if annotator_from != "file" and entry.get("user") is not None else default_user
                )
                by_user.setdefault(user, []).append(
                    _span(entry.get("start_offset"), entry.get("end_offset"), entry.get("label"), text, where)
                )
            if not by_user:
                by_user[default_user] = []
        else:
            raise InputError(f"{where}: no 'label', 'entities' or 'annotations' field")
        tokens, html = _tokens(record, text, where)
        for user, spans in by_user.items():
            annotation = Annotation(user, "", text, spans, tokens, html, order=float(number), source=where)
            _fill_meta(annotation, _meta(record), where)
            annotation.item_key = _item_key(annotation, None)
            report.accepted += 1
            out.append(annotation)
    return out


def _doccano_user(record: dict, path: Path, annotator_from: str) -> str:
    if annotator_from in ("auto", "user") and record.get("user") is not None:
        return str(record["user"])
    if annotator_from == "user":
        raise InputError(f"{path}: --annotator-from user, but a line has no 'user' field")
    if annotator_from == "auto" and _meta(record).get("assigned_to") is not None:
        return str(_meta(record)["assigned_to"])
    return path.stem


# --------------------------------------------------------------------------------------------------
# Label Studio


def read_labelstudio(path: str | Path, report: ReadReport, annotator_from: str = "auto") -> list[Annotation]:
    """A Label Studio export: the full JSON export (tasks with ``data`` and ``annotations``) or JSON-MIN
    (one flat object per annotation); the annotator by ``annotator_from`` (module docstring)."""
    path = Path(path)
    report.files += 1
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise InputError(f"{path}:{error.lineno}: malformed JSON ({error.msg}, column {error.colno})") from None
    if isinstance(tasks, dict):
        tasks = [tasks]
    if not isinstance(tasks, list):
        raise InputError(f"{path}: expected a JSON list of tasks")
    out: list[Annotation] = []
    for number, task in enumerate(tasks, 1):
        report.lines += 1
        where = _where_task(path, number, task.get("id") if isinstance(task, dict) else None)
        if isinstance(task, dict) and "data" not in task and isinstance(task.get("text"), str):
            if task.get("was_cancelled"):
                report.skip("labelstudio: annotation cancelled")
            elif task.get("annotation_id") is None:  # JSON-MIN's row of a task nobody annotated
                report.skip("labelstudio: task without annotation")
            else:
                out.append(_labelstudio_min(task, path, number, report, annotator_from))
            continue
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            raise InputError(f"{where}: not a task object with 'data'")
        data = task["data"]
        text = _text_of(data, where)
        tokens, html = _tokens(data, text, where)
        meta = _meta(data)
        if isinstance(task.get("meta"), dict):
            meta.update(task["meta"])
        annotations = task.get("annotations") or task.get("completions") or []
        if not isinstance(annotations, list):
            raise InputError(f"{where}: 'annotations' is not a list")
        if not annotations:
            report.skip("labelstudio: task without annotation")
        for annotation_number, entry in enumerate(annotations, 1):
            if not isinstance(entry, dict):
                raise InputError(f"{where}: annotation {annotation_number} is not an object")
            shown = _tool_id(entry.get("id"))  # the tool's annotation id, as its interface shows it
            which = f"annotation id {shown}" if shown is not None else f"annotation {annotation_number}"
            if entry.get("was_cancelled"):
                report.skip("labelstudio: annotation cancelled")
                continue
            results = entry.get("result") or []
            if not isinstance(results, list):
                raise InputError(f"{where}: {which}: 'result' is not a list")
            spans = []
            for result in results:
                if not isinstance(result, dict):
                    raise InputError(f"{where}: {which}: a result is not an object")
                if result.get("type") != "labels":
                    report.skip(f"labelstudio: result of type '{result.get('type')}' ignored")
                    continue
                span = _ls_region(result.get("value"), text, f"{where}: {which}", report)
                spans.append(span)
            user = _ls_annotator(meta, entry.get("completed_by"), path, annotator_from)
            annotation = Annotation(user, "", text, spans, tokens, html, order=_ls_order(entry, number), source=where)
            _fill_meta(annotation, meta, where)
            annotation.item_key = _item_key(annotation, task.get("id"))
            report.accepted += 1
            out.append(annotation)
    return out


def _labelstudio_min(record: dict, path: Path, number: int, report: ReadReport, annotator_from: str) -> Annotation:
    """One JSON-MIN record: the data fields flat, ``annotator``, and the regions under the tag's name."""
    where = _where_task(path, number, record.get("id"))
    text = record["text"]
    spans = []
    for value in record.values():
        if isinstance(value, list) and value and all(isinstance(v, dict) and "labels" in v for v in value):
            spans.extend(_ls_region(v, text, where, report) for v in value)
    tokens, html = _tokens(record, text, where)
    meta = _meta(record)
    annotation = Annotation(
        _ls_annotator(meta, record.get("annotator"), path, annotator_from),
        "",
        text,
        spans,
        tokens,
        html,
        order=_ls_order(record, number),
        source=where,
    )
    _fill_meta(annotation, meta, where)
    annotation.item_key = _item_key(annotation, record.get("id"))
    report.accepted += 1
    return annotation


def _ls_region(value: Any, text: str, where: str, report: ReadReport) -> Span:
    """A ``labels`` region's span; offsets read as UTF-16 when only that reading gives its ``text``."""
    if not isinstance(value, dict):
        raise InputError(f"{where}: a region without 'value'")
    labels = value.get("labels") or []
    if isinstance(labels, str):
        labels = [labels]
    if not isinstance(labels, list) or not labels:
        raise InputError(f"{where}: a region without label")
    if len(labels) > 1:
        report.skip("labelstudio: region with several labels (first kept)")
    start, end = value.get("start"), value.get("end")
    shown = value.get("text")
    if isinstance(shown, str) and isinstance(start, int) and isinstance(end, int) and text[start:end] != shown:
        start16, end16 = _from_utf16(text, start), _from_utf16(text, end)
        if start16 is not None and end16 is not None and text[start16:end16] == shown:
            start, end = start16, end16
            report.skip("labelstudio: region offsets in UTF-16 code units (converted)")
    return _span(start, end, labels[0], text, where)


def _from_utf16(text: str, offset: int) -> int | None:
    """The character index of a UTF-16 code-unit ``offset`` of ``text`` (None inside a surrogate pair)."""
    units = 0
    for index, char in enumerate(text):
        if units == offset:
            return index
        if units > offset:
            return None
        units += 2 if ord(char) > 0xFFFF else 1
    return len(text) if units == offset else None


def _ls_order(entry: dict, number: int) -> float:
    """When the annotation was last saved (``updated_at``, else ``created_at``), else its position."""
    for key in ("updated_at", "created_at"):
        value = entry.get(key)
        if isinstance(value, str):
            try:
                return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
            except ValueError:
                continue
    return float(number)


def _ls_annotator(meta: dict, completed_by: object, path: Path, annotator_from: str) -> str:
    if annotator_from == "file":
        return path.stem
    if annotator_from == "auto" and meta.get("assigned_to") is not None:
        return str(meta["assigned_to"])
    return _ls_user(completed_by)


def _ls_user(value: object) -> str:
    if isinstance(value, dict):
        for key in ("email", "username", "id"):
            if value.get(key) is not None:
                return str(value[key])
    return str(as_identifier(value)) if value is not None else "unknown"


# --------------------------------------------------------------------------------------------------
# Entry point


def read_answers(
    paths: Sequence[str | Path],
    fmt: str = "auto",
    *,
    annotator_from: str = "auto",
    dataset: str | None = None,
) -> tuple[list[Annotation], ReadReport]:
    """Read every file of ``paths`` (``fmt`` ``auto`` detects each file's format on its own)."""
    fmt = "labelstudio" if fmt == "label-studio" else fmt  # the spelling of ``campaign --tool``
    if fmt not in ("auto", *FORMATS):
        raise InputError(f"format '{fmt}': expected auto, {', '.join(FORMATS)}")
    if annotator_from not in ANNOTATOR_SOURCES:
        raise InputError(f"annotator source '{annotator_from}': expected {', '.join(ANNOTATOR_SOURCES)}")
    if not paths:
        raise InputError("no answer file given")
    report = ReadReport()
    annotations: list[Annotation] = []
    prodigy: list[tuple[Annotation, str]] = []
    stems: list[str] = []
    for path in paths:
        path = Path(path)
        kind = detect_format(path) if fmt == "auto" else fmt
        if kind == "prodigy":
            prodigy.extend(read_prodigy(path, report))
            stems.append(path.stem)
        elif kind == "doccano":
            annotations.extend(read_doccano(path, report, annotator_from))
        else:
            annotations.extend(read_labelstudio(path, report, annotator_from))
    if prodigy:
        names = strip_dataset((raw for _, raw in prodigy), dataset, stems)
        for annotation, raw in prodigy:
            annotation.annotator = names[raw]
            annotations.append(annotation)
    return annotations, report
