"""PATIENT from the patient's own metadata, and the metadata's confirmation of other entities.

The warehouse knows the note's patient: that is the distant supervision at the heart of the Rennes
study. The metadata is a hint, not truth (docs/input.md): it may hold the birth name where
the note uses the married one, several given names, capitals without accents, or a typo. So names
are compared token by token, folded, with compound names split (``LE GALL-PRIGENT``, ``Jean-Pierre``),
initials accepted for given names, and one typo allowed in words of five letters or more (rapidfuzz).

A name run (:mod:`deid_ds.label.names`) made of the patient's last name and given names or initials
is PATIENT from ``metadata:name`` (the strongest source); the last name alone, a given name alone, or a
given name next to unknown name words (a married name missing from the record) are weaker
``patient:*`` candidates that a professional's context outranks.

The birthdate, address, city, postcode, phone and e-mail confirm what the patterns found or could
not decide (a bare year, a five-digit number, a street written without a street type).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from deid_ds.io.metadata import read_birthdate, read_zip
from deid_ds.kb.normalize import fold
from deid_ds.label.candidate import Candidate
from deid_ds.label.names import core_words, is_core, is_french_word, is_particle, particle_after_title, runs_with
from deid_ds.label.view import INITIAL, TITLE, UPPER, NoteView
from deid_ds.model import PatientMetadata

_SPLIT = re.compile(r"[\s,;/]+")
#: Typos are only tolerated in words this long: a one-letter change in a short word is another name.
MIN_TYPO_LENGTH = 5


@dataclass(frozen=True)
class PatientNames:
    """The patient's names as folded tokens (compounds also split), and given-name initials."""

    last: frozenset[str]
    first: frozenset[str]
    initials: frozenset[str]
    _cache: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_metadata(cls, patient: PatientMetadata | None) -> PatientNames | None:
        """The names of ``patient``; the same object for the notes of one patient (see :func:`_names_of`)."""
        if patient is None or not (patient.lastname or patient.firstname):
            return None
        return _names_of(patient.lastname, patient.firstname)

    @classmethod
    def of_names(cls, lastname: str | None, firstname: str | None) -> PatientNames:
        """The names of a last and a first name, built anew (:meth:`from_metadata` shares them)."""
        last, first = _name_tokens(lastname), _name_tokens(firstname)
        initials = frozenset(t[0] for t in first if t)
        return cls(frozenset(last), frozenset(first), initials)

    def kind(self, token: str) -> str | None:
        """``"last"``, ``"first"`` or None for a folded token of the note (memoised per patient)."""
        cache = self._cache
        if token not in cache:
            cache[token] = self._kind(token)
        return cache[token]

    def names_among(self, words: Iterable[str]) -> set[str]:
        """The folded ``words`` that are one of the patient's names (:meth:`kind` not None).

        Asked of a note's distinct name words at once, most of which are no name of the patient's:
        those are set aside with set lookups, and :meth:`kind` (its typo test is the costly part)
        only asked about the others. A hyphenated word can only be a compound of names if its first
        part is a name; a word of typo length only a typo if it keeps a name's first or last letters.
        """
        exact, heads = self._exact, self._heads
        starts, ends = self._typo_ends
        maybe = [
            w
            for w in words
            if w not in exact
            and (
                ("-" in w and w.strip("-").partition("-")[0] in heads)
                or (len(w) >= MIN_TYPO_LENGTH and (w[:2] in starts or w[-2:] in ends))
            )
        ]
        return exact.intersection(words).union(w for w in maybe if self.kind(w) is not None)

    @cached_property
    def _exact(self) -> frozenset[str]:
        return self.last | self.first

    @cached_property
    def _heads(self) -> frozenset[str]:
        """First parts a compound of names can have: a name, or nothing (``-`` alone has no part that is not a name)."""
        return self._exact | {""}

    @cached_property
    def _typo_ends(self) -> tuple[frozenset[str], frozenset[str]]:
        """First and last two letters of the names long enough for a typo.

        A word one edit away from such a name (five letters or more, as is the word) keeps its first
        two letters when the edit is after them, and its last two otherwise (three letters or more
        follow an edit in the first two).
        """
        long = [name for name in self._exact if len(name) >= MIN_TYPO_LENGTH]
        return frozenset(name[:2] for name in long), frozenset(name[-2:] for name in long)

    def _kind(self, token: str) -> str | None:
        for names, kind in ((self.last, "last"), (self.first, "first")):
            if token in names or ("-" in token and all(p in names for p in token.split("-") if p)):
                return kind
        if len(token) >= MIN_TYPO_LENGTH:
            from rapidfuzz.distance import Levenshtein

            for names, kind in ((self.last, "last"), (self.first, "first")):
                for name in names:
                    if (
                        abs(len(name) - len(token)) <= 1
                        and len(name) >= MIN_TYPO_LENGTH
                        and Levenshtein.distance(name, token, score_cutoff=1) <= 1
                    ):
                        return kind
        return None


