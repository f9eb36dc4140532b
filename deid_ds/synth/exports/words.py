"""Numbers, dates and phone numbers written out in French words, as dictation and typed letters spell them.

A speech recogniser transcribes ``le douze mars deux mille vingt`` and ``zéro six douze trente-quatre...``
when the physician speaks them; administrative letters typed in capitals write ``LE PREMIER JUIN``. The
guidelines annotate all of them (a date in words is a ``DATE``, a number dictated in words is a ``PHONE``),
so the generator must be able to write them. Pure functions, lower case; callers change the case.
"""

from __future__ import annotations

from datetime import date

from deid_ds.synth.formats import MONTHS, WEEKDAYS

_UNITS = (
    "zéro",
    "un",
    "deux",
    "trois",
    "quatre",
    "cinq",
    "six",
    "sept",
    "huit",
    "neuf",
    "dix",
    "onze",
    "douze",
    "treize",
    "quatorze",
    "quinze",
    "seize",
)
_TENS = {2: "vingt", 3: "trente", 4: "quarante", 5: "cinquante", 6: "soixante"}


def _below_100(n: int) -> str:
    if n <= 16:
        return _UNITS[n]
    if n < 20:
        return "dix-" + _UNITS[n - 10]
    tens, unit = divmod(n, 10)
    if tens in (7, 9):  # soixante-dix, quatre-vingt-dix: the teens on top of 60 and 80
        base = "soixante" if tens == 7 else "quatre-vingt"
        rest = n - (60 if tens == 7 else 80)
        if rest == 11 and tens == 7:
            return "soixante et onze"
        return f"{base}-{_below_100(rest)}"
    if tens == 8:
        return "quatre-vingts" if unit == 0 else "quatre-vingt-" + _UNITS[unit]
    if unit == 0:
        return _TENS[tens]
    if unit == 1:
        return f"{_TENS[tens]} et un"
    return f"{_TENS[tens]}-{_UNITS[unit]}"


def number_words(n: int) -> str:
    """``0 <= n < 10000`` in words: ``2020`` -> ``deux mille vingt``, ``1957`` -> ``mille neuf cent cinquante-sept``."""
    if not 0 <= n < 10000:
        raise ValueError("only numbers from 0 to 9999 are written in words")
    if n < 100:
        return _below_100(n)
    thousands, rest = divmod(n, 1000)
    words: list[str] = []
    if thousands:
        words.append("mille" if thousands == 1 else f"{_UNITS[thousands]} mille")
    hundreds, rest = divmod(rest, 100)
    if hundreds:
        prefix = "" if hundreds == 1 else _UNITS[hundreds] + " "
        words.append(prefix + ("cents" if hundreds > 1 and rest == 0 else "cent"))
    if rest:
        words.append(_below_100(rest))
    return " ".join(words)


def year_words(year: int, *, spoken: bool = False) -> str:
    """``1957`` -> ``mille neuf cent cinquante-sept``, or ``dix-neuf cent cinquante-sept`` as people say it."""
    if spoken and 1100 <= year < 2000:
        century, rest = divmod(year, 100)
        return f"{_below_100(century)} cent" + (f" {_below_100(rest)}" if rest else "")
    return number_words(year)


def day_words(day: int) -> str:
    """``1`` -> ``premier``, ``12`` -> ``douze``."""
    return "premier" if day == 1 else number_words(day)


def date_words(d: date, *, year: bool = True, weekday: bool = False, spoken: bool = False) -> str:
    """``douze mars deux mille vingt``, ``premier juin``, ``lundi trois février deux mille vingt et un``."""
    words = f"{day_words(d.day)} {MONTHS[d.month - 1]}"
    if weekday:
        words = f"{WEEKDAYS[d.weekday()]} {words}"
    if year:
        words += " " + year_words(d.year, spoken=spoken)
    return words


def phone_words(digits: str, *, by_digit: bool = False) -> str:
    """A ten-digit number as dictated: pairs (``zéro six douze trente-quatre...``) or one digit at a time."""
    if by_digit:
        return " ".join(_UNITS[int(c)] for c in digits)
    pairs = [digits[i : i + 2] for i in range(0, len(digits), 2)]
    return " ".join(
        (f"zéro {_UNITS[int(p[1])]}" if p[0] == "0" else _below_100(int(p))) if len(p) == 2 else _UNITS[int(p)]
        for p in pairs
    )
