"""Normalisation of names and places for matching, keeping the surface forms.

Clinical notes write the same name many ways: ``LE GALL``, ``Le Gall``, ``le gall``, ``Le  Gall`` and
the Annuaire Santé writes ``LÉGER`` or ``Léger``. Matching therefore works on a *folded* form — lower
case, no accents, one kind of apostrophe, hyphen and space — while every gazetteer entry keeps the
surface form it was read with.

:func:`fold` is length-preserving (character ``i`` of the folded text is character ``i`` of the
original), so a match found in folded text is at the same offsets in the note. It therefore cannot remove
what takes a character of its own: the combining accents of decomposed (NFD) text (``e\u0301``) and the
compatibility forms (fullwidth ``Ｋ``, ligature ``ﬁ``). :func:`fold_text` does (the combining marks
dropped, the compatibility forms read as NFKC reads them), so that an NFD and an NFC spelling fold equal;
:func:`fold_mapped` gives its offsets back in the original. :func:`fold_key` is the form stored in
gazetteers: :func:`fold_text`, with whitespace collapsed and trimmed.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from deid_ds.resources import read_word_list, resource_path

APOSTROPHES = "'\u2019\u2018\u02bc\u00b4`"
HYPHENS = "-\u2010\u2011\u2012\u2013\u2014\u2212"


class _FoldTable(dict):
    """``str.translate`` table computed lazily, one character at a time."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if char in APOSTROPHES:
            folded = "'"
        elif char in HYPHENS:
            folded = "-"
        elif char.isspace():
            folded = " "
        else:
            base = unicodedata.normalize("NFD", char)[0]
            lower = base.lower()
            folded = lower if len(lower) == 1 else (char.lower() if len(char.lower()) == 1 else char)
        self[code] = folded
        return folded


_FOLD = _FoldTable()
_SPACES = re.compile(r"\s+")


def fold(text: str) -> str:
    """Lower case, accents removed, apostrophes/hyphens/spaces unified; same length as ``text``.

    Plain ``str.translate`` on purpose: a numpy fold of long texts saved ~1 % of a weak-label worker (about
    90 µs of a note's ~2.7 ms), not worth its code.
    """
    return text.translate(_FOLD)


#: What :func:`fold` leaves as it is and :func:`fold_text` does not: combining marks (decomposed accents)
#: and the compatibility forms read as their letters (fullwidth forms, ligatures, mathematical letters).
_LOOSE = re.compile(
    "[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
    "\ufb00-\ufb06\uff01-\uff5e\U0001d400-\U0001d7ff]"
)


def _loose_char(char: str) -> str:
    """The fold of one character :data:`_LOOSE` matches: nothing for a combining mark, else NFKC then fold."""
    if unicodedata.combining(char):
        return ""
    return fold(unicodedata.normalize("NFKC", char))


def fold_text(text: str) -> str:
    """:func:`fold`, and also decomposed accents removed and compatibility forms read (module docstring).

    Not length-preserving where ``text`` holds such characters: use :func:`fold_mapped` for offsets.
    Text without them (nearly all) folds as :func:`fold` folds it, at the same cost.
    """
    folded = fold(text)
    if folded.isascii() or not _LOOSE.search(folded):  # every character _LOOSE matches folds to non-ASCII
        return folded
    return _LOOSE.sub(lambda m: _loose_char(m.group()), folded)


def fold_mapped(text: str) -> tuple[str, list[int] | None]:
    """:func:`fold_text` and, for each of its characters, the offset in ``text`` it comes from (the end:
    ``len(text)`` appended); ``None`` for the identity (``text`` holds nothing :func:`fold` keeps)."""
    if not _LOOSE.search(text):
        return fold(text), None
    folded = fold(text)
    out: list[str] = []
    index: list[int] = []
    last = 0
    for m in _LOOSE.finditer(text):
        out.append(folded[last : m.start()])
        index.extend(range(last, m.start()))
        written = _loose_char(m.group())
        out.append(written)
        index.extend([m.start()] * len(written))
        last = m.end()
    out.append(folded[last:])
    index.extend(range(last, len(text)))
    index.append(len(text))
    return "".join(out), index


