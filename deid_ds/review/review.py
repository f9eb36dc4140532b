"""Choosing the notes to review and de-identifying them as ``deidentify`` does (:func:`review`).

The de-identified side comes from :func:`deid_ds.deidentification.batch.deidentify_batch`, the very
function every ``deidentify`` run applies to its batches, with the spans of each patient's other notes
taken into account as there: with the same ``key`` (``--key`` or ``DEID_DS_KEY``), the surrogates shown
are those of the released corpus.

Both sides are shown as the notes' extracted **text** (:func:`deid_ds.segmentation.html_text.html_to_text`,
what the labeller and the model read), with the entities highlighted at their positions in that text,
rather than as the notes' own HTML: a note's markup may hold scripts, remote images or styles that
would run, load or break the page, and sanitising it would lose the exact correspondence between the
spans and what is shown. What the text does not show (a title, a comment, an attribute) is handled by
``deidentify`` under its ``hidden`` policy and listed under each note: where, the label, what was there
and what replaced it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from deid_ds.deidentification.batch import (
    DeidJob,
    DeidOptions,
    deidentify_batch,
    read_spans_by_document,
    scope_entities,
)
from deid_ds.deidentification.context import scope_of
from deid_ds.deidentification.keyed import resolve_key
from deid_ds.deidentification.surrogates import DEFAULT_MASK, MODES, check_mask_format
from deid_ds.errors import InputError
from deid_ds.io.notes import open_notes

#: Notes drawn when neither documents nor a sample size is given: a page one can read in a sitting.
DEFAULT_SAMPLE = 10


@dataclass
class ReviewedNote:
    """One note of the page: both texts and their highlighted ranges (offsets into each text)."""

    id_document: str
    doc_type: str | None
    original: str
    original_spans: list[tuple[int, int, str]]
    deidentified: str | None  # None when the note could not be de-identified safely (``error`` says why)
    deidentified_spans: list[tuple[int, int, str]] = field(default_factory=list)
    error: str | None = None
    other_views: int = 0  # changes outside the visible text (title, comments, attributes, scripts emptied...)
    #: Those changes, to be seen too: ``(view, label or None for blanked content, original, replacement)``.
    other_changes: list[tuple[str, str | None, str, str]] = field(default_factory=list)


@dataclass
class ReviewResult:
    """What :func:`review` wrote."""

    path: Path
    mode: str
    key_origin: str
    notes: list[ReviewedNote]

    @property
    def failed(self) -> int:
        return sum(n.deidentified is None for n in self.notes)


def choose_documents(
    identifiers: Sequence[str], documents: Sequence[str] | None = None, sample: int | None = None, seed: int = 0
) -> list[str]:
    """The notes to review, in the input's order: ``documents`` (all must exist), else ``sample`` drawn at random.

    The draw is reproducible (``seed``) and uniform over the notes of the input, with or without
    entities: a release review must see the notes where nothing was found, too.
    """
    known = list(dict.fromkeys(identifiers))
    if documents:
        wanted = list(dict.fromkeys(documents))
        present = set(known)
        missing = [d for d in wanted if d not in present]
        if missing:
            shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
            raise InputError(f"--documents: {len(missing)} id(s) not in the notes: {shown}")
        chosen = set(wanted)
        return [d for d in known if d in chosen]
    n = DEFAULT_SAMPLE if sample is None else sample
    if n < 1:
        raise InputError(f"--sample {n}: at least 1 note")
    if n >= len(known):
        return known
    picked = set(random.Random(seed).sample(known, n))
    return [d for d in known if d in picked]


def _text_spans(parsed, ranges) -> list[tuple[int, int, str]]:
    out = []
    for start, end, label in ranges:
        text_start, text_end = parsed.text_span(start, end)
        if text_end > text_start:
            out.append((text_start, text_end, label))
    return out


def review(
    notes: str | Path,
    spans: str | Path,
    out: str | Path,
    *,
    documents: Sequence[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    mode: str = "mask",
    key: str | None = None,
    allow_short_key: bool = False,
    kb: str | Path | None = None,
    mask_format: str = DEFAULT_MASK,
    hidden: str = "deidentify",
    column_map: Mapping[str, str] | None = None,
    overwrite: bool = False,
    allow_unmatched_spans: bool = False,
) -> ReviewResult:
    """Write the review page of the chosen notes of ``notes`` to ``out`` (module docstring).

    ``spans`` is what ``deidentify --spans`` takes (``weak-label``, ``predict``, gold). ``mode``,
    ``key``, ``kb``, ``mask_format`` and ``hidden`` mean what they mean for ``deidentify``; in surrogate
    mode give the release's key, else the surrogates shown are not the released ones. ``out`` is
    written atomically; it replaces a page deid-ds wrote, any other file only with ``overwrite``, and
    never an input of the run (``notes``, ``spans``, ``kb`` or a file inside one of them). Spans that are
    not about these notes are refused as ``deidentify`` refuses them (``allow_unmatched_spans``:
    :mod:`deid_ds.deidentification.span_coverage`): a page of notes left as they were would pass for a
    de-identified sample.
    """
    from deid_ds.deidentification.span_coverage import check_coverage, coverage_of
    from deid_ds.io.files import atomic_write_text
    from deid_ds.io.html_page import check_replaceable
    from deid_ds.review.page import review_page
    from deid_ds.segmentation.html_text import html_to_text

    if mode not in MODES:
        raise InputError(f"--mode {mode}: expected one of {', '.join(MODES)}")
    check_mask_format(mask_format)
    out = Path(out)
    check_replaceable(out, overwrite, inputs=(notes, spans, kb))
    keyring = resolve_key(key, allow_short=allow_short_key)
    source = open_notes(notes, column_map)
    pairs = list(source.iter_identifiers())
    by_scope: dict[str, list[str]] = {}
    for id_document, id_patient in pairs:
        by_scope.setdefault(scope_of(id_patient, id_document), []).append(id_document)
    identifiers = [id_document for id_document, _ in pairs]
    chosen = choose_documents(identifiers, documents, sample, seed)
    wanted = set(chosen)
    spans_by_document = read_spans_by_document(spans)
    check_coverage(coverage_of(spans_by_document, identifiers), allow_unmatched_spans, str(spans))
    picked = {}
    for batch in source.iter_batches():
        for note in batch:
            if note.id_document in wanted and note.id_document not in picked:
                picked[note.id_document] = note
    selected = [picked[d] for d in chosen if d in picked]
    options = DeidOptions(
        mode=mode,
        keyring=keyring,
        kb=str(kb) if kb else None,
        mask_format=mask_format,
        hidden=hidden,
        audit_originals=True,  # the page shows what was replaced outside the text (it holds the originals anyway)
    )
    entities = {}
    for note in selected:
        scope = scope_of(note.id_patient, note.id_document)
        if scope not in entities:
            entities[scope] = scope_entities(by_scope.get(scope, [note.id_document]), spans_by_document)
    job = DeidJob(
        notes=selected,
        extras=None,
        spans=[spans_by_document.get(n.id_document, []) for n in selected],
        duplicates=frozenset(),
        options=options,
        scope_entities=entities,
    )
    result = deidentify_batch(job)
    written = dict(zip(result.ok, result.html))
    errors = dict(zip(result.documents["id_document"], result.documents["error"]))
    audit_by_document: dict[str, list[tuple]] = {}
    for row in zip(
        result.audit["id_document"],
        result.audit["out_start"],
        result.audit["out_end"],
        result.audit["label"],
        result.audit["view"],
        result.audit["original"],
        result.audit["replacement"],
    ):
        audit_by_document.setdefault(row[0], []).append(row[1:])
    reviewed = []
    for position, note in enumerate(selected):
        original = html_to_text(note.html) if isinstance(note.html, (str, bytes)) else None
        original_text = original.text if original is not None else ""
        original_spans = (
            _text_spans(
                original, [(s.html_start, s.html_end, s.label) for s in spans_by_document.get(note.id_document, [])]
            )
            if original is not None
            else []
        )
        item = ReviewedNote(note.id_document, note.doc_type, original_text, original_spans, None)
        if position in written:
            parsed = html_to_text(written[position])
            rows = audit_by_document.get(note.id_document, [])
            item.deidentified = parsed.text
            item.deidentified_spans = _text_spans(
                parsed, [(s, e, label) for s, e, label, view, *_ in rows if view == "text"]
            )
            item.other_changes = [
                (view, label, original or "", replacement or "")
                for _, _, label, view, original, replacement in rows
                if view != "text"
            ]
            item.other_views = len(item.other_changes)
        else:
            item.error = errors.get(note.id_document) or "not de-identified"
        reviewed.append(item)
    page = review_page(reviewed, mode=mode, key_origin=keyring.origin, spans=str(spans))
    atomic_write_text(out, page)
    return ReviewResult(out, mode, keyring.origin, reviewed)
