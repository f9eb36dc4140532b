"""Dates written in words, as dictation is transcribed: read them, and write their shifted date in words again.

``le trente juillet deux mille vingt-deux``, ``VENDREDI PREMIER MARS``, ``dix-neuf cent cinquante-huit``: a
DATE span the labeller reads in words (or a gold span written so) is shifted like any other date, and written
back in words, in the original's style: capitals, lower case or a capital first; ``premier`` for the first;
a year in thousands (``mille neuf cent``), in ``mil`` or in hundreds (``dix-neuf cent``) as it was; hyphens
between the tens and units only (``vingt et un``, traditional) or between every word (``vingt-et-un``, the 1990
spelling); a month without accents when the span has none.

Reading is forgiving of what scanning and dictation do to the words, since the span is a date whatever its
spelling: words glued (``deuxmille``) or cut (``deu x``, ``OCTO-`` at a line end) are read from the span's
letters alone, cut into number words, ``et``, ``premier``, months and weekdays, and digits that stand for letters
inside a word (``quat0rze``, ``mi1le``) are read as those letters. The writer :func:`number_words` and the
reader (:func:`deid_ds.label._numbers.value`) agree on every day and year (tested round trip).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from deid_ds.deidentification.casing import case_style, strip_accents
from deid_ds.label import _numbers
from deid_ds.label.dates import MAX_YEAR, MIN_YEAR, MONTH_ABBREVIATIONS, MONTHS, WEEKDAYS

_UNITS = (
    "zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix",
    "onze", "douze", "treize", "quatorze", "quinze", "seize",
)  # fmt: skip
_TENS = {2: "vingt", 3: "trente", 4: "quarante", 5: "cinquante", 6: "soixante", 8: "quatre-vingt"}
_NUMBER_WORDS = tuple(_numbers.WORDS)
_MONTH_KEYS = tuple(strip_accents(m) for m in MONTHS)
#: The words a date in words is cut into (folded: lower case, no accents).
_VOCABULARY = frozenset((*_NUMBER_WORDS, "et", "premier", *_MONTH_KEYS, *WEEKDAYS))
_LONGEST = max(len(w) for w in _VOCABULARY)
#: Digits standing for letters inside a word (scanning): ``quat0rze``, ``mi1le``.
_DIGIT_LETTERS = str.maketrans({"0": "o", "1": "l"})
_DIGIT_IN_WORD = re.compile(r"(?<=[^\W\d_])[01]|[01](?=[^\W\d_])")
_WORD_CHARACTER = re.compile(r"[^\W\d_]")


def _below_hundred(n: int, joiner: str, final: bool) -> str:
    """``n`` (0-99) in words: ``vingt et un``, ``soixante-dix``, ``quatre-vingts`` (``final``: nothing follows)."""
    if n <= 16:
        return _UNITS[n]
    if n < 20:
        return f"dix-{_UNITS[n - 10]}"
    tens, units = divmod(n, 10)
    if tens in (7, 9):  # soixante-dix, quatre-vingt-dix: the tens below, then 10 to 19
        base, rest = _TENS[tens - 1], n - (tens - 1) * 10
        if rest == 11 and tens == 7:
            return f"{base}{joiner}et{joiner}onze"
        return f"{base}-{_below_hundred(rest, joiner, final)}"
    base = _TENS[tens]
    if units == 0:
        return base + ("s" if tens == 8 and final else "")
    if units == 1 and tens != 8:
        return f"{base}{joiner}et{joiner}un"
    return f"{base}-{_UNITS[units]}"


def number_words(n: int, *, reform: bool = False, mil: bool = False, hundreds: bool = False) -> str:
    """``n`` (1-9999) in French words. ``reform``: every word joined by hyphens (1990 spelling); ``mil``: the
    thousand of a year written ``mil``; ``hundreds``: a year of 1100-1999 as hundreds (``dix-neuf cent``)."""
    joiner = "-" if reform else " "
    parts: list[str] = []
    if hundreds and 1100 <= n <= 1999:
        centuries, rest = divmod(n, 100)
        parts.append(_below_hundred(centuries, joiner, False) + (" cent" if rest else " cents"))
    else:
        thousands, rest = divmod(n, 1000)
        if thousands:
            word = "mil" if mil and thousands == 1 else "mille"
            parts.append(word if thousands == 1 else f"{_below_hundred(thousands, joiner, False)} {word}")
        centuries, rest = divmod(rest, 100)
        if centuries:
            plural = "s" if centuries > 1 and not rest else ""
            parts.append(("cent" if centuries == 1 else f"{_UNITS[centuries]} cent") + plural)
    if rest or not parts:
        parts.append(_below_hundred(rest, joiner, True))
    return joiner.join(" ".join(parts).split()) if reform else " ".join(parts)


def _letters(text: str) -> str:
    """The span's letters, folded, with digits inside words read as letters, everything else dropped."""
    text = _DIGIT_IN_WORD.sub(lambda m: m.group().translate(_DIGIT_LETTERS), text)
    return "".join(_WORD_CHARACTER.findall(strip_accents(text).lower()))


