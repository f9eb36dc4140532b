"""Small regex building blocks shared by the pattern modules (accent-tolerant words, blanks)."""

from __future__ import annotations

import re

#: Horizontal blanks that may separate the parts of one entity: space, tab, no-break spaces (``&nbsp;``
#: reads as U+00A0 in extracted text). Never a newline: an entity does not run across lines.
BLANK = r"[ \t\u00a0\u202f\u2007]"
BLANKS = BLANK + "+"

#: Names of the identifiers both numbers and dates are confused with (patient, stay, file and professional
#: numbers): a number written just after one of them is that identifier.
_IDENTIFIER_NAMES = r"ipp|nip|nir|ins|rpps|adeli|finess|dossier|s[ée]jour|id"


def after_identifier_name(extra: str) -> re.Pattern[str]:
    """A regex matching the end of a text that names an identifier (:data:`_IDENTIFIER_NAMES`, or one of
    ``extra``'s alternatives) and then at most 12 characters that are no digit nor newline (``IPP : ``)."""
    return re.compile(rf"\b(?:{_IDENTIFIER_NAMES}|{extra})\b[^\n\d]{{0,12}}$", re.IGNORECASE)


_ACCENTED = {
    "é": "e\u0301",
    "è": "e\u0300",
    "ê": "e\u0302",
    "û": "u\u0302",
    "ô": "o\u0302",
    "î": "i\u0302",
    "à": "a\u0300",
}


def accent_tolerant(word: str) -> str:
    """A regex for ``word`` that also accepts it unaccented or in decomposed (NFD) form.

    Typed notes drop accents (``fevrier``, ``DECEMBRE``) and some exports are NFD; a month name must be
    found in all three spellings. Use with ``re.IGNORECASE`` for capitals.
    """
    out = []
    for ch in word:
        if ch in _ACCENTED:
            base = _ACCENTED[ch][0]
            out.append(f"(?:{ch}|{base}{_ACCENTED[ch][1]}?)")
        elif ch == ".":
            out.append(r"\.")
        else:
            out.append(ch)
    return "".join(out)


def not_after(char: str, before: str) -> str:
    r"""``(?<!before)char`` written ``char`` first: ``char(?<!before char)``, the same matches, found faster.

    The regex engine tries a pattern that starts with a lookbehind at every character of a note, and
    one that starts with a character or a character set only where such a character is (it skips to
    it): a pattern that starts with a digit, a ``+`` or a month's first letter starts with this.
    ``char`` matches exactly one character, ``before`` one character. Worth it (the notes of
    ``benchmarks/weak_label.py``, side by side with the plain forms of
    ``tests/label/test_label_regexes_match_plain_forms.py``): numeric dates 175 against 697 µs a note,
    years 110 against 340, phones 83 against 949.
    """
    return f"{char}(?<!{before}{char})"


def alternation(words: list[str] | tuple[str, ...]) -> str:
    """Accent-tolerant alternation, longest first so that ``juillet`` wins over ``juil``."""
    return "|".join(accent_tolerant(w) for w in sorted(words, key=len, reverse=True))


#: A number followed by a unit or a counted noun is a quantity, never a year nor a postcode:
#: ``2000 mg``, ``12000 /mm3``, ``25000 UI``. Use with ``.match(text, end_of_number)``.
_END = r"(?![\w'’])"  # a whole word: "L" is litres, "L'Hermitage" is a city
QUANTITY_AFTER = re.compile(
    r"[ \u00a0\u202f]*(?:%|‰|€|\$|/|×|(?:mg|µg|ug|mcg|g|kg|ml|cl|dl|l|UI|U|mUI|mmol|µmol|umol|cc|kcal|cal|m|km|mm|cm|"
    r"pas|fois|cp|comprimés?|gouttes?|unités?|x|cellules|plaquettes|éléments|ms|s|min|h|ans?|mois|jours?|"
    r"semaines?|patients?|cas|points?|copies|G/L)" + _END + ")",
    re.IGNORECASE,
)
