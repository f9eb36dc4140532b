"""Weak labelling of a notes table into training sets — ``deid-ds weak-label``.

Each note is parsed (:func:`~deid_ds.html_text.html_to_text`), segmented, and labelled by the
:class:`~deid_ds.label.labeller.WeakLabeller`; its entities get both offset pairs and its tokens BIO tags.

Output directory (the finished directory appears atomically: a failed run leaves the previous output,
or none):

* ``spans.parquet``: one row per entity (:func:`spans_schema`, shared with ``predict``);
* ``sentences.parquet`` and ``sentences.jsonl``: one row / line per kept sentence — ``text``,
  ``tokens`` (offsets in the sentence and in the HTML), ``tokens_parser`` (the tokens' HTML offsets, as
  the paper calls them), ``tags`` (BIO), ``spans`` (Prodigy-style), ``meta`` and ``split``: each JSONL
  line is a self-contained Prodigy task;
* ``train.txt``, ``dev.txt``, ``test.txt``: Flair column format (``token TAG``, blank line after each
  sentence);
* ``documents.parquet``: one row per input note — every note is accounted for (``ok``, ``empty``,
  ``failed`` with its reason) with its counts and split;
* ``report.json``: the totals of the printed tables (and the ``--gold`` scores).

**Kept sentences.** A sentence with an entity is always kept; one without is kept for a share
``keep_empty`` of them, chosen by a hash of the document id and sentence index, so that the choice is
the same whatever the batching, the worker count or the engine.

**Split.** By patient: every document of a patient lands in the same split. Patients (a note without
``id_patient`` is a group of its own, ``document:<id>``) are ranked by a hash keyed by ``seed`` and cut by
cumulative share, so the split depends only on the set of patient ids, the shares and the seed — not
on batching, workers or the order of the input — and a distributed engine can reproduce it (hash, sort,
rank).

**Resume.** The work happens in ``OUT.partial/`` next to ``OUT``: a ``state.json`` with a fingerprint of
the inputs (files, sizes, modification times), the column map, the options, the knowledge base
manifest and the labelling code, and one directory per finished input batch, each written atomically.
A restart with the same fingerprint skips the finished batches (batches are fixed slices of the input,
see :meth:`~deid_ds.notes_io.NotesSource.batch_lengths`); another fingerprint starts over. The split
and every split-dependent file are computed from the batch parts once all exist; then ``OUT`` is
replaced in one move and the work directory removed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import shutil
import sys
import time
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from deid_ds.defaults import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS
from deid_ds.errors import DeidError, DocumentError, InputError
from deid_ds.html_text import ParsedHtml
from deid_ds.io_utils import atomic_directory, atomic_write_text
from deid_ds.label.labeller import LabelConfig, WeakLabeller
from deid_ds.model import LABELS, Note
from deid_ds.notes_io import NotesSource, as_identifier, open_notes
from deid_ds.parallel import ordered_map, relaxed_gc
from deid_ds.segment import Segmenter, TokenSpans
from deid_ds.segment_notes import DocumentStatus, DocumentTotals, SegmentOptions, document_schema, segment_note, segmenter_for, token_offsets, token_ws

SPLITS: tuple[str, ...] = ("train", "dev", "test")
DEFAULT_SPLIT: tuple[float, float, float] = (0.8, 0.1, 0.1)
WORK_SUFFIX = ".partial"
STATE_FILE = "state.json"
STATE_FORMAT = "deid-ds-weak-label-work/1"
_PART = re.compile(r"batch-(\d{6})")
#: Modules whose code decides what a batch part holds: a restart after they changed starts over.
_CODE_MODULES = ("html_text.py", "offsets.py", "tokens.py", "punkt.py", "segment.py", "segment_notes.py", "weak_label.py")
#: Group of a note without ``id_patient``: its own document (it cannot share a split with anything).
NO_PATIENT_PREFIX = "document:"


# --------------------------------------------------------------------------------------------------
# Schemas


def spans_schema():
    """Schema of ``spans.parquet``: one row per entity. ``predict`` writes the same."""
    import pyarrow as pa

    return pa.schema(
        [
            ("id_document", pa.string()),
            ("id_patient", pa.string()),
            ("label", pa.string()),
            ("html_start", pa.int64()),
            ("html_end", pa.int64()),
            ("text_start", pa.int64()),
            ("text_end", pa.int64()),
            ("text", pa.string()),
            ("source", pa.string()),
        ]
    )


def sentences_schema(with_split: bool = True):
    """Schema of ``sentences.parquet`` (each row is also a line of ``sentences.jsonl``)."""
    import pyarrow as pa

    token = pa.struct(
        [
            ("text", pa.string()),
            ("start", pa.int64()),
            ("end", pa.int64()),
            ("html_start", pa.int64()),
            ("html_end", pa.int64()),
            ("id", pa.int32()),
            ("ws", pa.bool_()),
        ]
    )
    parser_token = pa.struct([("start", pa.int64()), ("end", pa.int64())])
    span = pa.struct(
        [
            ("start", pa.int64()),
            ("end", pa.int64()),
            ("token_start", pa.int32()),
            ("token_end", pa.int32()),
            ("label", pa.string()),
            ("source", pa.string()),
        ]
    )
    meta = pa.struct(
        [
            ("id_document", pa.string()),
            ("id_patient", pa.string()),
            ("doc_type", pa.string()),
            ("sentence_index", pa.int32()),
        ]
    )
    fields = [
        ("text", pa.string()),
        ("tokens", pa.list_(token)),
        ("tokens_parser", pa.list_(parser_token)),
        ("tags", pa.list_(pa.string())),
        ("spans", pa.list_(span)),
        ("meta", meta),
    ]
    if with_split:
        fields.append(("split", pa.string()))
    return pa.schema(fields)


def documents_schema(with_split: bool = True):
    """Schema of ``documents.parquet``: segment's, with the document type, the kept sentences, the
    entities and the split of each note."""
    import pyarrow as pa

    fields = list(document_schema())
    fields.insert(2, pa.field("doc_type", pa.string()))
    warnings = next(i for i, f in enumerate(fields) if f.name == "warnings")
    fields[warnings:warnings] = [pa.field("n_sentences_kept", pa.int32()), pa.field("n_entities", pa.int32())]
    if with_split:
        fields.append(pa.field("split", pa.string()))
    return pa.schema(fields)


def _gold_tokens_schema():
    import pyarrow as pa

    return pa.schema([("id_document", pa.string()), ("html_start", pa.int64()), ("html_end", pa.int64())])


# --------------------------------------------------------------------------------------------------
# Deterministic choices


def unit_hash(value: str, key: str = "") -> float:
    """A number in ``[0, 1)`` from a keyed BLAKE2b of ``value``: the same on every machine and engine."""
    digest = hashlib.blake2b(value.encode("utf-8"), digest_size=8, key=key.encode("utf-8")[:64]).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def keeps_empty_sentence(id_document: str, sentence_index: int, share: float) -> bool:
    """Whether a sentence without entity is kept, for a target ``share`` of them (no random state)."""
    if share <= 0.0:
        return False
    return share >= 1.0 or unit_hash(f"{id_document}\x00{sentence_index}", "keep-empty") < share


def patient_group(id_document: str, id_patient: str | None) -> str:
    """The unit of the split: the patient, or the document itself when the note names no patient."""
    return id_patient if id_patient is not None else NO_PATIENT_PREFIX + id_document


def assign_splits(groups: Iterable[str], shares: Sequence[float], seed: int = 0) -> dict[str, str]:
    """Split name of each group: groups ranked by a hash keyed by ``seed``, cut by cumulative share.

    Only the set of groups matters (duplicates and order are irrelevant), so the result is the same
    whatever the batching, the workers or the engine; with ``n`` groups, split ``k`` gets
    ``round(n * cumulative share)`` minus the previous boundary.
    """
    key = f"split:{seed}"
    ranked = sorted(set(groups), key=lambda group: (unit_hash(group, key), group))
    n = len(ranked)
    bounds, cumulative = [], 0.0
    for share in shares:
        cumulative += share
        bounds.append(min(n, math.floor(n * cumulative + 0.5)))
    bounds[-1] = n
    result: dict[str, str] = {}
    start = 0
    for name, end in zip(SPLITS, bounds):
        for group in ranked[start:end]:
            result[group] = name
        start = max(start, end)
    return result


def parse_split(value: str | Sequence[float]) -> tuple[float, float, float]:
    """``"0.8,0.1,0.1"`` (or a sequence) → three shares in ``[0, 1]`` summing to 1, else :class:`InputError`."""
    if isinstance(value, str):
        try:
            shares = tuple(float(part) for part in value.split(","))
        except ValueError:
            raise InputError(f"--split {value!r}: expected three numbers such as 0.8,0.1,0.1") from None
    else:
        shares = tuple(float(part) for part in value)
    if len(shares) != 3 or any(not 0.0 <= share <= 1.0 for share in shares):
        raise InputError(f"--split {value!r}: expected three shares between 0 and 1 (train,dev,test)")
    if abs(sum(shares) - 1.0) > 1e-6:
        raise InputError(f"--split {value!r}: the shares sum to {sum(shares):g}, not 1")
    return shares  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------------
# One note


@dataclass(frozen=True)
class WeakLabelOptions:
    """What a worker needs to label a batch exactly as the parent would (picklable)."""

    segment: SegmentOptions
    label: LabelConfig
    keep_empty: float = 0.0


_LABELLERS: dict[LabelConfig, WeakLabeller] = {}


def labeller_for(config: LabelConfig) -> WeakLabeller:
    """One labeller per process and configuration (the knowledge base's matcher is loaded once)."""
    labeller = _LABELLERS.get(config)
    if labeller is None:
        labeller = WeakLabeller.from_kb(config.kb_dir, use_metadata=config.use_metadata)
        _LABELLERS[config] = labeller
    return labeller


def token_ranges(candidates: Sequence, starts: Sequence[int], ends: Sequence[int]) -> list[tuple[int, int]]:
    """Index of the first and last token of each candidate.

    The labeller promises sorted, non-overlapping, token-aligned spans; BIO tags are only well formed
    if that holds, so a broken promise fails the note (with a reason) instead of writing bad data.
    """
    ranges: list[tuple[int, int]] = []
    previous_last = -1
    n = len(starts)
    for candidate in candidates:
        first = bisect_left(starts, candidate.start)
        last = bisect_left(ends, candidate.end)
        if first >= n or last >= n or starts[first] != candidate.start or ends[last] != candidate.end:
            raise DocumentError("labeller returned a span not aligned to tokens")
        if last < first or first <= previous_last:
            raise DocumentError("labeller returned overlapping or unsorted spans")
        ranges.append((first, last))
        previous_last = last
    return ranges


@dataclass
class LabelledNote:
    """One note after labelling: its status and, when it went through, what the outputs need."""

    status: DocumentStatus
    parsed: ParsedHtml | None = None
    compact: TokenSpans | None = None
    candidates: list = field(default_factory=list)
    ranges: list[tuple[int, int]] = field(default_factory=list)


def label_note(note: Note, segmenter: Segmenter, labeller: WeakLabeller, use_metadata: bool = True) -> LabelledNote:
    """Parse, segment and label one note; never raises for a bad note, the status says what happened.

    Reasons name the stage and the exception type only: an exception's message may quote the note.
    """
    status, parsed, compact = segment_note(note, segmenter)
    if compact is None or not compact.starts:
        return LabelledNote(status, parsed, compact)
    try:
        candidates = labeller.label(parsed.text, list(zip(compact.starts, compact.ends)), note.patient if use_metadata else None)
        ranges = token_ranges(candidates, compact.starts, compact.ends)
    except DocumentError as error:
        return LabelledNote(_failed(status, str(error)))
    except Exception as error:  # noqa: BLE001 - one bad note must not stop the run
        return LabelledNote(_failed(status, f"internal error during labelling ({type(error).__name__})"))
    return LabelledNote(status, parsed, compact, candidates, ranges)


def _failed(status: DocumentStatus, reason: str) -> DocumentStatus:
    """A note that segmented but could not be labelled: it contributes nothing, so no counts."""
    return DocumentStatus(status.id_document, status.id_patient, "failed", reason, status.n_chars, 0, 0, status.warnings)


def bio_tags(n_tokens: int, ranges: Sequence[tuple[int, int]], labels: Sequence[str]) -> list[str]:
    """Per-token BIO tags of a note: ``B-LABEL`` on an entity's first token, ``I-LABEL`` on the next."""
    tags = ["O"] * n_tokens
    for (first, last), label in zip(ranges, labels):
        tags[first] = "B-" + label
        for i in range(first + 1, last + 1):
            tags[i] = "I-" + label
    return tags


# --------------------------------------------------------------------------------------------------
# One batch → one part directory


class BatchColumns:
    """The tables of one batch part, filled note by note as flat lists and turned into Arrow at once."""

    TOKEN_FIELDS = ("text", "start", "end", "html_start", "html_end", "id", "ws")
    SPAN_FIELDS = ("start", "end", "token_start", "token_end", "label", "source")
    META_FIELDS = ("id_document", "id_patient", "doc_type", "sentence_index")

    def __init__(self, gold_ids: frozenset[str] | None = None) -> None:
        self.documents: dict[str, list] = {name: [] for name in documents_schema(with_split=False).names}
        self.spans: dict[str, list] = {name: [] for name in spans_schema().names}
        self.text: list[str] = []
        self.meta: dict[str, list] = {name: [] for name in self.META_FIELDS}
        self.token: dict[str, list] = {name: [] for name in self.TOKEN_FIELDS}
        self.tags: list[str] = []
        self.token_offsets: list[int] = [0]
        self.span: dict[str, list] = {name: [] for name in self.SPAN_FIELDS}
        self.span_offsets: list[int] = [0]
        self.gold_ids = gold_ids
        self.gold_tokens: dict[str, list] = {name: [] for name in ("id_document", "html_start", "html_end")}

    def add(self, note: Note, labelled: LabelledNote, keep_empty: float) -> None:
        """Add one note: its document row and, when it was labelled, its entities and kept sentences."""
        status = labelled.status
        kept = entities = 0
        if status.status == "ok" and labelled.compact is not None:
            kept = self._add_content(note, labelled, keep_empty)
            entities = len(labelled.candidates)
        row = {
            **{name: getattr(status, name) for name in ("id_document", "id_patient", "status", "error", "n_chars", "n_sentences", "n_tokens")},
            "doc_type": note.doc_type,
            "n_sentences_kept": kept,
            "n_entities": entities,
            "warnings": json.dumps(status.warnings, sort_keys=True),
        }
        for name, values in self.documents.items():
            values.append(row[name])

    def _add_content(self, note: Note, labelled: LabelledNote, keep_empty: float) -> int:
        parsed, compact, candidates = labelled.parsed, labelled.compact, labelled.candidates
        text = parsed.text
        starts, ends, html_starts, html_ends = (a.tolist() for a in token_offsets(parsed, compact))
        self._add_spans(note, parsed, candidates)
        if self.gold_ids is not None and note.id_document in self.gold_ids:
            self.gold_tokens["id_document"].extend([note.id_document] * len(starts))
            self.gold_tokens["html_start"].extend(html_starts)
            self.gold_tokens["html_end"].extend(html_ends)
        labels = [c.label for c in candidates]
        tags = bio_tags(len(starts), labelled.ranges, labels)
        ws = token_ws(text, compact.ends)
        bounds = compact.bounds
        kept = 0
        c = 0  # first candidate that may reach the current sentence (both lists are sorted)
        for index in range(len(bounds) - 1):
            a, b = bounds[index], bounds[index + 1]
            while c < len(labelled.ranges) and labelled.ranges[c][1] < a:
                c += 1
            inside = []
            k = c
            while k < len(labelled.ranges) and labelled.ranges[k][0] < b:
                inside.append(k)
                k += 1
            if not inside and not keeps_empty_sentence(note.id_document, index, keep_empty):
                continue
            kept += 1
            offset = starts[a]
            self.text.append(text[offset : ends[b - 1]])
            for name, value in zip(self.META_FIELDS, (note.id_document, note.id_patient, note.doc_type, index)):
                self.meta[name].append(value)
            token = self.token
            token["text"].extend([text[s:e] for s, e in zip(starts[a:b], ends[a:b])])
            token["start"].extend([s - offset for s in starts[a:b]])
            token["end"].extend([e - offset for e in ends[a:b]])
            token["html_start"].extend(html_starts[a:b])
            token["html_end"].extend(html_ends[a:b])
            token["id"].extend(range(b - a))
            token["ws"].extend(ws[a:b])
            sentence_tags = tags[a:b]
            if sentence_tags[0].startswith("I-"):  # an entity cut by the sentence boundary restarts here
                sentence_tags[0] = "B-" + sentence_tags[0][2:]
            self.tags.extend(sentence_tags)
            self.token_offsets.append(self.token_offsets[-1] + b - a)
            for k in inside:
                first, last = max(labelled.ranges[k][0], a), min(labelled.ranges[k][1], b - 1)
                values = (starts[first] - offset, ends[last] - offset, first - a, last - a, candidates[k].label, candidates[k].source)
                for name, value in zip(self.SPAN_FIELDS, values):
                    self.span[name].append(value)
            self.span_offsets.append(self.span_offsets[-1] + len(inside))
        return kept

    def _add_spans(self, note: Note, parsed: ParsedHtml, candidates: Sequence) -> None:
        text = parsed.text
        spans = self.spans
        for candidate in candidates:
            html_start, html_end = parsed.html_span(candidate.start, candidate.end)
            values = (note.id_document, note.id_patient, candidate.label, html_start, html_end, candidate.start, candidate.end, text[candidate.start : candidate.end], candidate.source)
            for values_list, value in zip(spans.values(), values):
                values_list.append(value)

    def write(self, directory: Path) -> None:
        """Write the part's tables (always all of them, empty or not, so that readers need no case)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pydict(self.documents, schema=documents_schema(with_split=False)), directory / "documents.parquet")
        pq.write_table(pa.Table.from_pydict(self.spans, schema=spans_schema()), directory / "spans.parquet")
        sentences = self._sentences_table()
        pq.write_table(sentences, directory / "sentences.parquet")
        pq.write_table(render_lines(sentences), directory / "lines.parquet")
        if self.gold_ids is not None:
            pq.write_table(pa.Table.from_pydict(self.gold_tokens, schema=_gold_tokens_schema()), directory / "gold_tokens.parquet")

    def _sentences_table(self):
        import pyarrow as pa

        schema = sentences_schema(with_split=False)
        token_offsets = pa.array(self.token_offsets, type=pa.int32())
        tokens = _list_of_structs(token_offsets, self.token, schema.field("tokens").type)
        parser = _list_of_structs(token_offsets, {"start": self.token["html_start"], "end": self.token["html_end"]}, schema.field("tokens_parser").type)
        tags = pa.ListArray.from_arrays(token_offsets, pa.array(self.tags, type=pa.string()))
        spans = _list_of_structs(pa.array(self.span_offsets, type=pa.int32()), self.span, schema.field("spans").type)
        meta_type = schema.field("meta").type
        meta = pa.StructArray.from_arrays([pa.array(self.meta[f.name], type=f.type) for f in meta_type], fields=list(meta_type))
        text = pa.array(self.text, type=pa.string())
        return pa.Table.from_arrays([text, tokens, parser, tags, spans, meta], schema=schema)


def render_lines(sentences):
    """Each sentence's JSONL line (without its split) and Flair block, rendered by the worker.

    Text rendering is most of the cost of writing the outputs; done per batch in the workers, it leaves
    the single-process assembly only the split to append (:func:`jsonl_line`) and files to route to.
    """
    import pyarrow as pa

    bodies, blocks = [], []
    for row in sentences.to_pylist():
        bodies.append(json.dumps(row, ensure_ascii=False))
        blocks.append("".join(f"{flair_token(token['text'])} {tag}\n" for token, tag in zip(row["tokens"], row["tags"])) + "\n")
    return pa.table({"jsonl": pa.array(bodies, type=pa.string()), "flair": pa.array(blocks, type=pa.string())})


def jsonl_line(body: str, split: str) -> str:
    """A sentence's JSON object (as rendered by :func:`render_lines`) with its split as last key."""
    return f'{body[:-1]}, "split": {json.dumps(split)}}}\n'


def flair_token(text: str) -> str:
    """A token as one Flair column: whitespace inside it becomes ``_``, and it is never empty."""
    return re.sub(r"\s", "_", text) or "_"


def _list_of_structs(offsets, columns: Mapping[str, list], list_type):
    """A ``list<struct>`` Arrow array from flat per-field lists and list offsets (no row dicts)."""
    import pyarrow as pa

    struct_type = list_type.value_type
    values = pa.StructArray.from_arrays([pa.array(columns[f.name], type=f.type) for f in struct_type], fields=list(struct_type))
    return pa.ListArray.from_arrays(offsets, values)


@dataclass(frozen=True)
class BatchJob:
    """One input batch to label into ``work/batch-NNNNNN`` (picklable: sent to worker processes)."""

    index: int
    notes: list[Note]
    options: WeakLabelOptions
    work: str
    gold_ids: frozenset[str] | None = None


def part_name(index: int) -> str:
    return f"batch-{index:06d}"


def label_batch(job: BatchJob) -> int:
    """Label one batch and write its part atomically; returns the number of notes (for progress)."""
    segmenter = segmenter_for(job.options.segment)
    labeller = labeller_for(job.options.label)
    use_metadata = job.options.label.use_metadata
    columns = BatchColumns(job.gold_ids)
    with relaxed_gc():
        for note in job.notes:
            columns.add(note, label_note(note, segmenter, labeller, use_metadata), job.options.keep_empty)
    with atomic_directory(Path(job.work) / part_name(job.index)) as tmp:
        columns.write(tmp)
    return len(job.notes)


# --------------------------------------------------------------------------------------------------
# The work directory: fingerprint, resume


def work_directory(out: str | Path) -> Path:
    """Where an unfinished run keeps its state and batch parts: ``OUT.partial`` next to ``OUT``."""
    out = Path(out).absolute()
    return out.with_name(out.name + WORK_SUFFIX)


def _file_identity(path: str | Path) -> dict[str, object]:
    stat = Path(path).stat()
    return {"path": str(Path(path).resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


@functools.cache
def _code_digest() -> str:
    """Digest of the code that decides a part's content: labelling rules, parser, segmenter, this module.

    Computed once per process: the code a process runs is the code it loaded, whatever is edited later.
    """
    package = Path(__file__).resolve().parent
    files = sorted((package / "label").rglob("*.py")) + [package / name for name in _CODE_MODULES]
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.relative_to(package).as_posix().encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def run_fingerprint(source: NotesSource, options: WeakLabelOptions, batch_size: int, gold: str | Path | None) -> dict:
    """Everything a batch part depends on: a restart resumes only when all of it is unchanged."""
    from deid_ds import __version__

    kb = options.label.kb_dir
    punkt = options.segment.punkt_path
    fingerprint = {
        "version": __version__,
        "code": _code_digest(),
        "input": {"kind": source.kind, "files": [_file_identity(f) for f in source.files], "columns": source.columns},
        "batch_size": batch_size,
        "segment": {"punkt": _file_identity(punkt) if punkt else None, "max_tokens": options.segment.max_tokens},
        "label": {
            "kb": kb,
            "kb_manifest_sha256": hashlib.sha256((Path(kb) / "manifest.json").read_bytes()).hexdigest() if kb else None,
            "use_metadata": options.label.use_metadata,
        },
        "keep_empty": options.keep_empty,
        "gold": _file_identity(gold) if gold else None,
    }
    return json.loads(json.dumps(fingerprint))  # the form it has once read back from state.json


def prepare_work(work: Path, fingerprint: dict, n_batches: int, log: Callable[[str], None]) -> set[int]:
    """Open (or create) the work directory; returns the indices of the batches already done."""
    state_path = work / STATE_FILE
    if work.exists():
        try:
            state = json.loads(state_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            state = {}
        if state.get("format") == STATE_FORMAT and state.get("fingerprint") == fingerprint and state.get("batches") == n_batches:
            done = {int(m.group(1)) for p in work.iterdir() if p.is_dir() and (m := _PART.fullmatch(p.name))}
            done &= set(range(n_batches))
            log(f"resuming: {len(done)} of {n_batches} batches done (work directory {work})")
            return done
        changed = sorted(k for k in fingerprint if state.get("fingerprint", {}).get(k) != fingerprint[k]) or ["state"]
        log(f"starting over: {', '.join(changed)} changed since the interrupted run (work directory {work})")
        shutil.rmtree(work)
    work.mkdir(parents=True)
    atomic_write_text(state_path, json.dumps({"format": STATE_FORMAT, "fingerprint": fingerprint, "batches": n_batches}, indent=1) + "\n")
    return set()


# --------------------------------------------------------------------------------------------------
# Report


@dataclass
class WeakLabelReport(DocumentTotals):
    """Totals of a ``weak-label`` run (what ``report.json`` holds and the command prints).

    ``written``: documents with at least one kept sentence; ``splits``: per split, the patients,
    documents and sentences written and the entities of its documents.
    """

    written: int = 0
    documents_without_patient: int = 0
    sentences_kept: int = 0
    sentences_kept_without_entity: int = 0
    entities: int = 0
    entities_per_label: dict[str, int] = field(default_factory=dict)
    entities_per_source: dict[str, int] = field(default_factory=dict)
    entities_per_label_and_split: dict[str, dict[str, int]] = field(default_factory=dict)
    splits: dict[str, dict[str, int]] = field(default_factory=dict)
    split_shares: list[float] = field(default_factory=lambda: list(DEFAULT_SPLIT))
    seed: int = 0
    batches: int = 0
    batches_resumed: int = 0
    notes_per_second: float = 0.0
    gold: dict | None = None
    gold_table: str | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        """What ``report.json`` holds (the gold table is printed; its figures are under ``gold``)."""
        data = asdict(self)
        data.pop("gold_table")
        return data


def _label_order(labels: Iterable[str]) -> list[str]:
    return sorted(labels, key=lambda label: (LABELS.index(label) if label in LABELS else len(LABELS), label))


def report_table(report: WeakLabelReport) -> str:
    """The tables printed at the end of ``deid-ds weak-label`` (entity counts: the paper's Table 5)."""
    from deid_ds.report import format_table

    rows: list[list[object]] = [
        ["documents read", report.documents],
        ["  written (kept sentences)", report.written],
        ["  ok", report.ok],
        ["  empty (no text)", report.empty],
        ["  failed", report.failed],
        ["  without id_patient", report.documents_without_patient],
        ["sentences", report.sentences],
        ["  kept", report.sentences_kept],
        ["  kept without entity", report.sentences_kept_without_entity],
        ["entities", report.entities],
        ["batches (resumed)", f"{report.batches} ({report.batches_resumed})"],
        ["seconds", report.seconds],
        ["notes/s", report.notes_per_second],
    ]
    rows += [[f"failure: {reason}", n] for reason, n in sorted(report.failures.items())]
    tables = [format_table(["weak-label", "count"], rows)]
    split_rows = [[name, *(report.splits.get(name, {}).get(k, 0) for k in ("patients", "documents", "sentences", "entities"))] for name in SPLITS]
    tables.append(format_table(["split", "patients", "documents", "sentences", "entities"], split_rows))
    per_split = report.entities_per_label_and_split
    label_rows = [[label, *(per_split.get(label, {}).get(s, 0) for s in SPLITS), report.entities_per_label[label]] for label in _label_order(report.entities_per_label)]
    tables.append(format_table(["label", *SPLITS, "total"], label_rows))
    source_rows = [[source, n] for source, n in sorted(report.entities_per_source.items(), key=lambda item: (-item[1], item[0]))]
    tables.append(format_table(["source", "entities"], source_rows))
    return "\n\n".join(tables)


# --------------------------------------------------------------------------------------------------
# Assembly of the final directory


def _part_tables(work: Path, n_batches: int, name: str) -> Iterator:
    import pyarrow.parquet as pq

    for index in range(n_batches):
        yield pq.read_table(work / part_name(index) / name)


def _concat_parts(work: Path, n_batches: int, name: str, schema):
    import pyarrow as pa

    tables = list(_part_tables(work, n_batches, name))
    return pa.concat_tables(tables) if tables else schema.empty_table()


def _write_sentences(work: Path, n_batches: int, tmp: Path, doc_split: Mapping[str, str]) -> tuple[dict[str, int], int]:
    """Stream the parts' sentences into the Parquet, JSONL and Flair outputs.

    Returns the number of sentences per split and the number of kept sentences without entity.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    schema = sentences_schema()
    counts: Counter[str] = Counter()
    without_entity = 0
    writer = pq.ParquetWriter(tmp / "sentences.parquet", schema)
    handles = {name: (tmp / f"{name}.txt").open("w", encoding="utf-8") for name in SPLITS}
    try:
        with (tmp / "sentences.jsonl").open("w", encoding="utf-8") as jsonl:
            for index in range(n_batches):
                part = pq.read_table(work / part_name(index) / "sentences.parquet")
                lines = pq.read_table(work / part_name(index) / "lines.parquet")
                splits = [doc_split[d] for d in pc.struct_field(part.column("meta"), "id_document").to_pylist()]
                writer.write_table(part.append_column(schema.field("split"), pa.array(splits, type=pa.string())))
                for body, block, split in zip(lines.column("jsonl").to_pylist(), lines.column("flair").to_pylist(), splits):
                    jsonl.write(jsonl_line(body, split))
                    handles[split].write(block)
                counts.update(splits)
                without_entity += pc.sum(pc.equal(pc.list_value_length(part.column("spans")), 0)).as_py() or 0
    finally:
        writer.close()
        for handle in handles.values():
            handle.close()
    return dict(counts), without_entity


@dataclass
class _SpanTotals:
    """Entity counts gathered while the spans are streamed to ``spans.parquet``."""

    entities: int = 0
    per_label: Counter = field(default_factory=Counter)
    per_source: Counter = field(default_factory=Counter)
    per_label_and_split: Counter = field(default_factory=Counter)
    per_split: Counter = field(default_factory=Counter)
    evaluated: list = field(default_factory=list)  # the gold documents' spans, when there is a gold


def _write_spans(work: Path, n_batches: int, tmp: Path, doc_split: Mapping[str, str], gold_ids: frozenset[str] | None) -> _SpanTotals:
    """Stream the parts' spans into ``spans.parquet`` (a national corpus has tens of millions)."""
    import pyarrow.parquet as pq

    totals = _SpanTotals()
    with pq.ParquetWriter(tmp / "spans.parquet", spans_schema()) as writer:
        for part in _part_tables(work, n_batches, "spans.parquet"):
            writer.write_table(part)
            frame = part.select(["id_document", "label", "source"]).to_pandas()
            splits = frame["id_document"].map(doc_split)
            totals.entities += len(frame)
            totals.per_label.update(frame["label"].value_counts().to_dict())
            totals.per_source.update(frame["source"].value_counts().to_dict())
            totals.per_split.update(splits.value_counts().to_dict())
            totals.per_label_and_split.update(frame.groupby([frame["label"], splits]).size().to_dict())
            if gold_ids is not None:
                totals.evaluated.append(part.to_pandas().loc[lambda spans: spans["id_document"].isin(gold_ids)])
    return totals


@dataclass(frozen=True)
class _Run:
    """What the assembly needs to know of the run that produced the parts."""

    work: Path
    n_batches: int
    n_notes: int
    shares: tuple[float, float, float]
    seed: int
    started: float
    labelled: int


def _assemble(run: _Run, out: Path, gold_frame, report: WeakLabelReport) -> None:
    """Build OUT from the batch parts (split, split-dependent files, report) and swap it in."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    work, n_batches = run.work, run.n_batches
    documents = _concat_parts(work, n_batches, "documents.parquet", documents_schema(with_split=False))
    if documents.num_rows != run.n_notes:  # pragma: no cover - a reader bug or a damaged part, never silent
        raise RuntimeError(f"the batch parts hold {documents.num_rows} notes but the input declares {run.n_notes}")
    ids, patients = documents.column("id_document").to_pylist(), documents.column("id_patient").to_pylist()
    groups = [patient_group(d, p) for d, p in zip(ids, patients)]
    group_split = assign_splits(groups, run.shares, run.seed)
    doc_split = {d: group_split[g] for d, g in zip(ids, groups)}
    documents = documents.append_column(documents_schema().field("split"), pa.array([group_split[g] for g in groups], type=pa.string()))
    gold_ids = frozenset(gold_frame["id_document"]) if gold_frame is not None else None
    with atomic_directory(out) as tmp:
        pq.write_table(documents, tmp / "documents.parquet")
        spans = _write_spans(work, n_batches, tmp, doc_split, gold_ids)
        sentences_per_split, report.sentences_kept_without_entity = _write_sentences(work, n_batches, tmp, doc_split)
        frame = documents.to_pandas().assign(group=groups)
        _fill_report(report, frame, spans, sentences_per_split)
        if gold_frame is not None:
            tokens = _concat_parts(work, n_batches, "gold_tokens.parquet", _gold_tokens_schema()).to_pandas()
            _score_gold(report, gold_frame, frame, spans, tokens)
        report.seconds = time.perf_counter() - run.started
        report.notes_per_second = run.labelled / report.seconds if report.seconds else 0.0
        (tmp / "report.json").write_text(json.dumps(report.to_dict(), indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def _fill_report(report: WeakLabelReport, documents, spans: _SpanTotals, sentences_per_split: Mapping[str, int]) -> None:
    status = documents["status"].value_counts()
    report.documents = len(documents)
    report.ok, report.empty, report.failed = (int(status.get(name, 0)) for name in ("ok", "empty", "failed"))
    report.failures = {str(k): int(v) for k, v in documents["error"].dropna().value_counts().items()}
    report.documents_without_patient = int(documents["id_patient"].isna().sum())
    report.sentences = int(documents["n_sentences"].sum())
    report.sentences_kept = int(documents["n_sentences_kept"].sum())
    report.tokens = int(documents["n_tokens"].sum())
    report.entities = spans.entities
    report.entities_per_label = {str(k): int(v) for k, v in spans.per_label.items()}
    report.entities_per_source = {str(k): int(v) for k, v in spans.per_source.items()}
    report.entities_per_label_and_split = {}
    for (label, name), n in sorted(spans.per_label_and_split.items()):
        report.entities_per_label_and_split.setdefault(str(label), {})[str(name)] = int(n)
    written = documents[documents["n_sentences_kept"] > 0]
    report.written = len(written)
    report.splits = {
        name: {
            "patients": int(written.loc[written["split"] == name, "group"].nunique()),
            "documents": int((written["split"] == name).sum()),
            "sentences": int(sentences_per_split.get(name, 0)),
            "entities": int(spans.per_split.get(name, 0)),
        }
        for name in SPLITS
    }


# --------------------------------------------------------------------------------------------------
# Gold


def read_gold(path: str | Path):
    """Gold spans (Parquet or JSONL): ``id_document``, ``label``, ``html_start``, ``html_end`` (+ ``text``)."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: gold file not found")
    try:
        if path.suffix.lower() in (".jsonl", ".json"):
            frame = pd.read_json(path, lines=True, dtype={"id_document": str})
        else:
            frame = pd.read_parquet(path)
    except Exception as error:  # noqa: BLE001 - readers raise many types for a wrong file
        raise InputError(f"{path}: not a readable gold file (Parquet or JSONL; {type(error).__name__})") from None
    missing = [c for c in ("id_document", "label", "html_start", "html_end") if c not in frame.columns]
    if missing:
        raise InputError(f"{path}: gold column(s) {', '.join(missing)} not found (columns: {', '.join(map(str, frame.columns))})")
    frame = frame.copy()
    frame["id_document"] = [as_identifier(v) for v in frame["id_document"]]
    frame["label"] = frame["label"].astype(str)
    frame["html_start"] = frame["html_start"].astype("int64")
    frame["html_end"] = frame["html_end"].astype("int64")
    return frame


def _score_gold(report: WeakLabelReport, gold, documents, spans: _SpanTotals, tokens) -> None:
    """Score the predicted spans on the notes of the input that the gold file covers.

    A gold document missing from the input is left out (and counted); an input note of the gold that
    failed is evaluated with no prediction, so its entities count as missed.
    """
    import pandas as pd

    from deid_ds.scoring import score_spans

    input_ids = set(documents["id_document"])
    gold_ids = set(gold["id_document"])
    evaluated = sorted(gold_ids & input_ids)
    predicted = pd.concat(spans.evaluated, ignore_index=True) if spans.evaluated else spans_schema().empty_table().to_pandas()
    gold_in = gold[gold["id_document"].isin(input_ids)].reset_index(drop=True)
    chosen = documents[documents["id_document"].isin(gold_ids)]
    doc_types = dict(zip(chosen["id_document"], chosen["doc_type"])) if chosen["doc_type"].notna().any() else None
    scores = score_spans(gold_in, predicted, tokens=tokens, documents=evaluated, doc_types=doc_types)
    report.gold = {"documents": len(evaluated), "gold_documents_not_in_input": len(gold_ids - input_ids), **scores.to_dict()}
    report.gold_table = scores.table()


# --------------------------------------------------------------------------------------------------
# The command's function


def _check_kb(kb: str | Path | None) -> str | None:
    """The knowledge base directory, resolved, after checking it was built (manifest present)."""
    if kb is None:
        return None
    from deid_ds.kb.build import read_manifest

    path = Path(kb)
    if not path.is_dir():
        raise InputError(f"{path}: knowledge base directory not found (build one with deid-ds build-kb --out {path})")
    read_manifest(path)
    return str(path.resolve())


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def weak_label(
    notes: str | Path,
    out: str | Path,
    *,
    kb: str | Path | None = None,
    column_map: Mapping[str, str] | None = None,
    punkt: str | Path | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int = 1,
    keep_empty: float = 0.0,
    split: str | Sequence[float] = DEFAULT_SPLIT,
    seed: int = 0,
    gold: str | Path | None = None,
    use_metadata: bool = True,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> WeakLabelReport:
    """Label every note of ``notes`` into training sets in ``out`` (see the module docstring).

    ``log`` receives the resume messages (default: standard error when ``progress`` is on).
    """
    from tqdm import tqdm

    log = log or (_stderr if progress else (lambda message: None))
    shares = parse_split(split)
    if not 0.0 <= keep_empty <= 1.0:
        raise InputError(f"--keep-empty {keep_empty}: expected a share between 0 and 1")
    if batch_size < 1 or workers < 1:
        raise InputError("batch size and workers must be at least 1")
    source = open_notes(notes, column_map)
    options = WeakLabelOptions(
        SegmentOptions(str(Path(punkt).resolve()) if punkt else None, max_tokens),
        LabelConfig(_check_kb(kb), use_metadata),
        keep_empty,
    )
    gold_frame = None
    if gold is not None:
        gold_frame = read_gold(gold)
        try:
            import deid_ds.scoring  # noqa: F401 - checked before hours of labelling, not after
        except ImportError:
            raise DeidError("--gold needs deid_ds.scoring, which this installation lacks") from None
    segmenter_for(options.segment)  # fail fast on a bad Punkt file
    labeller_for(options.label)  # ...and build the matcher cache once, before workers race for it
    started = time.perf_counter()
    lengths = source.batch_lengths(batch_size)
    work = work_directory(out)
    done = prepare_work(work, run_fingerprint(source, options, batch_size, gold), len(lengths), log)
    gold_ids = frozenset(gold_frame["id_document"]) if gold_frame is not None else None
    jobs = (
        BatchJob(index, batch, options, str(work), gold_ids)
        for index, batch in enumerate(source.iter_batches(batch_size))
        if index not in done
    )
    labelled = 0
    already = sum(lengths[i] for i in done)
    with tqdm(total=source.num_notes, initial=already, unit="note", desc="weak-label", disable=not progress) as bar:
        for n in ordered_map(label_batch, jobs, workers):
            labelled += n
            bar.update(n)
    report = WeakLabelReport(split_shares=list(shares), seed=seed, batches=len(lengths), batches_resumed=len(done))
    run = _Run(work, len(lengths), source.num_notes, shares, seed, started, labelled)
    _assemble(run, Path(out), gold_frame, report)
    shutil.rmtree(work, ignore_errors=True)
    return report
