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
from functools import lru_cache

from deid_ds.resources import french_abbreviations

_LETTER = r"[^\W\d_]"
# Word characters for names and words: letters and combining accents (text in NFD form).
_WORD = r"(?:[^\W\d_]|[\u0300-\u036f])"
_ELISION = r"(?:jusqu|lorsqu|puisqu|quoiqu|presqu|qu|[cdjlmnst])['\u2019]"
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\ufeff"


@lru_cache(maxsize=1)
def token_pattern() -> re.Pattern[str]:
    """The tokenizer's regular expression (compiled once: it embeds the abbreviation list)."""
    abbreviations = sorted(
        (re.escape(a) for a in french_abbreviations() if re.fullmatch(r"[^\W\d_]+(?:\.[^\W\d_]+)*", a)),
        key=len,
        reverse=True,
    )
    alternatives = [
        # e-mail addresses
        r"[\w.+\-]*\w@[\w\-]+(?:\.[\w\-]+)+",
        # URLs
        r"(?:https?://|www\.)[^\s<>\"]*[^\s<>\".,;:!?)\]]",
        # initials: J.-P.  J.P.  (several letters)
        rf"(?<!{_LETTER}){_LETTER}\.(?:-?{_LETTER}\.)+",
        # known abbreviations with their period (not followed by a letter: 'cf.x' is not 'cf.')
        rf"(?i:(?<!{_LETTER})(?:{'|'.join(abbreviations)})\.)(?!{_LETTER}|\d)",
        # a single capital initial with its period: J. Dupont
        rf"(?<!{_LETTER})[A-ZÀ-ÖØ-Þ]\.(?!{_LETTER}|\d)",
        # elided article or pronoun before a letter: l'hôpital, d'Rennes, qu'il, jusqu'à
        rf"(?i:(?<!{_LETTER}){_ELISION})(?={_LETTER})",
        # words, with inner hyphens and apostrophes: Jean-Pierre, aujourd'hui, O'Neil
        rf"{_WORD}+(?:[\-'\u2019]{_WORD}+)*",
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
    return re.compile("|".join(f"(?:{a})" for a in alternatives))


def tokenize(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Token ``(start, end)`` offsets of ``text[start:end]``, as offsets into ``text``."""
    end = len(text) if end is None else end
    if start == 0 and end == len(text):
        piece, base = text, 0
    else:
        piece, base = text[start:end], start
    return [(base + m.start(), base + m.end()) for m in token_pattern().finditer(piece)]


def token_texts(text: str) -> list[str]:
    """The tokens of ``text`` as strings (convenient in tests and notebooks)."""
    return [text[s:e] for s, e in tokenize(text)]
