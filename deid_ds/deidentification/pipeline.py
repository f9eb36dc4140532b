"""``deid-ds deidentify``: the I/O around :func:`deid_ds.deidentification.document.deidentify_document`.

Reads the notes table in batches (with the columns named by ``keep_columns``, written back unchanged:
the input's other columns are dropped, since a warehouse export may carry identifiers in any column),
the spans to replace (a ``weak-label``/``predict``/gold table, or the spans a model predicts here with
:func:`deid_ds.ner.predict.predict`), replaces them (and the note's other views: ``hidden``) note by note on
``workers`` processes, runs the residual-leak check (:mod:`deid_ds.deidentification.leaks`) on each output
note, and writes the output directory atomically:

* ``notes.parquet``: ``id_document``, ``id_patient``, the de-identified ``html``, the columns of
  ``keep_columns`` unchanged, the metadata columns dropped (``keep_metadata="drop"``) or replaced by
  their surrogates (``"surrogate"``). A note that could not be de-identified safely is **not** written;
* ``audit.parquet``: one row per replacement — document, patient, label, source, offsets in the input
  and output HTML, the replacement and its length, the ``view`` it was in, and the original text only
  with ``audit_originals``;
* ``documents.parquet``: one row per input note — ``ok`` or ``failed`` with a reason that holds no
  content — with its replacements, leaks and fallbacks (spans masked because no safe surrogate exists;
  ``leak_check`` ``no metadata`` and ``n_leaks`` null for a note whose patient has no metadata: not
  checked, which is not "0 left");
* ``report.json``: the totals printed at the end (replacements per label, fallbacks, leaks per field).

With ``fail_on_leak``, an output in which the check finds any leak is not published at ``out``: it is
written whole to ``out.leaks`` (replacing a previous one) for inspection, and ``out`` is left as it was.

The key never leaves memory: ``report.json`` holds only where it came from and a salted scrypt fingerprint
(none for a short key: see :mod:`deid_ds.deidentification.keyed`).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from deid_ds.defaults import DEFAULT_BATCH_SIZE
from deid_ds.deidentification.context import Context, scope_of
from deid_ds.deidentification.document import SpanIn, deidentify_document
from deid_ds.deidentification.keyed import Keyring, resolve_key
from deid_ds.deidentification.leaks import LEAK_FIELDS, LeakCounts, find_leaks
from deid_ds.deidentification.other_views import HIDDEN_POLICIES
from deid_ds.deidentification.surrogates import DEFAULT_MASK, MODES
from deid_ds.errors import InputError
from deid_ds.io.files import close_writers
from deid_ds.model import LABELS, PATIENT_FIELDS, Note
from deid_ds.report import add_counts

KEEP_METADATA = ("drop", "surrogate")
DUPLICATE_REASON = "duplicate id_document (an earlier note of the input has the same id)"
#: Columns written under our names, in this order, before the input's other columns.
_OWN_COLUMNS = ("id_document", "id_patient", "doc_type", "html")


@dataclass(frozen=True)
class DeidOptions:
    """What a worker needs (picklable; the key travels to workers through a pipe, never to disk)."""

    mode: str
    keyring: Keyring
    kb: str | None = None
    mask_format: str = DEFAULT_MASK
    keep_metadata: str = "drop"
    audit_originals: bool = False
    birthdate_year: bool = False
    hidden: str = "deidentify"
    keep_columns: tuple[str, ...] = ()  # input columns written back unchanged (the others are dropped)


@dataclass
class DeidJob:
    notes: list[Note]
    extras: object  # the batch's other columns (a pyarrow Table), or None
    spans: list[list[SpanIn]]
    duplicates: frozenset[int]
    options: DeidOptions
    #: Per scope (patient) of the batch's notes, the (label, text) of every span of all the scope's notes:
    #: what no surrogate may be, the same set in each of the patient's notes so that they stay coherent.
    scope_entities: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)


@dataclass
class BatchResult:
    ok: list[int]  # positions of the notes written
    kept: dict[str, list]  # id_document, id_patient, doc_type of the notes written
    html: list[str]
    metadata: dict[str, list]  # surrogate metadata of the written notes
    extras: object
    documents: dict[str, list]
    audit: dict[str, list]
    per_label: dict[str, int] = field(default_factory=dict)
    fallbacks: dict[str, int] = field(default_factory=dict)
    leaks: LeakCounts = field(default_factory=LeakCounts)
    per_view: dict[str, int] = field(default_factory=dict)
    blanked: dict[str, int] = field(default_factory=dict)


def documents_schema():
    import pyarrow as pa

    return pa.schema(
        [
            ("id_document", pa.string()),
            ("id_patient", pa.string()),
            ("doc_type", pa.string()),
            ("status", pa.string()),
            ("error", pa.string()),
            ("n_replacements", pa.int32()),
            ("n_leaks", pa.int32()),
            ("leak_check", pa.string()),
            ("n_fallbacks", pa.int32()),
        ]
    )


def audit_schema(with_originals: bool):
    import pyarrow as pa

    fields = [
        ("id_document", pa.string()),
        ("id_patient", pa.string()),
        ("label", pa.string()),
        ("source", pa.string()),
        ("html_start", pa.int64()),
        ("html_end", pa.int64()),
        ("out_start", pa.int64()),
        ("out_end", pa.int64()),
        ("replacement", pa.string()),
        ("replacement_length", pa.int32()),
        ("fallback", pa.string()),
        ("view", pa.string()),
    ]
    if with_originals:
        fields.append(("original", pa.string()))
    return pa.schema(fields)


def deidentify_batch(job: DeidJob) -> BatchResult:
    """De-identify one batch of notes. Module level: worker processes import it."""
    from deid_ds.deidentification.metadata import surrogate_metadata
    from deid_ds.deidentification.pools import load_pools
    from deid_ds.segmentation.html_text import html_to_text

    options = job.options
    pools = load_pools(options.kb)
    result = BatchResult(
        [],
        {"id_document": [], "id_patient": [], "doc_type": []},
        [],
        {name: [] for name in PATIENT_FIELDS},
        job.extras,
        {name: [] for name in documents_schema().names},
        {name: [] for name in audit_schema(options.audit_originals).names},
    )
    for position, (note, spans) in enumerate(zip(job.notes, job.spans)):
        error, outcome, leaks = None, None, LeakCounts()
        if position in job.duplicates:
            error = DUPLICATE_REASON
        elif note.html is None:
            error = "html is null"
        else:
            scope = scope_of(note.id_patient, note.id_document)
            ctx = Context(options.keyring, pools, scope, note.patient, options.birthdate_year)
            try:
                outcome = deidentify_document(
                    html_to_text(note.html),
                    spans,
                    ctx,
                    options.mode,
                    mask_format=options.mask_format,
                    audit_originals=options.audit_originals,
                    hidden=options.hidden,
                    scope_entities=job.scope_entities.get(scope, ()),
                )
            except Exception as exc:
                error = f"internal error during de-identification ({type(exc).__name__})"
            else:
                error = outcome.error
        if error is None and outcome is not None:
            leaks = find_leaks(outcome.html, note.patient)
            result.leaks.add(leaks)
            result.ok.append(position)
            for name, value in (
                ("id_document", note.id_document),
                ("id_patient", note.id_patient),
                ("doc_type", note.doc_type),
            ):
                result.kept[name].append(value)
            result.html.append(outcome.html)
            if options.keep_metadata == "surrogate":
                fake = surrogate_metadata(ctx)
                for name in PATIENT_FIELDS:
                    result.metadata[name].append(fake[name])
            for row in outcome.audit:
                row = {**row, "id_document": note.id_document, "id_patient": note.id_patient}
                for name, values in result.audit.items():
                    values.append(row.get(name))
            add_counts(result.per_label, outcome.per_label)
            add_counts(result.fallbacks, outcome.fallbacks)
            add_counts(result.per_view, outcome.per_view)
            add_counts(result.blanked, outcome.blanked)
        written = error is None and outcome is not None
        row = {
            "id_document": note.id_document,
            "id_patient": note.id_patient,
            "doc_type": note.doc_type,
            "status": "ok" if error is None else "failed",
            "error": error,
            "n_replacements": len(outcome.audit) if written else 0,
            "n_leaks": leaks.total if written and leaks.checked else None,
            "leak_check": None if not written else "checked" if leaks.checked else "no metadata",
            "n_fallbacks": sum(outcome.fallbacks.values()) if written else 0,
        }
        for name, values in result.documents.items():
            values.append(row[name])
    return result


# -------------------------------------------------------------------------------------------------- input


def read_spans_by_document(path: str | Path) -> dict[str, list[SpanIn]]:
    """A spans table (``weak-label``, ``predict``, gold: Parquet, JSONL or a directory) grouped by note."""
    import math

    from deid_ds.evaluation.evaluate import read_spans

    frame = read_spans(path)
    for name in ("html_start", "html_end"):
        values = frame[name]
        if values.isna().any():
            raise InputError(f"{path}: column {name} has missing values (row {int(values.isna().to_numpy().argmax())})")
    sources = frame["source"].tolist() if "source" in frame.columns else [None] * len(frame)
    texts = frame["text"].tolist() if "text" in frame.columns else [None] * len(frame)
    by_document: dict[str, list[SpanIn]] = {}
    rows = zip(frame["id_document"], frame["label"], frame["html_start"], frame["html_end"], sources, texts)
    for id_document, label, start, end, source, text in rows:
        text = text if isinstance(text, str) else None
        source = source if isinstance(source, str) else None
        if not isinstance(label, str) or (isinstance(start, float) and math.isnan(start)):
            continue
        by_document.setdefault(id_document, []).append(SpanIn(label, int(start), int(end), source, text))
    return by_document


def _batches(source, batch_size: int, keep_columns: tuple[str, ...] = ()) -> Iterator[tuple[list[Note], object]]:
    """Notes with the batch's columns of ``keep_columns`` (as an Arrow table), reading each column once."""
    if source.kind == "files":
        for notes in source.iter_batches(batch_size):
            yield notes, None
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    from deid_ds.io.notes import notes_from_columns

    wanted = list(dict.fromkeys([*source.columns.values(), *keep_columns]))
    for file in source.files:
        row = 0
        parquet = pq.ParquetFile(file)
        missing = [name for name in keep_columns if name not in parquet.schema_arrow.names]
        if missing:
            raise InputError(f"{file}: --keep-column {missing[0]}: no such column in this file")
        for record_batch in parquet.iter_batches(batch_size=batch_size, columns=wanted):
            data = {name: record_batch.column(name).to_pylist() for name in dict.fromkeys(source.columns.values())}
            get = {name: data[theirs] for name, theirs in source.columns.items()}
            notes = notes_from_columns(get, file, row)
            row += record_batch.num_rows
            extras = pa.Table.from_batches([record_batch]).select(list(keep_columns))
            yield notes, extras


