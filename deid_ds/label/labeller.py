"""The weak labeller: every labelling function's candidates for one note, resolved into final spans.

:class:`WeakLabeller` is what the ``weak-label`` pipeline (and later ``predict --with-rules``) calls
once per note. It is built once per process — it holds the compiled gazetteer matcher when a
knowledge base is given — and is pure per call: same text, tokens and metadata, same spans.

It works with what it is given: without a knowledge base the gazetteer-backed functions are off and
the patterns, context cues and metadata still run; without metadata the patient functions only use
context cues.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from deid_ds.label.candidate import Candidate
from deid_ds.label.functions import FUNCTIONS, PROPAGATION, NoteInputs, check_names
from deid_ds.label.lookup import NoteLookup
from deid_ds.label.propagate import propagate
from deid_ds.label.resolve import rank, winners
from deid_ds.label.view import NoteView
from deid_ds.model import PatientMetadata


@dataclass(frozen=True)
class LabelConfig:
    """Switches of the labeller (picklable, so worker processes rebuild the same labeller)."""

    kb_dir: str | None = None
    use_metadata: bool = True
    #: Names of the labelling functions switched off (:data:`deid_ds.label.functions.ALL`; ``--disable-rule``).
    disabled: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "disabled", check_names(self.disabled))


@dataclass(frozen=True)
class Labelling:
    """A note's entities (:meth:`WeakLabeller.label`) and the lookup they were found with."""

    candidates: list[Candidate]
    lookup: NoteLookup


class WeakLabeller:
    """Labels the eight entity types in a note's text. Build once (see :meth:`from_kb`), call :meth:`label`."""

    def __init__(self, matcher=None, *, config: LabelConfig | None = None) -> None:
        self.matcher = matcher
        self.config = config or LabelConfig()
        self.functions = tuple(f for f in FUNCTIONS if f.name not in self.config.disabled)
        self.propagation = PROPAGATION.name not in self.config.disabled

    @classmethod
    def from_kb(cls, kb_dir: str | Path | None, **options) -> WeakLabeller:
        """A labeller backed by the compiled matcher of a built knowledge base (or none)."""
        matcher = None
        if kb_dir is not None:
            from deid_ds.kb.matcher import load_matcher

            matcher = load_matcher(kb_dir)
        return cls(matcher, config=LabelConfig(kb_dir=str(kb_dir) if kb_dir is not None else None, **options))

    def candidates(
        self, text: str, tokens: Sequence[tuple[int, int]], patient: PatientMetadata | None = None
    ) -> list[Candidate]:
        """Every labelling function's proposals, overlapping and unresolved (for debugging rules)."""
        return self._candidates(self._lookup(text, NoteView(text, tokens), patient))

    def _lookup(self, text: str, view: NoteView, patient: PatientMetadata | None) -> NoteLookup:
        return NoteLookup.of(text, view, self.matcher, patient if self.config.use_metadata else None)

    def _candidates(self, lookup: NoteLookup) -> list[Candidate]:
        note = NoteInputs(lookup)
        found: list[Candidate] = []
        for function in self.functions:  # in the order of FUNCTIONS
            found += note.candidates_of(function.name)
        return found

    def label(
        self, text: str, tokens: Sequence[tuple[int, int]], patient: PatientMetadata | None = None
    ) -> list[Candidate]:
        """The note's entities: non-overlapping, sorted, aligned to ``tokens`` (text offsets).

        Two passes: the candidates are resolved once, the names kept are propagated to their
        repetitions in the note (:mod:`deid_ds.label.propagate`), and everything is resolved again.
        """
        return self._label(self._lookup(text, NoteView(text, tokens), patient))

    def label_offsets(
        self, text: str, starts: list[int], ends: list[int], patient: PatientMetadata | None = None
    ) -> list[Candidate]:
        """:meth:`label` of the tokens given as two offset lists (the segmenter's :class:`TokenSpans`
        form), without pairing them up; the lists are read, not modified."""
        return self.labelling(text, starts, ends, patient).candidates

    def labelling(
        self, text: str, starts: list[int], ends: list[int], patient: PatientMetadata | None = None
    ) -> Labelling:
        """:meth:`label_offsets` with the note's lookup it was found with, for the knowledge features
        (:mod:`deid_ds.label.features` reads the same matches, folds and patient names)."""
        lookup = self._lookup(text, NoteView.of_offsets(text, starts, ends), patient)
        return Labelling(self._label(lookup), lookup)

    def label_lookup(self, lookup: NoteLookup) -> list[Candidate]:
        """The note's entities from a lookup made beforehand with this labeller's matcher and metadata
        (:meth:`NoteLookup.of_offsets`): for a caller that needs the lookup first (``predict``'s knowledge
        features, then its rules on the same lookup)."""
        return self._label(lookup)

    def _label(self, lookup: NoteLookup) -> list[Candidate]:
        view = lookup.view
        found = self._candidates(lookup)
        ranked = rank(found, view.starts, view.ends, {})
        first = winners(ranked)
        kept = {(c.start, c.end, c.label) for c in first}
        repeated = (
            [c for c in propagate(view, first) if (c.start, c.end, c.label) not in kept] if self.propagation else []
        )
        if not repeated:
            return first
        # resolving found + repeated: the first pass's ranking of found, with repeated ranked into it
        return winners(rank(repeated, view.starts, view.ends, ranked))
