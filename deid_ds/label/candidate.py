"""The candidate span a labelling function proposes, before the labeller resolves conflicts.

A separate module so that every labelling-function module (dates, phones, e-mails, postcodes, and
later the gazetteer and metadata ones) can return the same type without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
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

    def text_of(self, text: str) -> str:
        """The candidate's surface form in ``text`` (convenient in tests and reports)."""
        return text[self.start : self.end]
