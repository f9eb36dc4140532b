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
from functools import lru_cache

from deid_ds.label._text import BLANK, BLANKS, alternation

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
# What may continue a run of number words after its end: a joiner ("-", blanks, "et"), then two fragments of
# letters split by one blank, as OCR and speech-to-text cut a word ("deux mille n euf", "mil neuf cent vin gt").
_SPLIT_WORD = re.compile(
    rf"(?:-|{BLANKS})(?:et(?:-|{BLANKS}))?(?P<a>[^\W\d_]{{1,6}}){BLANK}(?P<b>[^\W\d_]{{1,7}})(?![^\W\d_])",
    re.IGNORECASE,
)
# ... or the end of the run's last word cut off it ("deux mil le seize"): a short fragment that is no word.
_WORD_END = re.compile(rf"{BLANK}(?P<b>[^\W\d_]{{1,4}})(?![^\W\d_])")
_LAST_WORD = re.compile(r"[^\W\d_]+$")
_NEXT_WORD = re.compile(rf"(?:-|{BLANKS})(?:et(?:-|{BLANKS}))?{NUMBER_WORD}", re.IGNORECASE)


def fold_word(word: str) -> str:
    """``word`` lowered and without accents (``Zéro`` → ``zero``), the form :data:`WORDS` is keyed by."""
    return "".join(c for c in unicodedata.normalize("NFD", word.lower()) if not unicodedata.combining(c))


def _joins(word: str, piece: str) -> bool:
    """Whether ``word`` and the ``piece`` after it are one number word a blank cut in two: together a number
    word, and one of them none (``n euf``, ``mil le``; ``six cent`` are two words)."""
    return word + piece in WORDS and piece != "et" and word != "et" and (word not in WORDS or piece not in WORDS)


def split_run_end(text: str, end: int) -> int:
    """Where a run of number words ending at ``end`` ends once the words a blank cut in two are read
    whole (``deux mille [n euf]``, ``mil neuf cent [vin gt] [deux]``), with the whole words after them;
    ``end`` itself when none follows."""
    while True:
        last = _LAST_WORD.search(text, max(0, end - 12), end)
        m = _WORD_END.match(text, end)
        if m is None or last is None or not _joins(fold_word(last.group()), fold_word(m.group("b"))):
            m = _SPLIT_WORD.match(text, end)
            if m is None or not _joins(fold_word(m.group("a")), fold_word(m.group("b"))):
                return end
        end = m.end()
        while (word := _NEXT_WORD.match(text, end)) is not None:
            end = word.end()


def value(words: str) -> int | None:
    """The number a run of number words writes (``trente et un`` → 31, ``mille neuf cent
    quatre-vingt-dix-neuf`` → 1999), or None if a word is not a number word. A word a blank cut in
    two (``n euf``) is read whole, as :func:`split_run_end` extends a run over it."""
    total = current = 0
    previous = ""
    pieces = [fold_word(w) for w in _WORD.findall(words)]
    for i, word in enumerate(pieces):
        if word == "et" or not word:
            continue
        if i + 1 < len(pieces) and _joins(word, pieces[i + 1]):
            word, pieces[i + 1] = word + pieces[i + 1], ""
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


# -- figures a scan read as letters: "O" and "o" for 0, "I" and "l" for 1, "S" for 5, "B" for 8 ("l2/O4/2019",
# "O2 98 44 55 66", "poste B833"), inside a run of figures only (a word with no figure, "Il", "SOS", is left, and so
# is a run glued to another letter, "pO2", "1Oh").
_LOOK_ALIKES = str.maketrans({"O": "0", "o": "0", "I": "1", "l": "1", "S": "5", "B": "8"})
_RUN_CHARS = frozenset("0123456789OoIlSB")
# a figure beside a look-alike (written figure first, which the regex engine skips to: 11 against 20 µs a note)
_LOOK_ALIKE_BESIDE_DIGIT = re.compile(r"\d(?:(?<=[OoIlSB]\d)|(?=[OoIlSB]))")


@lru_cache(maxsize=4)  # the date and the phone rules read the same note one after the other
def read_look_alikes(text: str) -> str:
    """``text`` with the letters a scan writes for figures read back as figures inside each run of figures
    (``l2/O4/2O19`` → ``12/04/2019``), the same length, so that the offsets of the date and phone patterns
    run on it hold in ``text``. ``text`` itself when no such letter touches a figure (most notes).

    A run is the longest stretch of figures and look-alikes around a figure that touches one, with no other
    letter on either side; only the few places the search finds are looked at (a substitution over every
    run of the note cost 50 µs)."""
    chars: list[str] | None = None
    end = 0
    for m in _LOOK_ALIKE_BESIDE_DIGIT.finditer(text):
        if m.start() < end:
            continue
        start = m.start()
        while start > 0 and text[start - 1] in _RUN_CHARS:
            start -= 1
        end = m.end()
        while end < len(text) and text[end] in _RUN_CHARS:
            end += 1
        if (start and text[start - 1].isalpha()) or (end < len(text) and text[end].isalpha()):
            continue
        if chars is None:
            chars = list(text)
        chars[start:end] = text[start:end].translate(_LOOK_ALIKES)
    return text if chars is None else "".join(chars)
