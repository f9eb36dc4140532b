"""French numbers written in words (``douze``, ``trente et un``, ``deux mille vingt``, ``quatre-vingt-dix-neuf``).

Dictated reports are transcribed as spoken: a date reads ``le douze mars deux mille vingt`` and a phone
number ``zéro deux quatre-vingt-dix-neuf vingt-huit ...`` (``docs/guidelines.md``: a date in any format,
numeric or written; a number dictated in words is ``PHONE``). The date and phone rules find such runs
with :data:`NUMBER_WORDS` next to a month name or after ``zéro``, and read their value with
:func:`value`. The vocabulary is small and closed, so a regex alternation is enough.
"""

from __future__ import annotations

import re
import unicodedata

from deid_ds.label._text import BLANKS, alternation

#: Every word a French number below a million is written with, unaccented, and its value.
WORDS: dict[str, int] = {
    "zero": 0, "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7,
    "huit": 8, "neuf": 9, "dix": 10, "onze": 11, "douze": 12, "treize": 13, "quatorze": 14, "quinze": 15,
    "seize": 16, "vingt": 20, "vingts": 20, "trente": 30, "quarante": 40, "cinquante": 50, "soixante": 60,
    "cent": 100, "cents": 100, "mille": 1000, "mil": 1000,
}  # fmt: skip

#: One number word, a whole word (``zéro`` also with its accent; use with ``re.IGNORECASE``).
NUMBER_WORD = rf"(?:{alternation(('zéro', *WORDS))})(?![^\W\d_])"
#: A run of number words as French writes one number: joined by hyphens or blanks, ``et`` before
#: ``un``/``onze`` (``vingt et un``, ``soixante-et-onze``).
NUMBER_WORDS = rf"{NUMBER_WORD}(?:(?:-|{BLANKS})(?:et(?:-|{BLANKS}))?{NUMBER_WORD})*"

_WORD = re.compile(r"[^\W\d_]+")


def fold_word(word: str) -> str:
    """``word`` lowered and without accents (``Zéro`` → ``zero``), the form :data:`WORDS` is keyed by."""
    return "".join(c for c in unicodedata.normalize("NFD", word.lower()) if not unicodedata.combining(c))


def value(words: str) -> int | None:
    """The number a run of number words writes (``trente et un`` → 31, ``mille neuf cent
    quatre-vingt-dix-neuf`` → 1999), or None if a word is not a number word."""
    total = current = 0
    previous = ""
    for word in _WORD.findall(words):
        word = fold_word(word)
        if word == "et":
            continue
        n = WORDS.get(word)
        if n is None:
            return None
        if n == 1000:
            total += (current or 1) * 1000
            current = 0
        elif n == 100:
            current = (current or 1) * 100
        elif n == 20 and previous == "quatre":
            current += 80 - 4  # quatre-vingt(s)
        else:
            current += n
        previous = word
    return total + current


def word_count(words: str) -> int:
    """How many number words (``et`` not counted) a run holds."""
    return sum(1 for w in _WORD.findall(words) if fold_word(w) != "et")
