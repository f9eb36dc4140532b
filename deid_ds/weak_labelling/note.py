"""One note: parse, segment and label it, check the labeller's spans, and tag its tokens in BIO.

Pure per-note work (the labeller is cached per process and configuration): a bad note never raises,
its status says what happened.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from deid_ds.errors import DocumentError
from deid_ds.kb.ambiguity import load_lexicon
from deid_ds.label.labeller import LabelConfig, WeakLabeller
from deid_ds.label.lookup import NoteLookup
from deid_ds.model import DocumentStatus, Note
from deid_ds.segmentation.html_text import ParsedHtml
from deid_ds.segmentation.notes import segment_note
from deid_ds.segmentation.segmenter import Segmenter, TokenSpans

_LABELLERS: dict[LabelConfig, WeakLabeller] = {}


def labeller_for(config: LabelConfig) -> WeakLabeller:
    """One labeller per process and configuration (the knowledge base's matcher is loaded once)."""
    labeller = _LABELLERS.get(config)
    if labeller is None:
        labeller = WeakLabeller.from_kb(config.kb_dir, use_metadata=config.use_metadata, disabled=config.disabled)
        load_lexicon()  # the rules and the knowledge features read it: loaded here, not in the first note's time
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
    #: what the labeller looked up for the note, kept when the knowledge features are asked for: they are
    #: computed from it for the sentences written out only (:meth:`BatchColumns.add`)
    lookup: NoteLookup | None = None


def label_note(
    note: Note, segmenter: Segmenter, labeller: WeakLabeller, use_metadata: bool = True, features: bool = False
) -> LabelledNote:
    """Parse, segment and label one note; never raises for a bad note, the status says what happened.

    With ``features``, the labeller's lookup of the note comes with it, for the knowledge features
    (:mod:`deid_ds.label.features`: the same matches, folds and metadata as the labels).

    Reasons name the stage and the exception type only: an exception's message may quote the note.
    """
    status, parsed, compact = segment_note(note, segmenter)
    if compact is None or not compact.starts:
        return LabelledNote(status, parsed, compact)
    try:
        labelling = labeller.labelling(
            parsed.text, compact.starts, compact.ends, note.patient if use_metadata else None
        )
        candidates = labelling.candidates
        ranges = token_ranges(candidates, compact.starts, compact.ends)
    except DocumentError as error:
        return LabelledNote(failed_status(status, str(error)))
    except Exception as error:
        return LabelledNote(failed_status(status, f"internal error during labelling ({type(error).__name__})"))
    return LabelledNote(status, parsed, compact, candidates, ranges, labelling.lookup if features else None)


def failed_status(status: DocumentStatus, reason: str) -> DocumentStatus:
    """A note that segmented but could not be labelled: it contributes nothing, so no counts."""
    return DocumentStatus(
        status.id_document, status.id_patient, "failed", reason, status.n_chars, 0, 0, status.warnings
    )


def bio_tags(n_tokens: int, ranges: Sequence[tuple[int, int]], labels: Sequence[str]) -> list[str]:
    """Per-token BIO tags of a note: ``B-LABEL`` on an entity's first token, ``I-LABEL`` on the next."""
    tags = ["O"] * n_tokens
    for (first, last), label in zip(ranges, labels):
        tags[first] = "B-" + label
        for i in range(first + 1, last + 1):
            tags[i] = "I-" + label
    return tags
