"""The candidate span a labelling function proposes, before the labeller resolves conflicts.

A separate module so that every labelling-function module (dates, phones, e-mails, postcodes, and
later the gazetteer and metadata ones) can return the same type without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True, init=False)
class Candidate:
    """A proposed entity: text offsets (end exclusive), label and the rule that found it.

    ``confidence`` is the rule's own estimate of its precision, for the labeller's conflict policy.
    ``needs_context`` marks a match the pattern alone cannot decide (a bare year with no cue such as
    ``en``, a five-digit number with no city after it): the labeller keeps it only when another source
    (patient metadata, a gazetteer, a neighbouring entity) confirms it.
    """

    start: int
    end: int
    label: str
    source: str
    confidence: float = 1.0
    needs_context: bool = False

    def __init__(
        self, start: int, end: int, label: str, source: str, confidence: float = 1.0, needs_context: bool = False
    ) -> None:
        # What the generated __init__ does (a frozen dataclass sets its fields through
        # object.__setattr__), through the slots' own setters, in half the time: every rule of the
        # labeller builds candidates, some 40 per note.
        _set_start(self, start)
        _set_end(self, end)
        _set_label(self, label)
        _set_source(self, source)
        _set_confidence(self, confidence)
        _set_needs_context(self, needs_context)

    def text_of(self, text: str) -> str:
        """The candidate's surface form in ``text`` (convenient in tests and reports)."""
        return text[self.start : self.end]


_set_start, _set_end, _set_label, _set_source, _set_confidence, _set_needs_context = (
    Candidate.__dict__[f.name].__set__ for f in fields(Candidate)
)
