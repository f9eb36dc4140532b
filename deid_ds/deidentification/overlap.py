"""Whether a surrogate gives back its original, in whole or in part: the test every surrogate must pass.

A surrogate that equals its original, or that carries one of the original's words (``zeb.quag@example.org``
→ ``zeb.quag@wrwonwg.org``, ``Jean-Pierre`` → ``Pierre-Yves``), leaves an identifier in the note. Texts are
compared after Unicode compatibility normalisation (NFKC, so NFC and NFD inputs alike), with accents
removed and case folded, so ``Élodie``, ``ELODIE`` and an NFD ``E\\u0301lodie`` are one word.

The original's *name tokens* are its words of two letters or more, minus words that identify nobody and
that a surrogate may keep because they carry the form of the entity: name particles (``le``, ``de``),
``saint``/``sainte``, street type words (``rue``, ``lieu-dit``) and ``bis``/``ter`` for addresses, and,
in e-mail addresses, the top-level domain, public mail providers and service words (:func:`is_service_word`).
A token of four letters or more may not appear anywhere in the surrogate's letters (``martin`` in
``martinez``, ``legall`` in ``jeanne.legall``); a shorter one may not be one of its words (``li`` is in
``lilou``, not a leak). The letters of a date are month and weekday names: a date is compared whole only.

The same test holds against every *other* entity of the note (:class:`NoteOriginals`): a surrogate is
never another original of its note either.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from deid_ds.kb.normalize import name_particles, street_type_abbreviations, street_type_words
from deid_ds.label import _numbers

_WORD = re.compile(r"[^\W\d_]+")
_LIGATURES = str.maketrans({"œ": "oe", "æ": "ae", "ĳ": "ij"})
#: Tokens of this many letters or more must not appear anywhere in the surrogate's letters.
SUBSTRING_FROM = 4

#: Words an e-mail address keeps: they name a kind of service or institution, never a person or a place.
EMAIL_GENERIC = frozenset(
    """secretariat secretariats secretaire secr sec contact contacts accueil info infos information chu chru chr ch chi
    chic chs ght aphp hopital hopitaux hospitalier hospitaliere clinique polyclinique cabinet service services centre
    pole unite direction admin administration consultation consultations consult rdv urgences urgence medecine
    medical medicale cardio cardiologie neuro neurologie pediatrie radiologie imagerie labo laboratoire pharmacie
    chirurgie oncologie maternite geriatrie psychiatrie pneumologie dermatologie ophtalmologie orl gyneco
    gynecologie rhumatologie nephrologie endocrinologie hematologie kine sante mairie ehpad smur samu dr docteur
    medecin infirmier infirmiere noreply reply ne pas repondre mail email courrier gouv anatomie anapath gastro
    gastroenterologie urologie hepatologie pneumo dermato ophtalmo rhumato endocrino diabetologie infectiologie
    reanimation rea anesthesie soins palliatifs hdj hospitalisation bloc dialyse ortho orthopedie traumatologie psy
    addictologie neonatologie obstetrique kinesitherapie social sociale assistante cadre equipe mobile""".split()
)


def is_service_word(word: str) -> bool:
    """A word of :data:`EMAIL_GENERIC`, or the start (five letters or more) of one: ``cardiologi``, ``secret``."""
    return word in EMAIL_GENERIC or (len(word) >= 5 and any(g.startswith(word) for g in _LONG_GENERIC))


def _service_piece(word: str) -> bool:
    """A piece of four letters or more of a long service word that no name list holds: a scan cuts ``imagerie``
    into ``i magerie``, ``hopital`` into ``ho pital``, and such a piece is no more a name than the word."""
    if len(word) < 4 or not any(word in g for g in _LONG_GENERIC):
        return False
    from deid_ds.deidentification.pools import load_pools

    pools = load_pools(None)
    return word not in pools.first_name_keys and word not in pools.surname_keys


_LONG_GENERIC = tuple(w for w in EMAIL_GENERIC if len(w) > 5)
_PLACE_GENERIC = frozenset({"saint", "sainte", "st", "ste"})
#: Public mail providers: an address there keeps its domain (millions of people share it).
PUBLIC_DOMAINS = frozenset(
    """gmail.com googlemail.com orange.fr wanadoo.fr free.fr sfr.fr neuf.fr laposte.net hotmail.fr hotmail.com
    outlook.fr outlook.com live.fr live.com yahoo.fr yahoo.com icloud.com me.com aol.com bbox.fr numericable.fr
    club-internet.fr aliceadsl.fr protonmail.com proton.me gmx.fr gmx.com mailo.com""".split()
)


@lru_cache(maxsize=1 << 16)
def normalise(text: str) -> str:
    """Compatibility-normalised, accents removed, case folded: how two texts are compared here."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.translate(_LIGATURES))
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return unicodedata.normalize("NFKC", stripped.casefold().translate(_LIGATURES))


