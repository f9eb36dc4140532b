"""The candidate span a labelling function proposes, before the labeller resolves conflicts.

A separate module so that every labelling-function module (dates, phones, e-mails, postcodes, and
later the gazetteer and metadata ones) can return the same type without importing one another; with it,
the cut every function's candidates get at the column gaps of fixed-width exports (:func:`split_at_columns`).
"""

from __future__ import annotations

import re
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


#: A gap of this many blanks inside a line is a column break of a fixed-width export, not a word space.
COLUMN_GAP = "   "


def split_at_columns(text: str, candidates: list[Candidate]) -> list[Candidate]:
    """Candidates cut where a wide gap separates two columns of a fixed-width table.

    Guidelines: "a name split over two columns of a fixed-width table is two spans" (``DUPONT     JEAN``
    under ``NOM        PRENOM``). The name runs join tokens separated by any blanks; here a name candidate
    holding three blanks in a row becomes one candidate per column (each keeping its label and source).
    A place read on across the gap (``CHU DE [BREST]      ACCUEIL DES URGENCES``) keeps its first column
    only, and a name stops before a column that is a field's name (``Préleveur :``). Most candidates hold none:
    one substring test each.
    """
    if not any(COLUMN_GAP in text[c.start : c.end] for c in candidates):
        return candidates
    out: list[Candidate] = []
    for c in candidates:
        if COLUMN_GAP not in text[c.start : c.end]:
            out.append(c)
            continue
        pieces = re.finditer(r"\S+(?:[ \t\u00a0]{1,2}\S+)*", text[c.start : c.end])
        if c.label not in ("PATIENT", "DOCTOR"):
            pieces = [next(pieces)]
        for k, piece in enumerate(pieces):
            start, end = c.start + piece.start(), c.start + piece.end()
            if k and _FIELD_AFTER.match(text, end):
                break  # "DR LE GUEN YVES    Préleveur : ...": the next column's field name, not a name
            out.append(Candidate(start, end, c.label, c.source, c.confidence))
    return out


#: A colon after a column's words: they are a field's name (``Préleveur :``).
_FIELD_AFTER = re.compile(r"[ \t\u00a0]*:")
