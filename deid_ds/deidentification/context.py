"""The per-document context of surrogate choices: whose note it is, and what must never be drawn.

**Scopes.** Choices are keyed by a *scope*: ``patient:<id_patient>`` for everything about the patient
(their names and relatives', dates, addresses, phones, e-mails, places), so that a patient's notes stay
coherent with each other; ``document:<id_document>`` when the note has no patient id; and one scope,
``doctors``, for health professionals across the whole document set, so that the same doctor keeps the
same surrogate in every patient's notes (a professional's name is not the patient's secret, and
keeping "who signed what" is useful to readers).

**Avoidance.** A draw never returns the original itself nor any of the patient's own metadata values
(or a word within one edit of one, for words of five letters or more): a relative renamed with the
patient's real first name would put it back in the note, and the residual-leak check would rightly
flag it. A doctor whose global surrogate happens to be the current patient's name takes the next draw
in that patient's notes (the only case where a doctor's surrogate is not the same everywhere). Nor does
a draw return a candidate that carries one of the original's words (:mod:`.overlap`: ``Jean`` never
becomes ``Jeanne``, ``Pont-l'Abbé`` never ``Pont-Aven``), nor one that is, or carries a word of, another
entity of the same note (``note_originals``: a town drawn for Brest is never the Quimper the note also
names; a doctor is never renamed with the patient's real surname).

**Salt.** When a whole surrogate still gives back part of its original (a part drawn for ``Jean`` that
is the ``Pierre`` of ``Jean-Pierre``), :func:`deid_ds.deidentification.surrogates.surrogate` draws it
again with a ``salt``, which every keyed choice of the context takes as one more part.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from rapidfuzz.distance import Levenshtein

from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.overlap import NoteOriginals, keeps_original
from deid_ds.deidentification.pools import Pools
from deid_ds.deidentification.privacy import Privacy
from deid_ds.kb.normalize import fold_key
from deid_ds.model import PatientMetadata

T = TypeVar("T")

DOCTOR_SCOPE = "doctors"
FUZZY_MIN_LENGTH = 5


def scope_of(id_patient: str | None, id_document: str) -> str:
    return f"patient:{id_patient}" if id_patient else f"document:{id_document}"


def words_of(value: str | None) -> set[str]:
    """Folded words of a metadata value (names split on spaces, hyphens and apostrophes)."""
    if not value:
        return set()

    return {w for w in re.split(r"[\s\-'’.,]+", fold_key(value)) if w}


@dataclass
class Context:
    """What the surrogate functions of one document need. ``memory`` lives as long as the document."""

    keyring: Keyring
    pools: Pools
    scope: str
    patient: PatientMetadata = field(default_factory=PatientMetadata)
    birthdate_year: bool = False
    memory: dict[str, object] = field(default_factory=dict)
    _avoid: frozenset[str] | None = None
    salt: str = ""
    #: The note's entities (set by :func:`deid_ds.deidentification.document.deidentify_document`): no draw
    #: returns one of them, nor a word of one.
    note_originals: NoteOriginals = field(default_factory=NoteOriginals)
    #: How dates, ages and places are perturbed (:mod:`deid_ds.deidentification.privacy`).
    privacy: Privacy = field(default_factory=Privacy)

    def spend(self, kind: str, key: str, epsilon: float) -> None:
        """Record that one value of ``kind`` (e.g. ``date:day``, ``age:year``, ``commune``), folded as ``key``, was
        perturbed with ``epsilon`` (``dp`` only). A memoised value costs once per patient: the report sums the
        distinct keys of each scope, and never writes the keys themselves."""
        spent: dict[tuple[str, str], float] = self.memory.setdefault("dp_spent", {})  # type: ignore[assignment]
        spent[(kind, key)] = epsilon

    def parts(self, *parts: str) -> tuple[str, ...]:
        """The parts of a keyed choice, with the salt of a second draw when there is one."""
        return (*parts, "salt", self.salt) if self.salt else parts

    @property
    def avoid_words(self) -> frozenset[str]:
        """Folded words (three letters or more) of the patient's names, address and city."""
        if self._avoid is None:
            patient = self.patient
            words: set[str] = set()
            for value in (patient.firstname, patient.lastname, patient.city, patient.address):
                words |= {w for w in words_of(value) if len(w) >= 3}
            self._avoid = frozenset(words)
        return self._avoid

    def clashes(self, candidate: str, original: str) -> bool:
        """True when ``candidate`` would reproduce the original or one of the patient's own words."""
        if fold_key(candidate) == fold_key(original) or keeps_original(original, candidate, ""):
            return True
        if self.note_originals.given_back(candidate):
            return True
        for word in words_of(candidate):
            if word in self.avoid_words:
                return True
            if len(word) >= FUZZY_MIN_LENGTH:
                for avoided in self.avoid_words:
                    if len(avoided) >= FUZZY_MIN_LENGTH and Levenshtein.distance(word, avoided, score_cutoff=1) <= 1:
                        return True
        return False

    def draw(
        self,
        pool: Sequence[T],
        parts: tuple[str, ...],
        original: str,
        text: Callable[[T], str] = str,
        scope: str | None = None,
    ) -> T:
        """A keyed choice from ``pool`` that does not clash (next entries in turn when one does)."""
        start = self.keyring.index(len(pool), scope or self.scope, *self.parts(*parts))
        for step in range(len(pool)):
            candidate = pool[(start + step) % len(pool)]
            if not self.clashes(text(candidate), original):
                return candidate
        return pool[start]  # a pool made only of clashes: cannot happen with the shipped pools
