"""Normalisation of names and places for matching, keeping the surface forms.

Clinical notes write the same name many ways: ``LE GALL``, ``Le Gall``, ``le gall``, ``Le  Gall`` and
the Annuaire Santé writes ``LÉGER`` or ``Léger``. Matching therefore works on a *folded* form — lower
case, no accents, one kind of apostrophe, hyphen and space — while every gazetteer entry keeps the
surface form it was read with.

:func:`fold` is length-preserving (character ``i`` of the folded text is character ``i`` of the
original), so a match found in folded text is at the same offsets in the note. :func:`fold_key` is the
form stored in gazetteers: folded, with whitespace collapsed and trimmed.
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


def fold_key(text: str) -> str:
    """The matching key of a gazetteer entry: folded, whitespace collapsed, no space around hyphens."""
    key = _SPACES.sub(" ", fold(text)).strip()
    return key.replace(" - ", "-").replace("- ", "-").replace(" -", "-")


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
