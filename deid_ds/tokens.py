"""Tokenisation fit for French clinical text and for the eight entity types.

Design goals, in order:

1. An entity boundary is always a token boundary: digits are split from letters (``12nov`` → ``12``
   ``nov``, ``5mg`` → ``5`` ``mg``), brackets and punctuation are their own tokens (``2007])``), and the
   French elided article is split from its word (``l'hôpital`` → ``l'`` ``hôpital``) so that
   ``d'[Rennes]`` can be annotated.
2. The things that are one entity stay one token where that is unambiguous: an e-mail address, a
   numeric date (``03/02/2021``, ``03.02.21``, ``2021-02-03``), a dotted or dashed phone number
   (``02.99.28.43.21``), a compound name (``Jean-Pierre``, ``Saint-Brieuc``), initials (``J.-P.``).
   Space-separated phone numbers give one token per digit group, which spans cover.
3. Known abbreviations keep their period (``Dr.``, ``Mme.``, ``cf.``), like single capital initials
   (``J.``), so the period is not mistaken for the end of a sentence by the model.

Tokens are ``(start, end)`` offsets into the text; :mod:`deid_ds.segment` adds HTML offsets.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from deid_ds.resources import french_abbreviations

_LETTER = r"[^\W\d_]"
# A run of letters, possibly with combining accents (text in NFD form). Written as "letters, then
# (accents, letters)*" rather than an alternation per character, which is several times slower.
_WORD = r"[^\W\d_]+(?:[\u0300-\u036f]+[^\W\d_]*)*"
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\ufeff"


_CORE_ALTERNATIVES = [
    # initials: J.-P.  J.P.  (several letters)
    rf"{_LETTER}\.(?:-?{_LETTER}\.)+(?!{_LETTER})",
    # words, with inner hyphens and apostrophes: Jean-Pierre, aujourd'hui, l'hôpital (split below)
    rf"{_WORD}(?:[\-'\u2019]{_WORD})*",
    # numeric dates with dashes and dashed phone numbers: 2021-02-03, 03-02-2021, 02-99-28-43-21
    r"\d{2}(?:-\d{2}){4}(?!\d)",
    r"\d{1,4}-\d{1,2}-\d{1,4}(?![\d-])",
    # international prefix: +33
    r"(?<![\w+])\+\d{1,3}(?!\d)",
    # numbers, with inner . , / : separators: 03/02/2021, 02.99.28.43.21, 1,5, 14:30
    r"\d+(?:[.,/:]\d+)*",
    # runs of the same punctuation (----, ...., ___) or one other visible character
    rf"_+|([^\w\s{_INVISIBLE}])\1*",
]
_ADDRESS_ALTERNATIVES = [
    # e-mail addresses
    r"[\w.+\-]*\w@[\w\-]+(?:\.[\w\-]+)+",
    # URLs
    r"(?:https?://|www\.)[^\s<>\"]*[^\s<>\".,;:!?)\]]",
]
# Only texts that may hold an address pay for the address alternatives (they backtrack over every word).
_CORE = re.compile("|".join(f"(?:{a})" for a in _CORE_ALTERNATIVES))
_WITH_ADDRESSES = re.compile("|".join(f"(?:{a})" for a in _ADDRESS_ALTERNATIVES + _CORE_ALTERNATIVES))
_ELISIONS = frozenset({"c", "d", "j", "l", "m", "n", "s", "t", "qu", "jusqu", "lorsqu", "puisqu", "quoiqu", "presqu"})
_APOSTROPHES = ("'", "\u2019")


# Cheap pre-checks, run with pos/endpos on the note's text (no slicing): does a range possibly hold an
# address, and where are the characters a fix-up may apply to.
_ADDRESS_HINT = re.compile(r"@|://|www\.")
_FIXUP_CHARS = re.compile(r"[.'\u2019]")


#: The token pattern of a range that holds no address (see :func:`pattern_for`).
CORE_PATTERN = _CORE


def may_hold_address(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether ``text[start:end]`` may hold an e-mail address or a URL."""
    end = len(text) if end is None else end
    return _ADDRESS_HINT.search(text, start, end) is not None


def pattern_for(text: str, start: int = 0, end: int | None = None) -> re.Pattern[str]:
    """The token pattern for ``text[start:end]``: with the address alternatives only where needed."""
    return _WITH_ADDRESSES if may_hold_address(text, start, end) else _CORE


def fixup_positions(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """Ascending positions of periods and apostrophes in ``text[start:end]`` (see :func:`tokenize_with`)."""
    end = len(text) if end is None else end
    return [m.start() for m in _FIXUP_CHARS.finditer(text, start, end)]


def tokenize(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Token ``(start, end)`` offsets of ``text[start:end]``, as offsets into ``text``."""
    end = len(text) if end is None else end
    return tokenize_with(text, start, end, pattern_for(text, start, end), fixup_positions(text, start, end))


def tokenize_with(
    text: str, start: int, end: int, pattern: re.Pattern[str], fixups: list[int]
) -> list[tuple[int, int]]:
    """:func:`tokenize` with its per-range inputs computed by the caller.

    ``pattern`` is :func:`pattern_for` of the range, ``fixups`` the ascending positions of ``.``, ``'``
    and ``\u2019`` inside it. :class:`deid_ds.segment.Segmenter` computes both once per note rather
    than once per sentence: a note has a hundred short sentences, and the per-call set-up was a large
    part of tokenisation.
    """
    spans = [m.span() for m in pattern.finditer(text, start, end)]
    if not fixups:
        return spans
    # Fix-ups, from right to left so that indices stay valid; only where a period or an apostrophe is.
    abbreviations = french_abbreviations()
    for position in reversed(fixups):
        i = bisect_right(spans, (position, end + 1)) - 1
        if i < 0:
            continue
        s, e = spans[i]
        if not s <= position < e:
            continue
        if text[position] == ".":
            # a known abbreviation or a single capital initial keeps its period: "Dr.", "cf.", "J."
            if e - s == 1 and i > 0 and spans[i - 1][1] == s and not _letter_or_digit_at(text, e, end):
                ps, pe = spans[i - 1]
                previous = text[ps:pe]
                if previous.lower() in abbreviations or (pe - ps == 1 and previous.isupper()):
                    spans[i - 1 : i + 1] = [(ps, e)]
        elif e - s > 2 and text[s].isalpha():
            cut = _elision_end(text[s:e])
            if cut and s + cut - 1 == position:
                spans[i : i + 1] = [(s, s + cut), (s + cut, e)]
    return spans


def _letter_or_digit_at(text: str, i: int, end: int) -> bool:
    return i < end and text[i].isalnum()


def _elision_end(token: str) -> int:
    """Length of an elided article at the start of ``token`` (``l'`` of ``l'hôpital``), or 0."""
    for apostrophe in _APOSTROPHES:
        i = token.find(apostrophe)
        if i > 0 and token[:i].lower() in _ELISIONS:
            return i + 1
    return 0


def token_texts(text: str) -> list[str]:
    """The tokens of ``text`` as strings (convenient in tests and notebooks)."""
    return [text[s:e] for s, e in tokenize(text)]