def _near(head: str, fuzzy: bool) -> str | None:
    """The vocabulary word ``head`` is, or (``fuzzy``) is one letter away from (four letters or more)."""
    if head in _VOCABULARY:
        return head
    if not fuzzy or len(head) < 4:
        return None
    for word in _BY_LENGTH.get(len(head), ()):
        if sum(a != b for a, b in zip(head, word)) == 1:
            return word
    return None


_BY_LENGTH: dict[int, tuple[str, ...]] = {}
for _word in sorted(_VOCABULARY):
    _BY_LENGTH[len(_word)] = (*_BY_LENGTH.get(len(_word), ()), _word)


@lru_cache(maxsize=4096)
def _segmentations(letters: str, fuzzy: bool = False) -> tuple[tuple[str, ...], ...]:
    """Every way of cutting ``letters`` into words of the vocabulary (few: the words seldom hide each other);
    ``fuzzy``: a word of four letters or more may have one letter misread (``decembrc``, ``cinqvante``)."""
    if not letters:
        return ((),)
    out: list[tuple[str, ...]] = []
    for size in range(1, min(_LONGEST, len(letters)) + 1):
        word = _near(letters[:size], fuzzy)
        if word is not None:
            out += [(word, *rest) for rest in _segmentations(letters[size:], fuzzy)][:8]
    return tuple(out)


#: What scanning makes of letters, undone when a span reads no other way: ``rn`` for ``m``, ``ri`` for ``n``.
_SCAN_MISREADS = (("rn", "m"), ("ri", "n"))


@dataclass(frozen=True)
class WordsDate:
    """A date read in words: which fields it gives, their values, and how it was written."""

    day: int | None
    month: int | None
    year: int | None
    weekday: bool
    style: str  # upper (all capitals), title (a capital first) or lower
    reform: bool  # every word joined by hyphens
    mil: bool  # the year's thousand written "mil"
    hundreds: bool  # the year written in hundreds ("dix-neuf cent")
    accents: bool  # the span writes accents (a month without them stays without)


def _value(tokens: tuple[str, ...]) -> int | None:
    if not tokens or any(t not in _NUMBER_WORDS and t != "et" for t in tokens) or tokens[0] == "et":
        return None
    return _numbers.value(" ".join(tokens))


def _read(tokens: tuple[str, ...]) -> tuple[int | None, int | None, int | None, bool] | None:
    """(day, month, year, weekday) of a cut span, or None when it is not a date in words."""
    weekday = bool(tokens) and tokens[0] in WEEKDAYS
    body = tokens[1:] if weekday else tokens
    months = [i for i, t in enumerate(body) if t in _MONTH_KEYS]
    if len(months) > 1 or any(t in WEEKDAYS for t in body):
        return None
    if not months:
        value = _value(body)
        if weekday or value is None:
            return None
        if MIN_YEAR <= value <= MAX_YEAR and any(t in ("mil", "mille", "cent", "cents") for t in body):
            return None, None, value, False
        return (value, None, None, False) if 1 <= value <= 31 else None
    at = months[0]
    head, tail = body[:at], body[at + 1 :]
    day = 1 if head == ("premier",) else _value(head) if head else None
    year = _value(tail) if tail else None
    if (head and not (day and 1 <= day <= 31)) or (tail and not (year and MIN_YEAR <= year <= MAX_YEAR)):
        return None
    if day is None and year is None:
        return None  # a month alone is not a date
    return day, _MONTH_KEYS.index(body[at]) + 1, year, weekday