@lru_cache(maxsize=256)
def _names_of(lastname: str | None, firstname: str | None) -> PatientNames:
    """:class:`PatientNames` of a last and first name, kept for the next notes of the same patient.

    A patient has many notes, and a batch often holds several in a row: they share one object, so
    its memo of :meth:`PatientNames.kind` (and its typo tests) serves them all.
    """
    return PatientNames.of_names(lastname, firstname)


def _name_tokens(value: str | None) -> set[str]:
    tokens: set[str] = set()
    for piece in _SPLIT.split(fold(value or "")):
        piece = piece.strip(".-'’")
        if not piece or is_particle(piece):
            continue
        tokens.add(piece)
        for part in piece.split("-"):
            if len(part) > 1 and not is_particle(part):
                tokens.add(part)
    return tokens


def patient_names(view: NoteView, names: PatientNames) -> list[Candidate]:
    """PATIENT candidates for the name runs of the note made of the patient's names."""
    found: list[Candidate] = []
    # only a run holding one of the patient's names (or a typo of one) can give a candidate
    named = names.names_among(core_words(view))
    for i, end in runs_with(view, named):
        run = _classify_run(view, names, i, end)
        if (
            len(run) == 1
            and run[0].source == "patient:lastname"
            and run[0].start == view.starts[i]
            and run[0].end == view.ends[end - 1]
            and i > 0
            and view.words[i - 1] == "M."
            and "m" in names.initials
            and all(names.kind(view.folded[k]) == "last" for k in range(i, end) if is_core(view, k))  # not his son's
            # "M. SEGUIN Louis-Luc"
            and view.joined(i - 1)
        ):
            # "M. GAUDIN" for Marcel Gaudin: the M. is read as his initial (the metadata says it can be)
            run = [Candidate(view.starts[i - 1], run[0].end, "PATIENT", "metadata:name", 1.0)]
        found += run
    return found


def _classify_run(view: NoteView, names: PatientNames, i: int, j: int) -> list[Candidate]:
    kinds: list[str | None] = []
    for k in range(i, j):
        f = view.folded[k]
        if is_core(view, k):
            kinds.append(names.kind(f))
        elif view.shapes[k] == INITIAL:
            kinds.append("initial" if f[0] in names.initials else None)
        else:
            kinds.append("particle")
    # the longest stretch of the run made of the patient's names (particles and initials inside it)
    best: tuple[int, int] | None = None
    k = 0
    while k < len(kinds):
        if kinds[k] in ("last", "first"):
            s = k
            while s > 0 and kinds[s - 1] in ("particle", "initial"):
                s -= 1
            e = k
            while e + 1 < len(kinds) and kinds[e + 1] is not None:
                e += 1
            while e > k and kinds[e] == "particle":
                e -= 1
            while kinds[s] == "particle" and view.shapes[i + s] == "l" and not particle_after_title(view, i + s):
                s += 1
            if best is None or e + 1 - s > best[1] - best[0]:
                best = (s, e + 1)
            k = e + 1
        else:
            k += 1
    if best is None:
        return []
    s, e = best
    if "last" in kinds[s:e] and "first" not in kinds[s:e] and "initial" not in kinds[s:e]:
        s, e = _with_relative_given_name(view, kinds, i, s, e)
    stretch = set(kinds[s:e])
    start, end = view.starts[i + s], view.ends[i + e - 1]
    unknown_core = any(kinds[k] is None and is_core(view, i + k) for k in range(len(kinds)))
    if "last" in stretch and ("first" in stretch or "initial" in stretch):
        return [Candidate(start, end, "PATIENT", "metadata:name", 1.0)]
    if "last" in stretch:
        return [Candidate(start, end, "PATIENT", "patient:lastname", 0.8)]
    if unknown_core and "first" in stretch:
        # a given name of the patient next to unknown name words: likely a married name
        whole = (view.starts[i], view.ends[j - 1])
        return [Candidate(*whole, "PATIENT", "patient:firstname_unknown_last", 0.5)]
    if len(view.folded[i + s]) >= 3:
        return [Candidate(start, end, "PATIENT", "patient:firstname", 0.55)]
    return []


def _with_relative_given_name(view: NoteView, kinds: list[str | None], i: int, s: int, e: int) -> tuple[int, int]:
    """The patient's last name ``[s, e)`` of the run at ``i`` with the given name written next to it in the
    ``Prénom NOM`` or ``NOM Prénom`` way (``Nolwenn GUILLOU (mère)``): a relative sharing the patient's name
    is PATIENT too (guidelines). One word, capitalised (not in capitals) beside a surname in capitals, and no
    French word (``Revu GUILLOU``)."""
    if not all(view.shapes[i + k] == UPPER for k in range(s, e) if kinds[k] == "last"):
        return s, e
    if s > 0 and _given_name_like(view, kinds, i, s - 1):
        return s - 1, e
    if e < len(kinds) and _given_name_like(view, kinds, i, e):
        return s, e + 1
    return s, e