def fold_key(text: str) -> str:
    """The matching key of a gazetteer entry: folded (:func:`fold_text`: NFD and NFC spellings alike),
    whitespace collapsed, no space around hyphens. Short texts (names, places: most calls) are memoised."""
    return _short_key(text) if len(text) <= 64 else _key(text)


def _key(text: str) -> str:
    key = _SPACES.sub(" ", fold_text(text)).strip()
    return key.replace(" - ", "-").replace("- ", "-").replace(" -", "-")


_short_key = lru_cache(maxsize=1 << 16)(_key)


@lru_cache(maxsize=1)
def name_particles() -> frozenset[str]:
    """Particles and function words that are not names on their own (``de``, ``le``, ``d``...)."""
    return frozenset(read_word_list("name_particles_fr.txt"))


def _read_tsv(name: str) -> list[list[str]]:
    rows = []
    for line in resource_path(name).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            rows.append(line.split("\t"))
    return rows


@lru_cache(maxsize=1)
def street_type_abbreviations() -> dict[str, str]:
    """``{"av": "avenue", "bd": "boulevard", "st": "saint", ...}`` (folded keys)."""
    return {fold_key(abbreviation): full for abbreviation, full in _read_tsv("street_types_fr.tsv")}


@lru_cache(maxsize=1)
def street_type_words() -> frozenset[str]:
    """Words that announce a street address (``rue``, ``avenue``, ``lieu-dit``, ``bp``, ``cedex``...)."""
    return frozenset(fold_key(w) for w in read_word_list("street_type_words_fr.txt"))


@lru_cache(maxsize=1)
def titles() -> dict[str, tuple[str, str]]:
    """``{"dr": ("docteur", "professional"), "mme": ("madame", "civility"), ...}`` (folded keys)."""
    return {fold_key(title): (meaning, kind) for title, meaning, kind in _read_tsv("titles_fr.tsv")}


def expand_street_abbreviations(street: str) -> str:
    """``"12 av. du Gal de Gaulle"`` → ``"12 avenue du Gal de Gaulle"``: abbreviated street types expanded.

    Only whole words followed by an optional period are replaced, and only street-type abbreviations,
    so that a matcher built on full forms also finds the abbreviated ones once expanded.
    """
    table = street_type_abbreviations()

    def replace(match: re.Match[str]) -> str:
        full = table.get(fold_key(match.group(1)))
        return full if full is not None else match.group(0)

    return _ABBREVIATION_CANDIDATE.sub(replace, street)


_ABBREVIATION_CANDIDATE = re.compile(r"(?<![\w'])([^\W\d_]{1,5})\.?(?![\w'-])")
_NAME_SEPARATORS = re.compile(r"[\s\-\u2010\u2011]+")
_LEADING_PARTICLE = re.compile(
    r"^(?:(?:d|l)['\u2019]|(?:de|du|des|le|la|les|van|von|del|della|di|da|dos|el)\s)", re.IGNORECASE
)


def name_parts(name: str) -> list[str]:
    """The parts a compound name is also written as, surface forms kept, the whole first.

    ``JEAN-PIERRE`` → ``["JEAN-PIERRE", "JEAN", "PIERRE"]``; ``MARTIN DUPONT`` → the whole and both
    parts. A name that starts with a particle (``LE GALL``, ``DE LA TOUR``, ``D'ALMEIDA``) is kept whole
    only: its last part alone is not how it is written; inside a longer name the particle stays with
    what follows (``MARTIN LE GALL`` → ``MARTIN``, ``LE GALL``). Particles, function words and
    one-letter pieces are never parts on their own.
    """
    whole = " ".join(name.split())
    if not whole:
        return []
    parts = [whole]
    if _LEADING_PARTICLE.match(whole):
        return parts
    particles = name_particles()
    pieces = [p for p in _NAME_SEPARATORS.split(whole) if p]
    if len(pieces) < 2:
        return parts
    pending: list[str] = []  # particles waiting for the name they introduce: MARTIN [LE GALL]
    for piece in pieces:
        key = fold_key(piece)
        if key in particles:
            pending.append(piece)
            continue
        part = " ".join([*pending, piece])
        pending = []
        if (len(key) >= 2 or part != piece) and part not in parts:
            parts.append(part)
    return parts
