"""One batch of ``deidentify``: the per-batch work every engine runs (:func:`deidentify_batch`), its
options and tables, and the spans it is given (read, grouped by note and by patient).

Pure per batch (notes and their spans in, columns out): the stage (:mod:`.stage`) runs it in worker
processes or Spark executors, the pipeline (:mod:`.pipeline`) reads and writes around it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pyarrow as pa

from deid_ds.deidentification.context import Context, scope_of
from deid_ds.deidentification.document import SpanIn, deidentify_document
from deid_ds.deidentification.dp_accounting import SPENT, batch_spending, merge_spending
from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.leaks import LeakCounts, find_leaks
from deid_ds.deidentification.privacy import Privacy
from deid_ds.deidentification.surrogates import DEFAULT_MASK
from deid_ds.errors import InputError
from deid_ds.model import PATIENT_FIELDS, InvalidText, Note
from deid_ds.report import add_counts

DUPLICATE_REASON = "duplicate id_document (an earlier note of the input has the same id)"
#: A note with no id: no spans table can name it, so it would be written with nothing replaced.
MISSING_ID_REASON = "id_document is null (no spans can name the note: not de-identified)"

#: The status of a note written without any span given for it: its text as it was (its other views
#: de-identified, its leak check run), never reported ``ok``.
NO_SPANS = "no spans"


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
    keep_identifiers: bool = False  # leave the direct identifiers (NIR, IPP, RPPS...) as they are

    #: Spans predicted here for these very notes (``--model``): a note the model finds nothing in is ``ok``,
    #: not :data:`NO_SPANS` (which says the spans table has nothing for it).
    spans_predicted: bool = False
    #: Kept columns holding dates, shifted by each patient's offset (:mod:`.kept_columns`).
    date_columns: tuple[str, ...] = ()
    #: The surrogate policy of dates, ages and places (:mod:`.privacy`): the keyed shift unless ``dp``.
    privacy: Privacy = field(default_factory=Privacy)


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
    shifted: dict[str, list] = field(default_factory=dict)  # the date columns of the notes written, shifted
    spans: dict[str, int] = field(default_factory=dict)  # the spans replaced per label (text view)
    span_fallbacks: dict[str, int] = field(default_factory=dict)  # those masked, per "LABEL\treason"
    #: ``--privacy dp``: the ε spent per patient and value, both as HMACs (:mod:`.dp_accounting`).
    dp_spent: dict[str, dict] = field(default_factory=dict)


def documents_schema():
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
    from deid_ds.deidentification.dates_shift import move_date, shift_date_text
    from deid_ds.deidentification.kept_columns import shift_value
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
    result.shifted = {name: [] for name in options.date_columns}
    for position, (note, spans) in enumerate(zip(job.notes, job.spans)):
        error, outcome, leaks = None, None, LeakCounts()
        if position in job.duplicates:
            error = DUPLICATE_REASON
        elif note.id_missing:
            error = MISSING_ID_REASON
        elif note.html is None:
            error = "html is null"
        elif isinstance(note.html, InvalidText):
            error = note.html.reason
        else:
            scope = scope_of(note.id_patient, note.id_document)
            ctx = Context(options.keyring, pools, scope, note.patient, options.birthdate_year, privacy=options.privacy)
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
                    identifiers=not options.keep_identifiers,
                )
            except Exception as exc:
                error = f"internal error during de-identification ({type(exc).__name__})"
            else:
                error = outcome.error
        if error is None and outcome is not None:
            leaks = find_leaks(outcome.html, note.patient, outcome.identifiers)
            result.leaks.add(leaks)
            result.ok.append(position)
            for name, value in (
                ("id_document", note.id_document),
                ("id_patient", note.id_patient),
                ("doc_type", note.doc_type),
            ):
                result.kept[name].append(value)
            result.html.append(outcome.html)
            shift_text = partial(shift_date_text, ctx)
            for name in options.date_columns:
                value = job.extras.column(name)[position].as_py()
                result.shifted[name].append(shift_value(value, shift_text, partial(move_date, ctx, "full")))
            if options.keep_metadata == "surrogate":
                fake = surrogate_metadata(ctx)
                for name in PATIENT_FIELDS:
                    result.metadata[name].append(fake[name])
            if options.privacy.is_dp:
                spent = batch_spending(options.keyring, scope, ctx.memory.get(SPENT, {}))
                merge_spending(result.dp_spent, spent)
            for row in outcome.audit:
                row = {**row, "id_document": note.id_document, "id_patient": note.id_patient}
                for name, values in result.audit.items():
                    values.append(row.get(name))
            add_counts(result.per_label, outcome.per_label)
            add_counts(result.fallbacks, outcome.fallbacks)
            add_counts(result.spans, outcome.spans)
            add_counts(result.span_fallbacks, outcome.span_fallbacks)
            add_counts(result.per_view, outcome.per_view)
            add_counts(result.blanked, outcome.blanked)
        written = error is None and outcome is not None
        row = {
            "id_document": note.id_document,
            "id_patient": note.id_patient,
            "doc_type": note.doc_type,
            "status": "failed" if error is not None else NO_SPANS if not (spans or options.spans_predicted) else "ok",
            "error": error,
            "n_replacements": len(outcome.audit) if written else 0,
            "n_leaks": leaks.total if written and (leaks.checked or leaks.total) else None,
            "leak_check": None if not written else leak_status(leaks),
            "n_fallbacks": sum(outcome.fallbacks.values()) if written else 0,
        }
        for name, values in result.documents.items():
            values.append(row[name])
    return result


#: ``leak_check`` of a note whose patient has a metadata value the readers cannot read (:mod:`deid_ds.io.metadata`).
UNREADABLE = "metadata unreadable"


def leak_status(leaks: LeakCounts) -> str:
    """``documents.parquet``'s ``leak_check``: ``checked``, ``no metadata``, or :data:`UNREADABLE` (some
    value was not looked for: never reported as "0 left", whatever the other values gave)."""
    if leaks.unreadable:
        return UNREADABLE
    return "checked" if leaks.checked else "no metadata"


def notes_table(batch: BatchResult, schema):
    """The written notes as ``schema``: the ids back in the input's types, the kept date columns shifted, the
    other kept columns as they were."""
    from deid_ds.deidentification.kept_columns import typed_array

    columns = {**batch.kept, "html": batch.html, **batch.metadata}
    arrays = []
    for f in schema:
        if f.name in batch.kept:
            arrays.append(typed_array(batch.kept[f.name], f.type))
        elif f.name in columns:
            arrays.append(pa.array(columns[f.name], type=f.type))
        elif f.name in batch.shifted:
            arrays.append(pa.array(batch.shifted[f.name], type=f.type))
        else:
            arrays.append(batch.extras.column(f.name).take(pa.array(batch.ok, type=pa.int64())).cast(f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


# -------------------------------------------------------------------------------------------------- the spans


def read_spans_by_document(path: str | Path) -> dict[str, list[SpanIn]]:
    """A spans table (``weak-label``, ``predict``, gold: Parquet, JSONL or a directory) grouped by note."""
    from deid_ds.evaluation.evaluate import read_spans

    frame = read_spans(path)
    # Each column made a list once, checked then read: iterating a pandas column goes value by value through
    # pandas (0.144 → 0.085 s for 1,000 notes' spans: docs/benchmarks.md, *deidentify*).
    column = {name: frame[name].tolist() if name in frame.columns else [None] * len(frame) for name in _SPAN_FIELDS}
    for name in ("html_start", "html_end"):
        values = frame[name]
        if values.isna().any():
            raise InputError(f"{path}: column {name} has missing values (row {int(values.isna().to_numpy().argmax())})")
        not_integers = [not _integral(v) for v in column[name]]
        _refuse_rows(path, not_integers, f"column {name} holds offsets that are not integers")
    _refuse_rows(path, [not isinstance(x, str) or not x for x in column["label"]], "span(s) without a label")
    _refuse_rows(path, [not isinstance(d, str) for d in column["id_document"]], "span(s) without an id_document")
    by_document: dict[str, list[SpanIn]] = {}
    rows = zip(*(column[name] for name in _SPAN_FIELDS))
    for id_document, label, start, end, source, text in rows:
        text = text if isinstance(text, str) else None
        source = source if isinstance(source, str) else None
        by_document.setdefault(id_document, []).append(SpanIn(label, int(start), int(end), source, text))
    return by_document


_SPAN_FIELDS = ("id_document", "label", "html_start", "html_end", "source", "text")


def _integral(value: object) -> bool:
    """An offset: an integer, or a float that is one (``12.0``: a column pandas made float)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer()
    return isinstance(value, numbers.Integral)


def _refuse_rows(path, bad: list[bool], what: str) -> None:
    """One line naming how many rows are ``what`` and the first one (no span text): a span silently
    skipped or moved would leave an entity in the released note."""
    count = sum(bad)
    if count:
        raise InputError(f"{path}: {count} {what} (first at row {bad.index(True)}); fix the spans table")


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