def _given_name_like(view: NoteView, kinds: list[str | None], i: int, k: int) -> bool:
    return (
        kinds[k] is None
        and view.shapes[i + k] == TITLE
        and len(view.words[i + k]) >= 3
        and not is_french_word(view.words[i + k].lower())
    )


_DIGITS = re.compile(r"\d")


def _digits(value: str | None) -> str:
    return "".join(_DIGITS.findall(value or ""))


#: The patient's address is looked for only when it has this many letters: a shorter one is likely a word.
MIN_ADDRESS_LETTERS = 5
_WORD = re.compile(r"\w+")


#: What may separate two words of the patient's address in a note: spaces and punctuation.
_ADDRESS_SEPARATORS = re.compile(r"[\s,.'’-]+")
_WORD_CHARACTER = re.compile(r"\w")


@lru_cache(maxsize=256)
def _address_words(address: str) -> tuple[str, ...] | None:
    """The patient's address as the folded words :func:`find_words` looks for (None when too short)."""
    words = _WORD.findall(fold(address))
    if sum(c.isalpha() for w in words for c in w) < MIN_ADDRESS_LETTERS:
        return None
    return tuple(words)


def find_words(folded: str, words: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where ``words`` (``\\w`` runs) are written in order in ``folded``, separated by spaces or punctuation
    (:data:`_ADDRESS_SEPARATORS`), at word boundaries: left to right, not overlapping.

    What ``re.finditer`` of ``(?<!\\w)w1[\\s,.'’-]+w2…(?!\\w)`` finds, without compiling that pattern for
    each patient (a third of a millisecond, as much as a note's whole search): the first word is found
    with ``str.find``, the rest read from there. A separator run is never a word's character, so it ends
    where the next word must begin, and matching it greedily is the regex's one way.
    """
    first, rest = words[0], words[1:]
    found: list[tuple[int, int]] = []
    at = folded.find(first)
    while at >= 0:
        end = -1
        if at == 0 or _WORD_CHARACTER.match(folded, at - 1) is None:
            end = at + len(first)
            for word in rest:
                separator = _ADDRESS_SEPARATORS.match(folded, end)
                if separator is None or not folded.startswith(word, separator.end()):
                    end = -1
                    break
                end = separator.end() + len(word)
            if end >= 0 and _WORD_CHARACTER.match(folded, end) is not None:
                end = -1
        if end >= 0:
            found.append((at, end))
            at = folded.find(first, end)
        else:
            at = folded.find(first, at + 1)
    return found


def address_from_metadata(folded: str, patient: PatientMetadata | None) -> list[Candidate]:
    """The patient's own address (the ``address`` field: street or lieu-dit) written in the note: STR.

    The street rules need a street type, a postcode or an address cue right before a postcode; a lieu-dit
    in capitals after ``Adresse :`` and before ``à COMMUNE`` has none of them, and the record says what it
    is. Compared folded (case and accents ignored), word for word. A ``patient:`` source, below the street
    rules (:mod:`deid_ds.label.resolve`): where they found the address they keep their boundaries (a building
    and its street are two spans; the record writes them as one), and the record fills the gaps.
    """
    if patient is None or not patient.address:
        return []
    words = _address_words(patient.address)
    if words is None:
        return []
    return [Candidate(start, end, "STR", "patient:address", 1.0) for start, end in find_words(folded, words)]


def confirm_with_metadata(text: str, candidates: list[Candidate], patient: PatientMetadata | None) -> list[Candidate]:
    """Uncertain pattern candidates the metadata confirms, promoted to ``metadata:*`` sources.

    A bare five-digit number equal to the patient's postcode is a ZIP; a bare year equal to the birth
    year is a DATE; a phone or e-mail equal to the patient's is credited to the metadata.
    """
    if patient is None:
        return []
    zip_code = read_zip(patient.zip) or ""
    birthdate = read_birthdate(patient.birthdate)  # the one reader of deid_ds.io.metadata: any exported form
    birth_year = str(birthdate.year) if birthdate else ""
    phone = _digits(patient.phone)[-9:]
    email = (patient.email or "").strip().lower()
    # what each label is compared with: most candidates (names, places) have nothing to compare
    compared = {"ZIP": zip_code, "DATE": birth_year, "PHONE": phone, "EMAIL": email}
    out: list[Candidate] = []
    for c in candidates:
        if not compared.get(c.label):
            continue
        value = text[c.start : c.end]
        source = None
        if c.label == "ZIP" and zip_code and _digits(value) == zip_code:
            source = "metadata:zip"
        elif c.label == "DATE" and c.needs_context and birth_year and value.strip() == birth_year:
            source = "metadata:birthdate"
        elif c.label == "PHONE" and phone and _digits(value).endswith(phone):
            source = "metadata:phone"
        elif c.label == "EMAIL" and email and value.lower() == email:
            source = "metadata:email"
        if source:
            out.append(Candidate(c.start, c.end, c.label, source, 1.0))
    return out