def _cuts(letters: str):
    """The cuts of ``letters`` that hold a number word: exact ones first, then through scanning misreads."""
    variants = [letters, *(letters.replace(a, b) for a, b in _SCAN_MISREADS if a in letters)]
    combined = letters
    for a, b in _SCAN_MISREADS:
        combined = combined.replace(a, b)
    variants += [combined] if combined not in variants else []
    for fuzzy in (False, True):
        for variant in variants:
            for tokens in _segmentations(variant, fuzzy):
                if any(t in _NUMBER_WORDS or t == "premier" for t in tokens):
                    yield tokens


_MONTH_SPELLINGS = tuple(sorted({*_MONTH_KEYS, *(strip_accents(a) for a in MONTH_ABBREVIATIONS)}))


def read_month(text: str) -> str | None:
    """The month a scan wrote (``novcmbre``, ``0CT``, ``SEPT EMBRE``, ``avriI``, ``octo-`` at a line end) as its
    folded spelling (``novembre``, ``oct``), or None: read as the words of a date in words are, one spelling
    only."""
    cleaned = re.sub(r"(?<=[a-zà-ÿ])I|I(?=[a-zà-ÿ])", "l", re.sub(r"-\s*\n\s*", "", text))
    letters = _letters(cleaned)
    if letters in _MONTH_SPELLINGS:
        return letters
    variants = {letters, *(letters.replace(a, b) for a, b in _SCAN_MISREADS)}
    found = {m for v in variants for m in _MONTH_SPELLINGS if v == m or _one_letter_off(v, m)}
    return found.pop() if len(found) == 1 else None


def _one_letter_off(a: str, b: str) -> bool:
    return len(a) == len(b) >= 4 and sum(x != y for x, y in zip(a, b)) == 1


def read_words(text: str) -> WordsDate | None:
    """A DATE span written in words (at least one number in words: ``12 mars`` is read elsewhere), or None."""
    if any(c.isdigit() for c in _DIGIT_IN_WORD.sub("", text)):
        return None
    # a capital I inside a word in lower case is an l (``juiIlet``), a line-end hyphen cuts a word (``OCTO-``)
    cleaned = re.sub(r"(?<=[a-zà-ÿ])I|I(?=[a-zà-ÿ])", "l", re.sub(r"-\s*\n\s*", "", text))
    letters = _letters(cleaned)
    for tokens in _cuts(letters):
        read = _read(tokens)
        if read is not None:
            folded = strip_accents(text).lower()
            return WordsDate(
                *read,
                style="upper" if case_style(text) == "upper" else "title" if text[:1].isupper() else "lower",
                reform=bool(re.search(r"(?:mille|cent|\bet)-|-et\b", folded)),
                mil=bool(re.search(r"\bmil\b", folded)),
                hundreds="cent" in letters and "mil" not in letters,
                accents=not text.isascii(),
            )
    return None


def render_words(parsed: WordsDate, day: int | None, month: int | None, year: int | None, weekday: str) -> str:
    """The date (the fields ``parsed`` gives) in words, in ``parsed``'s style; ``weekday``: the new one's name."""
    parts: list[str] = []
    if parsed.weekday:
        parts.append(weekday)
    if parsed.day is not None and day is not None:
        parts.append("premier" if day == 1 and parsed.month is not None else number_words(day, reform=parsed.reform))
    if parsed.month is not None and month is not None:
        name = MONTHS[month - 1]
        parts.append(name if parsed.accents else strip_accents(name))
    if parsed.year is not None and year is not None:
        parts.append(number_words(year, reform=parsed.reform, mil=parsed.mil, hundreds=parsed.hundreds))
    out = " ".join(parts)
    if parsed.style == "upper":
        return out.upper() if parsed.accents else strip_accents(out).upper()
    if parsed.style == "title":
        return out[:1].upper() + out[1:]
    return out
