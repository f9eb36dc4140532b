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

Tokens are ``(start, end)`` offsets into the text; :mod:`deid_ds.segmentation.segmenter` adds HTML offsets.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from deid_ds.resources import french_abbreviations

_LETTER = r"[^\W\d_]"
# What follows the first letter of a word, possibly with combining accents (text in NFD form). Written as
# "letters, then (accents, letters)*" rather than an alternation per character, which is several times slower.
_WORD_REST = r"[^\W\d_]*(?:[\u0300-\u036f]+[^\W\d_]*)*"
_WORD = _LETTER + _WORD_REST
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\ufeff"


# The token alternatives, in order (the first that matches at a position wins): initials, words, dashed
# phone numbers, dashed dates, "+33", numbers, punctuation. They are written grouped by the class of their
# first character (a letter, a digit, "+", anything else), each group starting with a one-character test:
# sre rejects a branch on that test without entering it, and the lookahead in front of the pattern (every
# token starts with a visible character) rejects whitespace, a third of all positions, at once. Groups
# cannot compete, since their first characters differ, and the alternatives inside a group keep their
# order, so the tokens are those of the flat list (tests/segmentation/test_tokens.py keeps it as the reference);
# grouped, the pattern runs in two thirds of the time.
_CORE_ALTERNATIVES = [
    # a letter: initials (J.-P.  J.P.), else a word with inner hyphens and apostrophes (Jean-Pierre,
    # aujourd'hui, l'hôpital: split below)
    rf"{_LETTER}(?:\.(?:-?{_LETTER}\.)+(?!{_LETTER})|{_WORD_REST}(?:[\-'\u2019]{_WORD})*)",
    # a digit: a dashed phone number (02-99-28-43-21), else a dashed date (2021-02-03, 03-02-2021), else a
    # number with inner . , / : separators (03/02/2021, 02.99.28.43.21, 1,5, 14:30)
    r"\d(?:\d(?:-\d{2}){4}(?!\d)|\d{0,3}-\d{1,2}-\d{1,4}(?![\d-])|\d*(?:[.,/:]\d+)*)",
    # an international prefix, not after a word character or another "+": +33
    r"\+(?<![\w+]\+)\d{1,3}(?!\d)",
    # runs of the same punctuation (----, ...., ___) or one other visible character
    rf"__*|([^\w\s{_INVISIBLE}])\1*",
]
_ADDRESS_ALTERNATIVES = [
    # e-mail addresses
    r"[\w.+\-]*\w@[\w\-]+(?:\.[\w\-]+)+",
    # URLs
    r"(?:https?://|www\.)[^\s<>\"]*[^\s<>\".,;:!?)\]]",
]


def _token_pattern(alternatives: list[str]) -> re.Pattern[str]:
    """One pattern trying ``alternatives`` in order, at positions holding a visible character only."""
    return re.compile(rf"(?=[^\s{_INVISIBLE}])(?:" + "|".join(f"(?:{a})" for a in alternatives) + ")")


_CORE = _token_pattern(_CORE_ALTERNATIVES)
# Only the surroundings of an address pay for the address alternatives (they backtrack over every word).
_WITH_ADDRESSES = _token_pattern(_ADDRESS_ALTERNATIVES + _CORE_ALTERNATIVES)
_ELISIONS = frozenset({"c", "d", "j", "l", "m", "n", "s", "t", "qu", "jusqu", "lorsqu", "puisqu", "quoiqu", "presqu"})
_APOSTROPHES = ("'", "\u2019")


# Cheap pre-checks, run with pos/endpos on the note's text (no slicing): where an address may be, and
# where the characters a fix-up may apply to are.
_ADDRESS_HINT = re.compile(r"@|://|www\.")
_WHITESPACE = re.compile(r"\s")
_FIXUP_CHARS = re.compile(r"[.'\u2019]")


def fixup_positions(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """Ascending positions of periods and apostrophes in ``text[start:end]`` (see :func:`tokenize_with`)."""
    end = len(text) if end is None else end
    return [m.start() for m in _FIXUP_CHARS.finditer(text, start, end)]


def tokenize(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Token ``(start, end)`` offsets of ``text[start:end]``, as offsets into ``text``."""
    end = len(text) if end is None else end
    return tokenize_with(text, start, end, fixup_positions(text, start, end))


def tokenize_with(text: str, start: int, end: int, fixups: list[int]) -> list[tuple[int, int]]:
    """:func:`tokenize` with the fix-up positions computed by the caller.

    ``fixups`` are the ascending positions of ``.``, ``'`` and ``\u2019`` inside the range.
    :class:`deid_ds.segmentation.segmenter.Segmenter` finds them once per note rather than once per sentence: a note
    has a hundred short sentences, and the per-call set-up was a large part of tokenisation.

    Fix-ups run from right to left, and one only changes the token holding its position and the one
    before it: the tokens after those are moved, in reverse, to ``done`` before it, so that the
    changes are made at the end of ``spans``, in constant time (spliced in the middle of the list, each
    moved all the tokens after it: quadratic on a note of megabytes).
    """
    spans = _pattern_spans(text, start, end)
    if not fixups:
        return spans
    # Fix-ups, from right to left so that indices stay valid; only where a period or an apostrophe is.
    abbreviations = french_abbreviations()
    done: list[tuple[int, int]] = []  # the tokens no later (more leftward) fix-up can reach, last first
    for position in reversed(fixups):
        i = bisect_right(spans, (position, end + 1)) - 1
        if i + 1 < len(spans):
            done.extend(reversed(spans[i + 1 :]))
            del spans[i + 1 :]
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
    done.reverse()
    spans += done
    return spans


def _pattern_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Matches of the token pattern in ``text[start:end]``, with the address alternatives only near an address.

    An e-mail address or a URL holds no whitespace and holds ``@``, ``://`` or ``www.``: it lies inside
    the region that runs from the last space or newline before such a hint to the first whitespace after
    it. Cutting the range at whitespace characters changes no token: no alternative matches whitespace
    or starts on it, and the lookaheads read whitespace exactly as they read the end of a range (not a
    letter, digit or hyphen). So the regions around hints are matched with the address alternatives and
    the rest, nearly all of a note, without them.
    """
    spans: list[tuple[int, int]] = []
    position = start
    for hint in _ADDRESS_HINT.finditer(text, start, end):
        at = hint.start()
        if at < position:
            continue  # in the region of the previous hint
        region_start = max(text.rfind(" ", position, at), text.rfind("\n", position, at), position)
        after = _WHITESPACE.search(text, hint.end(), end)
        region_end = end if after is None else after.start()
        spans += [m.span() for m in _CORE.finditer(text, position, region_start)]
        spans += [m.span() for m in _WITH_ADDRESSES.finditer(text, region_start, region_end)]
        position = region_end
    spans += [m.span() for m in _CORE.finditer(text, position, end)]
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