def documents_by_scope(source) -> dict[str, list[str]]:
    """The documents of each scope (patient, else the document itself), from the id columns only."""
    by_scope: dict[str, list[str]] = {}
    for id_document, id_patient in source.iter_identifiers():
        by_scope.setdefault(scope_of(id_patient, id_document), []).append(id_document)
    return by_scope


def scope_entities(documents: list[str], spans: Mapping[str, list[SpanIn]]) -> tuple[tuple[str, str], ...]:
    """The distinct (label, text) of the spans of ``documents`` that carry their text, in a stable order."""
    pairs = {(s.label, s.text) for d in documents for s in spans.get(d, ()) if s.text}
    return tuple(sorted(pairs))


def _jobs(
    source, spans: Mapping[str, list[SpanIn]], batch_size: int, options: DeidOptions, seen_spans: set[str]
) -> Iterator[DeidJob]:
    seen: set[str] = set()
    by_scope = documents_by_scope(source) if options.mode == "surrogate" else {}
    for notes, extras in _batches(source, batch_size, options.keep_columns):
        duplicates = set()
        for position, note in enumerate(notes):
            if note.id_document in seen:
                duplicates.add(position)
            seen.add(note.id_document)
        seen_spans.update(note.id_document for note in notes if note.id_document in spans)
        scopes = {scope_of(note.id_patient, note.id_document) for note in notes}
        entities = {scope: scope_entities(by_scope.get(scope, []), spans) for scope in scopes if scope in by_scope}
        yield DeidJob(
            notes, extras, [spans.get(note.id_document, []) for note in notes], frozenset(duplicates), options, entities
        )