@lru_cache(maxsize=1 << 16)
def _compared(text: str) -> tuple[str, frozenset[str], str]:
    """How a text is compared here: normalised with its spaces collapsed, its words, and their letters run
    together. Cached: each draw is compared with its original and with every entity of its note."""
    normalised = normalise(text)
    words = _WORD.findall(normalised)
    return " ".join(normalised.split()), frozenset(words), "".join(words)


@lru_cache(maxsize=1)
def _street_words() -> frozenset[str]:
    """Street type words and their parts (``lieu-dit``: ``lieu``, ``dit``), the repetition index, and the postal
    box prefixes a surrogate keeps (``BP``, ``CS``, ``TSA``: :func:`~.places.surrogate_street`)."""
    words = {normalise(w) for w in (*street_type_words(), *street_type_abbreviations())}
    boxes = {"bp", "cs", "tsa", "cedex"}
    return frozenset(words | {p for w in words for p in _WORD.findall(w)} | {"bis", "ter", "quater"} | boxes)


@lru_cache(maxsize=16)
def generic_words(label: str) -> frozenset[str]:
    """Words a surrogate of ``label`` may share with its original (module docstring)."""
    words = frozenset(name_particles()) | _PLACE_GENERIC
    if label == "STR":
        words |= _street_words()
    if label == "EMAIL":
        words |= EMAIL_GENERIC | {part for domain in PUBLIC_DOMAINS for part in re.split(r"[.\-]", domain)}
    if label == "PHONE":  # a phone said in words keeps its trunk and region ("zéro deux"): its digits are compared
        words |= frozenset(_numbers.WORDS) | {"et"}
    return words


@lru_cache(maxsize=1 << 14)
def name_tokens(original: str, label: str) -> frozenset[str]:
    """The original's words that its surrogate must not carry (module docstring)."""
    text = normalise(original)
    if label == "EMAIL":
        local, at, domain = text.rpartition("@")
        if at and "." in domain:
            text = f"{local}@{domain.rsplit('.', 1)[0]}"  # the top-level domain is kept
    generic = generic_words(label)
    words = {w for w in _WORD.findall(text) if len(w) >= 2 and w not in generic}
    return frozenset(w for w in words if label != "EMAIL" or not is_service_word(w))


