"""Phone numbers dictated in words (``zéro deux quatre-vingt-dix-sept soixante-neuf...``), written back in words.

Dictation is transcribed as spoken, and the labeller reads such a run as a PHONE (``docs/guidelines.md``).
Each number said (``zéro``, ``deux``, ``quatre-vingt-dix-sept``, ``vingt et un``, or digits written as
digits) stands for one or two digits; together they make the number, whose surrogate digits
(:func:`deid_ds.deidentification.contacts.surrogate_phone`: the trunk ``0`` and the region kept, the rest
keyed) are said back number by number in the same widths: a pair as one number (``quarante-trois``), a
pair that starts with ``0`` as two (``zéro cinq``), a digit alone as a digit, digits as digits.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from deid_ds.deidentification.casing import apply_case
from deid_ds.deidentification.date_words import number_words
from deid_ds.label import _numbers

_DIGIT_WORDS = ("zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf")
#: One number said: number words joined by hyphens, or by ``et`` (``vingt et un``); or digits.
_SAID = re.compile(
    rf"(?P<words>{_numbers.NUMBER_WORD}(?:-{_numbers.NUMBER_WORD})*(?:\s+et[\s-]+(?:un|onze))?)|(?P<digits>\d+)",
    re.IGNORECASE,
)


def said_numbers(text: str) -> list[tuple[int, int, str]] | None:
    """The numbers said in ``text`` (start, end, their digits), or None when anything else is written, when no
    number is in words, or when one is not one or two digits."""
    found: list[tuple[int, int, str]] = []
    cursor, words = 0, False
    for m in _SAID.finditer(text):
        if text[cursor : m.start()].strip(" \t\u00a0\u202f.-,"):
            return None
        if m["digits"]:
            found.append((m.start(), m.end(), m["digits"]))
        else:
            value = _numbers.value(m["words"])
            if value is None or value > 99:
                return None
            found.append((m.start(), m.end(), str(value)))
            words = True
        cursor = m.end()
    if text[cursor:].strip() or not words:
        return None
    return found


def phone_digits(text: str) -> str | None:
    """The digits a phone in words says (``zéro deux quarante-trois`` → ``0243``), or None."""
    said = said_numbers(text)
    return "".join(digits for _, _, digits in said) if said else None


def rewrite_phone_words(text: str, surrogate_digits: Callable[[str], str]) -> str | None:
    """``text`` with the digits it says replaced by ``surrogate_digits(digits)`` (same length), said as it was."""
    said = said_numbers(text)
    if said is None:
        return None
    new = surrogate_digits("".join(d for _, _, d in said))
    out, cursor, at = [], 0, 0
    for start, end, digits in said:
        part, at = new[at : at + len(digits)], at + len(digits)
        original = text[start:end]
        if original.isdigit():
            written = part
        elif len(part) == 2 and part[0] != "0":
            written = apply_case(number_words(int(part)), original)
        else:
            written = apply_case(" ".join(_DIGIT_WORDS[int(d)] for d in part), original)
        out += [text[cursor:start], written]
        cursor = end
    out.append(text[cursor:])
    return "".join(out)