def input_columns(source) -> list[str]:
    """The columns of the notes table (of its first file; empty for a directory of note files)."""
    import pyarrow.parquet as pq

    return [] if source.kind == "files" else list(pq.read_schema(source.files[0]).names)


def check_keep_columns(keep_columns: tuple[str, ...], available: list[str], own: set[str], where: str) -> list[str]:
    """Refuse a ``--keep-column`` the input lacks or that deid-ds handles itself; return the dropped columns."""
    for name in keep_columns:
        if name in own:
            raise InputError(
                f"--keep-column {name}: deid-ds writes this column itself (see --keep-metadata for the metadata)"
            )
        if name not in available:
            raise InputError(
                f"--keep-column {name}: no such column in {where} (columns: {', '.join(available) or 'none'})"
            )
    return [name for name in available if name not in own and name not in keep_columns]


def _output_schema(source, keep_metadata: str, keep_columns: tuple[str, ...] = ()):
    """Our columns (strings) then the input's columns named by ``keep_columns``, with their own types."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fields = [
        pa.field(name, pa.string())
        for name in _OWN_COLUMNS
        if name in ("id_document", "id_patient", "html") or name in source.columns
    ]
    if keep_metadata == "surrogate":
        fields += [pa.field(name, pa.string()) for name in PATIENT_FIELDS if name in source.columns]
    if source.kind != "files":
        types = {f.name: f for f in pq.read_schema(source.files[0])}
        fields += [types[name] for name in keep_columns]
    return pa.schema(fields)


def _notes_table(batch: BatchResult, schema):
    import pyarrow as pa

    columns = {**batch.kept, "html": batch.html, **batch.metadata}
    arrays = []
    for f in schema:
        if f.name in columns:
            arrays.append(pa.array(columns[f.name], type=f.type))
        else:
            arrays.append(batch.extras.column(f.name).take(pa.array(batch.ok, type=pa.int64())).cast(f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


# -------------------------------------------------------------------------------------------------- report


@dataclass
class DeidentifyReport:
    """Totals of a ``deidentify`` run (``report.json`` and the printed table). Counts only, no content."""

    mode: str = "surrogate"
    key_origin: str = ""
    key_fingerprint: str = ""
    pools: str = ""
    keep_metadata: str = "drop"
    documents: int = 0
    ok: int = 0
    failed: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    replacements: int = 0
    replacements_per_label: dict[str, int] = field(default_factory=dict)
    fallbacks: dict[str, int] = field(default_factory=dict)
    documents_without_spans: int = 0
    spans_for_unknown_documents: int = 0
    documents_with_leaks: int = 0
    documents_not_checked: int = 0  # written, but their patient has no metadata to look for
    leaks: dict = field(default_factory=dict)
    hidden: str = "deidentify"
    replacements_per_view: dict[str, int] = field(default_factory=dict)  # outside the visible text
    blanked: dict[str, int] = field(default_factory=dict)
    dropped_columns: list[str] = field(default_factory=list)
    fail_on_leak: bool = False
    written_to: str = ""  # where the output went: OUT, or OUT.leaks when --fail-on-leak found leaks
    seconds: float = 0.0

    @property
    def documents_per_second(self) -> float:
        return self.documents / self.seconds if self.seconds else 0.0

    @property
    def leak_total(self) -> int:
        return int(self.leaks.get("total", 0))

    def to_dict(self) -> dict:
        return {**asdict(self), "documents_per_second": self.documents_per_second}

    @property
    def kept_aside(self) -> bool:
        """Whether ``--fail-on-leak`` kept the output out of ``OUT`` (written to ``OUT.leaks``)."""
        return self.fail_on_leak and self.leak_total > 0

    def add(self, batch: BatchResult, totals: LeakCounts) -> None:
        for status, error, n_leaks, check, n in zip(
            batch.documents["status"],
            batch.documents["error"],
            batch.documents["n_leaks"],
            batch.documents["leak_check"],
            batch.documents["n_replacements"],
        ):
            self.documents += 1
            setattr(self, status, getattr(self, status) + 1)
            if error:
                self.failures[error] = self.failures.get(error, 0) + 1
            self.documents_with_leaks += (n_leaks or 0) > 0
            self.documents_not_checked += check == "no metadata"
            self.documents_without_spans += status == "ok" and n == 0
        add_counts(self.replacements_per_label, batch.per_label)
        self.replacements += sum(batch.per_label.values())
        add_counts(self.fallbacks, batch.fallbacks)
        add_counts(self.replacements_per_view, batch.per_view)
        add_counts(self.blanked, batch.blanked)
        totals.add(batch.leaks)


def new_report(options: DeidOptions) -> DeidentifyReport:
    """An empty report for a run with ``options`` (where the key came from and its fingerprint, never the key)."""
    report = DeidentifyReport(
        mode=options.mode,
        key_origin=options.keyring.origin.split(" (")[0],
        key_fingerprint=options.keyring.fingerprint(),
        pools="knowledge base" if options.kb else "shipped fallback list",
        keep_metadata=options.keep_metadata,
        hidden=options.hidden,
    )
    if options.mode == "mask":
        report.pools = "n/a"
    return report


def report_table(report: DeidentifyReport) -> str:
    """The summary printed at the end of ``deid-ds deidentify``."""
    from deid_ds.report import format_table

    rows: list[list[object]] = [
        ["documents", report.documents],
        ["  ok (written)", report.ok],
        ["  failed (not written)", report.failed],
        ["  ok without any span", report.documents_without_spans],
        ["replacements", report.replacements],
    ]
    labels = [*LABELS, *sorted(set(report.replacements_per_label) - set(LABELS))]
    rows += [[f"  {label}", report.replacements_per_label.get(label, 0)] for label in labels]
    rows += [[f"  outside the text: {view}", n] for view, n in sorted(report.replacements_per_view.items())]
    rows += [[f"blanked ({report.hidden}): {kind}", n] for kind, n in sorted(report.blanked.items())]
    if report.dropped_columns:
        rows.append(["input columns dropped (--keep-column keeps one)", len(report.dropped_columns)])
    rows.append(["fallbacks (masked, see audit)", sum(report.fallbacks.values())])
    rows += [[f"  {reason}", n] for reason, n in sorted(report.fallbacks.items())]
    rows += [[f"failure: {reason}", n] for reason, n in sorted(report.failures.items())]
    if report.spans_for_unknown_documents:
        rows.append(["spans of documents not in the notes", report.spans_for_unknown_documents])
    rows += [["documents/s", report.documents_per_second], ["seconds", report.seconds]]
    title = f"deidentify ({report.mode}; key: {report.key_origin}; places: {report.pools})"
    leak_rows = [
        [name, report.leaks["per_field"][name]["exact"], report.leaks["per_field"][name]["fuzzy"]]
        for name in LEAK_FIELDS
    ]
    leak_rows.append(["total", report.leak_total, ""])
    checked = report.ok - report.documents_not_checked
    views = ", ".join(f"{v} {n}" for v, n in report.leaks["per_view"].items())
    if checked == 0 and report.ok:
        leak_title = f"residual-leak check: not checked ({report.documents_not_checked} document(s) without metadata)"
    else:
        leak_title = (
            f"residual-leak check: {report.leak_total} value(s) of the patients' own metadata left in "
            f"{report.documents_with_leaks} of {checked} checked document(s) (views: {views})"
        )
        if report.documents_not_checked:
            leak_title += f"; {report.documents_not_checked} document(s) not checked (no metadata)"
    return (
        format_table(["deidentify", "count"], rows, title=title)
        + "\n\n"
        + format_table(["field", "exact", "fuzzy"], leak_rows, title=leak_title)
    )


# -------------------------------------------------------------------------------------------------- the command


def deidentify(
    notes: str | Path,
    out: str | Path,
    *,
    spans: str | Path | None = None,
    model: str | Path | None = None,
    with_rules: str | Path | None = None,
    mode: str = "surrogate",
    kb: str | Path | None = None,
    key: str | None = None,
    allow_short_key: bool = False,
    keep_metadata: str = "drop",
    audit_originals: bool = False,
    birthdate_year: bool = False,
    mask_format: str = DEFAULT_MASK,
    column_map: Mapping[str, str] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int = 1,
    device: str = "auto",
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    engine: str = "local",
    spark_master: str | None = None,
    hidden: str = "deidentify",
    keep_columns: tuple[str, ...] | list[str] = (),
    fail_on_leak: bool = False,
    overwrite: bool = False,
) -> DeidentifyReport:
    """Mask or replace the entities of ``notes`` found in ``spans`` (or predicted by ``model``) into ``out``.

    See the module docstring for the outputs and :mod:`deid_ds.deidentification` for the policies. ``key``
    (else the ``DEID_DS_KEY`` environment variable, else a random key) drives every surrogate choice; an
    empty key, or one shorter than 16 bytes without ``allow_short_key``, is refused (:mod:`.keyed`).
    ``engine="spark"`` runs the batches on Apache Spark (:mod:`deid_ds.engine.spark_deidentify`: the
    spans joined to the notes, the key shipped inside the tasks) with the same outputs; ``--model`` is
    not available there yet. ``hidden`` is the policy for the views outside the visible text
    (:mod:`deid_ds.deidentification.other_views`); ``keep_columns`` the input columns written back (the
    others are dropped); ``fail_on_leak`` keeps an output with leaks out of ``out`` (module docstring:
    the report's ``written_to`` says where it went). ``out`` (and ``OUT.leaks``) is replaced only if
    deid-ds deidentify wrote it, or with ``overwrite`` (:mod:`deid_ds.io.output_dir`).
    """
    from deid_ds.io.output_dir import check_output_dir, guarded_output

    log = log or (lambda message: print(message, file=sys.stderr))
    if mode not in MODES:
        raise InputError(f"--mode {mode}: expected one of {', '.join(MODES)}")
    if keep_metadata not in KEEP_METADATA:
        raise InputError(f"--keep-metadata {keep_metadata}: expected one of {', '.join(KEEP_METADATA)}")
    if hidden not in HIDDEN_POLICIES:
        raise InputError(f"--hidden {hidden}: expected one of {', '.join(HIDDEN_POLICIES)}")
    keep_columns = tuple(dict.fromkeys(keep_columns))
    if (spans is None) == (model is None):
        raise InputError("give the entities to replace with exactly one of --spans SPANS or --model MODELDIR")
    if with_rules is not None and model is None:
        raise InputError("--with-rules is for --model (the spans of --spans are used as they are)")
    if batch_size < 1 or workers < 1:
        raise InputError("batch size and workers must be at least 1")
    from deid_ds.engine import check_engine

    check_engine(engine)
    if engine == "spark" and model is not None:
        raise InputError(
            "--model is not available with --engine spark yet: run `deid-ds predict --engine spark` first, "
            "then `deid-ds deidentify --spans PREDICT_OUT --engine spark`"
        )
    inputs = (notes, spans, model, with_rules, kb)
    check_output_dir(out, "deidentify", inputs, overwrite)  # before a model runs, not after
    if kb is not None:
        from deid_ds.kb.build import verify_tables

        verify_tables(kb)
    keyring = resolve_key(key, allow_short=allow_short_key)
    if mode == "surrogate" and keyring.origin.startswith("random"):
        log(
            "deidentify: no --key and no DEID_DS_KEY: a random key is used for this run only (the mapping cannot be reproduced)"
        )
    options = DeidOptions(
        mode,
        keyring,
        str(Path(kb).resolve()) if kb else None,
        mask_format,
        keep_metadata,
        audit_originals,
        birthdate_year,
        hidden,
        keep_columns,
    )
    if engine == "spark":
        from deid_ds.deidentification.pools import load_pools
        from deid_ds.engine.spark_deidentify import deidentify_spark

        load_pools(options.kb)  # fail fast on an unreadable knowledge base, before any output exists
        with guarded_output(out, "deidentify", inputs=inputs, overwrite=overwrite):
            return deidentify_spark(
                notes,
                spans,
                out,
                options,
                column_map=column_map,
                batch_size=batch_size,
                spark_master=spark_master,
                log=log,
                fail_on_leak=fail_on_leak,
                inputs=inputs,
                overwrite=overwrite,
            )
    from deid_ds.io.notes import open_notes

    source = open_notes(notes, column_map)
    dropped = check_keep_columns(keep_columns, input_columns(source), own_columns(source.columns), str(notes))
    with tempfile.TemporaryDirectory(prefix="deid-ds-predict-") as scratch:
        if model is not None:
            from deid_ds.ner.predict import predict

            log("deidentify: predicting the entities with the model first")
            predict(
                model,
                notes,
                Path(scratch) / "predict",
                with_rules=with_rules,
                column_map=column_map,
                batch_size=batch_size,
                workers=workers,
                device=device,
                progress=progress,
                log=log,
            )
            spans = Path(scratch) / "predict"
        by_document = read_spans_by_document(spans)
        return _run(
            source,
            by_document,
            out,
            options,
            batch_size,
            workers,
            progress,
            dropped,
            fail_on_leak,
            inputs=inputs,
            overwrite=overwrite,
        )


def own_columns(column_map: Mapping[str, str]) -> set[str]:
    """The input columns deid-ds reads itself (never copied by ``--keep-column``) and the names it writes."""
    return {*column_map.values(), *_OWN_COLUMNS, *PATIENT_FIELDS}


def leaks_path(out: str | Path) -> str:
    """Where ``--fail-on-leak`` writes an output with leaks: ``OUT.leaks`` beside ``OUT``."""
    return str(out).rstrip("/") + ".leaks"


@dataclass
class _Target:
    """The directory a finished output is moved onto (decided once the leak check is done)."""

    path: Path


@contextmanager
def _output_directory(out: str | Path, inputs: tuple, overwrite: bool) -> Iterator[tuple[Path, _Target]]:
    """:func:`deid_ds.io.output_dir.output_directory` whose destination may still become ``OUT.leaks`` in the block.

    ``OUT`` is checked and locked for the whole run; ``OUT.leaks``, when chosen, is checked by the same
    policy before the finished output is moved onto it.
    """
    from deid_ds.io.files import temporary_name
    from deid_ds.io.output_dir import check_output_dir, guarded_output, publish

    with guarded_output(out, "deidentify", inputs=inputs, overwrite=overwrite) as path:
        target = _Target(path)
        path.absolute().parent.mkdir(parents=True, exist_ok=True)
        tmp = path.absolute().with_name(temporary_name(path))
        tmp.mkdir()
        try:
            yield tmp, target
            if target.path != path:
                check_output_dir(target.path, "deidentify", inputs, overwrite)
            publish(tmp, target.path, "deidentify")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _run(
    source,
    by_document: dict[str, list[SpanIn]],
    out,
    options: DeidOptions,
    batch_size: int,
    workers: int,
    progress: bool,
    dropped: list[str] | None = None,
    fail_on_leak: bool = False,
    *,
    inputs: tuple = (),
    overwrite: bool = False,
) -> DeidentifyReport:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from tqdm import tqdm

    from deid_ds.deidentification.pools import load_pools
    from deid_ds.engine.parallel import ordered_map

    load_pools(options.kb)  # fail fast on an unreadable knowledge base, before any output exists
    report, leaks = new_report(options), LeakCounts()
    report.dropped_columns, report.fail_on_leak = list(dropped or ()), fail_on_leak
    started = time.perf_counter()
    seen_spans: set[str] = set()
    schema = _output_schema(source, options.keep_metadata, options.keep_columns)
    d_schema, a_schema = documents_schema(), audit_schema(options.audit_originals)
    with _output_directory(out, inputs, overwrite) as (tmp, target):
        writers = [
            pq.ParquetWriter(tmp / name, s)
            for name, s in (("notes.parquet", schema), ("documents.parquet", d_schema), ("audit.parquet", a_schema))
        ]
        try:
            jobs = _jobs(source, by_document, batch_size, options, seen_spans)
            with tqdm(total=source.num_notes, unit="note", desc="deidentify", disable=not progress) as bar:
                for batch in ordered_map(deidentify_batch, jobs, workers):
                    report.add(batch, leaks)
                    writers[0].write_table(_notes_table(batch, schema))
                    writers[1].write_table(pa.Table.from_pydict(batch.documents, schema=d_schema))
                    writers[2].write_table(pa.Table.from_pydict(batch.audit, schema=a_schema))
                    bar.update(len(batch.documents["id_document"]))
        finally:
            close_writers(writers)
        report.spans_for_unknown_documents = sum(len(v) for k, v in by_document.items() if k not in seen_spans)
        report.leaks = leaks.to_dict()
        report.seconds = time.perf_counter() - started
        if report.kept_aside:
            target.path = Path(leaks_path(out))
        report.written_to = str(target.path)
        (tmp / "report.json").write_text(
            json.dumps(report.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
    return report