@dataclass(frozen=True)
class NoteOriginals:
    """Every entity the note holds (its spans' texts), as the words no surrogate of the note may carry.

    A surrogate drawn for one entity may happen to be another entity of the same note: a drawn town that
    is the note's other town, a doctor renamed with the patient's surname, a street surrogate ``rue de
    Lorient`` in a note that names Lorient. Written into the note, it puts that identifier back where
    the other entity's own replacement removed it. Each original contributes its name tokens (by its own
    label, :func:`name_tokens`) and its whole normalised text (digits included: a ZIP or a phone).
    """

    wholes: frozenset[str] = frozenset()
    tokens: frozenset[str] = frozenset()
    #: The tokens of :data:`SUBSTRING_FROM` letters or more by their first letters: a note with many entities
    #: has hundreds of tokens, and a surrogate's letters hold only a few of their prefixes (3x faster per call
    #: than trying every token: docs/benchmarks.md, *deidentify*).
    _by_prefix: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_prefix: dict[str, list[str]] = {}
        for token in self.tokens:
            if len(token) >= SUBSTRING_FROM:
                by_prefix.setdefault(token[:SUBSTRING_FROM], []).append(token)
        object.__setattr__(self, "_by_prefix", {k: tuple(v) for k, v in by_prefix.items()})

    @classmethod
    def of(cls, entities: Iterable[tuple[str, str]]) -> NoteOriginals:
        """From ``(label, original text)`` pairs; dates contribute their whole text only."""
        wholes, tokens = set(), set()
        for label, original in entities:
            wholes.add(_compared(original)[0])
            if label == "EMAIL":  # the address's service words, even cut by a scan, are no identifier
                tokens |= {t for t in name_tokens(original, label) if not _service_piece(t)}
            elif label != "DATE":
                tokens |= name_tokens(original, label)
        return cls(frozenset(wholes), frozenset(tokens))

    @classmethod
    def of_note(cls, scope_entities: tuple[tuple[str, str], ...], mine: Iterable[tuple[str, str]]) -> NoteOriginals:
        """:meth:`of` the patient's notes' entities (``scope_entities``, the same in each of their notes) and the
        note's own (``mine``): the patient's part worked out once, the note's added when not already in it
        (0.151 → 0.110 s for 1,000 export-style notes: docs/benchmarks.md, *deidentify*)."""
        scope, theirs = _scope_originals(scope_entities), _scope_pairs(scope_entities)
        # an entity the patient's list holds adds nothing to it: only the others are worked out (most notes have
        # none; 0.33 -> 0.28 s for 3,000 generated notes: docs/benchmarks.md, *deidentify*)
        own = cls.of([entity for entity in mine if entity not in theirs])
        if own.wholes <= scope.wholes and own.tokens <= scope.tokens:
            return scope
        return cls(scope.wholes | own.wholes, scope.tokens | own.tokens)

    def given_back(self, surrogate: str) -> bool:
        """True when ``surrogate`` is one of the note's entities or carries one of their name tokens."""
        if not self.wholes:
            return False
        whole, words, letters = _compared(surrogate)
        if whole in self.wholes or not self.tokens.isdisjoint(words):
            return True
        for i in range(len(letters) - SUBSTRING_FROM + 1):
            tokens = self._by_prefix.get(letters[i : i + SUBSTRING_FROM])
            if tokens and any(token in letters for token in tokens):
                return True
        return False


@lru_cache(maxsize=256)
def _scope_originals(scope_entities: tuple[tuple[str, str], ...]) -> NoteOriginals:
    return NoteOriginals.of(scope_entities)


@lru_cache(maxsize=256)
def _scope_pairs(scope_entities: tuple[tuple[str, str], ...]) -> frozenset[tuple[str, str]]:
    return frozenset(scope_entities)


def holds_phrase(text: str, phrases: Iterable[str]) -> bool:
    """True when ``text`` holds one of ``phrases`` whole, as words (compared normalised, any run of spaces,
    hyphens and apostrophes matching any other): ``LE DU`` in ``Thomas Le-Du``, not in ``LE DUC``."""
    words = spaced_words(text)
    return any(len(wanted) > 2 and wanted in words for wanted in map(spaced_words, phrases))


@lru_cache(maxsize=1 << 16)
def spaced_words(text: str) -> str:
    """``text``'s normalised words joined by one space, with one space before and after: a phrase is held whole,
    as words, where its spaced form is a substring (``" le du "`` in ``" thomas le du "``, not in ``" le duc "``).
    A substring test, not a regex built per phrase: each name draw tests its own phrases, and their patterns
    overflowed ``re``'s cache (the note stage of 1,000 export-style notes 2.93 -> 2.84 s: docs/benchmarks.md,
    *deidentify*)."""
    return " " + " ".join(_WORD.findall(normalise(text))) + " "


def keeps_original(original: str, surrogate: str, label: str) -> bool:
    """True when ``surrogate`` equals ``original`` or carries one of its name tokens (module docstring)."""
    whole, words, letters = _compared(surrogate)
    if _compared(original)[0] == whole:
        return True
    if label == "DATE":
        return False
    return any(t in words or (len(t) >= SUBSTRING_FROM and t in letters) for t in name_tokens(original, label))
