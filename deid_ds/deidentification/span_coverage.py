"""Whether a spans table is about the notes it is given: checked before ``deidentify`` writes anything.

Spans whose ``id_document`` matches no note (ids lower-cased or prefixed by an export, another run's
spans, an empty table) would leave every note as it was, and the output would still look
de-identified. So the driver counts the distinct documents of the spans, of the notes, and of both
(:class:`SpanCoverage`: the local engine from the spans it reads whole anyway, Spark with three counts)
and :func:`check_coverage` refuses:

* a spans table none of whose documents is among the notes (an empty one included), always;
* a run where most notes (more than :data:`MOST`) get no span, or most span documents are not among the
  notes, unless the user says so (``--allow-unmatched-spans``: a subset of a corpus de-identified with
  the corpus's spans, or notes most of which hold no identifier).

Counts only: no id is ever quoted.
"""

from __future__ import annotations

from dataclasses import dataclass

from deid_ds.errors import InputError

#: "Most": more than this share of the notes without a span, or of the span documents without a note.
MOST = 0.5
ALLOW_OPTION = "--allow-unmatched-spans"


class UnmatchedSpansError(InputError):
    """The spans are not about these notes: refused before any output is written (exit status 2)."""

    exit_code = 2


@dataclass(frozen=True)
class SpanCoverage:
    """Distinct documents of the spans table, of the notes, and of both."""

    span_documents: int
    note_documents: int
    matched: int

    @property
    def notes_without_spans(self) -> int:
        return self.note_documents - self.matched

    @property
    def span_documents_not_in_notes(self) -> int:
        return self.span_documents - self.matched


def coverage_of(span_ids, note_ids) -> SpanCoverage:
    """The coverage of two collections of document ids (duplicates counted once)."""
    spans, notes = set(span_ids), set(note_ids)
    return SpanCoverage(len(spans), len(notes), len(spans & notes))


def check_coverage(coverage: SpanCoverage, allow_unmatched: bool, spans: str) -> None:
    """Refuse spans that match none of the notes, or (without ``allow_unmatched``) too few of them
    (module docstring): one line with the counts, naming the option."""
    c = coverage
    if c.note_documents == 0:
        return  # no note: nothing to de-identify, nothing published
    if c.span_documents == 0:
        raise UnmatchedSpansError(
            f"{spans} holds no span: none of the {c.note_documents:,} note document(s) would be de-identified"
        )
    if c.matched == 0:
        raise UnmatchedSpansError(
            f"{spans}: none of its {c.span_documents:,} span document(s) is among the {c.note_documents:,} note "
            "document(s): no note would be de-identified (compare the id_document columns: case, prefix, another run)"
        )
    if allow_unmatched:
        return
    if c.notes_without_spans > MOST * c.note_documents:
        raise UnmatchedSpansError(
            f"{spans}: {c.notes_without_spans:,} of the {c.note_documents:,} note document(s) have no span "
            f"(only {c.matched:,} match the {c.span_documents:,} span document(s)): they would be written with "
            f"their text unchanged; check the id_document columns, or pass {ALLOW_OPTION} if that is intended"
        )
    if c.span_documents_not_in_notes > MOST * c.span_documents:
        raise UnmatchedSpansError(
            f"{spans}: {c.span_documents_not_in_notes:,} of its {c.span_documents:,} span document(s) are not "
            f"among the {c.note_documents:,} note document(s): check that the spans are these notes', or pass "
            f"{ALLOW_OPTION} if that is intended (a subset of the notes)"
        )
