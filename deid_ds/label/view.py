"""A note as the token-level rules see it: tokens, their shapes, and where lines break.

Name and address rules walk tokens (is this run of capitalised words a name? does this street name
stop before the postcode?), so the per-token facts they test are computed once per note here, not in
every rule. Built by the labeller for each note and passed to every token-level labelling function.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

from deid_ds.kb.normalize import fold

# Token shapes (one letter each, so a run of shapes can be matched with a regex if needed).
UPPER = "U"  # LE GALL, KERBRAT, D'ARC's "ARC" (two letters or more, all capitals)
TITLE = "T"  # Jeanne, Le, Saint-Brieuc, McDonald (capital then at least one lower-case letter)
INITIAL = "I"  # J. J.-P. A (one capital, with or without its period)
LOWER = "l"  # any word starting lower-case
DIGIT = "d"  # 12, 35000, 12bis
PUNCT = "p"  # everything else

_INITIAL = re.compile(r"[A-ZÀ-ÖØ-Þ]\.?(?:-[A-ZÀ-ÖØ-Þ]\.?)*")
_LETTERS = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*[-'’]?")

#: Lower-case words that belong inside French names (``Charles de Gaulle``, ``Le Bihan``, ``d'Almeida``).
PARTICLES: frozenset[str] = frozenset(
    "de du des d' d’ la le les l' l’ van von der den da di dos del della ten ter".split()
)


def _shape(token: str) -> str:
    """The shape letter of one token (see the constants of this module)."""
    first = token[0]
    if first.isdigit():
        return DIGIT
    if not first.isalpha():
        return PUNCT
    if first.islower():
        return LOWER
    if _INITIAL.fullmatch(token):
        return INITIAL
    if _LETTERS.fullmatch(token) is None:
        return PUNCT if not any(c.isalpha() for c in token) else (UPPER if token.isupper() else TITLE)
    return UPPER if token.isupper() else TITLE


def _blank(gap: str) -> bool:
    """Whether the text between two tokens keeps them on one line: blanks only, no line break or tab."""
    return (gap == "" or gap.isspace()) and "\n" not in gap and "\t" not in gap


class WordMemo(dict):
    """A function of a string, memoised in a dict of at most ``size`` entries (emptied when full).

    The view asks its functions of every token (or gap) of every note, with ``map(memo.__getitem__,
    words)``: a hit is then a plain dict lookup in C, twice as fast as a ``functools.lru_cache`` hit
    (shapes of the benchmark's notes, ``benchmarks/weak_label.py``'s 1000: 26-35 µs a note against 52-73
    with ``lru_cache``; the three memos, ~80 µs of a worker's ~2.7 ms a note). Words repeat
    across notes, so most tokens are hits; emptying a full memo bounds it in a long run.
    """

    __slots__ = ("function", "size")

    def __init__(self, function: Callable[[str], Any], size: int) -> None:
        super().__init__()
        self.function = function
        self.size = size

    def __missing__(self, key: str) -> Any:
        if len(self) >= self.size:
            self.clear()
        value = self[key] = self.function(key)
        return value


_SHAPES = WordMemo(_shape, 1 << 16)
_FOLDED = WordMemo(fold, 1 << 16)
_BLANK = WordMemo(_blank, 1024)  # the gaps of a note are a handful of distinct strings (" ", "", "\n"...)


def token_shape(token: str) -> str:
    """The shape letter of one token (see the constants of this module); memoised, words repeat."""
    return _SHAPES[token]


def blank_gap(gap: str) -> bool:
    """Whether the text between two tokens keeps them on one line: blanks only, no line break or tab."""
    return _BLANK[gap]


class NoteView:
    """Tokens of one note with their text, shape and folded form, and line structure.

    ``gap(i)`` is the text between token ``i`` and token ``i + 1``; rules use it to refuse runs that
    cross a line break, a tab (a table cell) or punctuation. Tokens are folded one word at a time
    (:attr:`folded`), not sliced from the note's folded text.
    """

    def __init__(self, text: str, tokens: Sequence[tuple[int, int]]) -> None:
        self._build(text, [s for s, _ in tokens], [e for _, e in tokens])

    @classmethod
    def of_offsets(cls, text: str, starts: list[int], ends: list[int]) -> NoteView:
        """The view of tokens given as two offset lists (the segmenter's compact form), used as they are.

        The pipeline has the offsets in this form already: pairing them up for :meth:`__init__` only
        to split them again cost a tuple per token.
        """
        view = cls.__new__(cls)
        view._build(text, starts, ends)
        return view

    def _build(self, text: str, starts: list[int], ends: list[int]) -> None:
        self.text = text
        self.starts = starts
        self.ends = ends
        self.words = [text[s:e] for s, e in zip(starts, ends)]
        self.shapes = list(map(_SHAPES.__getitem__, self.words))
        self.cache: dict[str, object] = {}  # derived structures rules share (name runs...)

    def __len__(self) -> int:
        return len(self.words)

    @cached_property
    def folded(self) -> list[str]:
        """Each token folded (lower case, no accents, same length), for lexicon lookups.

        Folded word by word through a memo rather than sliced from the folded text: :func:`fold` maps
        each character to one character, so both are the same, and a memo hit is the cheaper.
        """
        return list(map(_FOLDED.__getitem__, self.words))

    @cached_property
    def gaps(self) -> list[str]:
        """``gap(i)`` of every token but the last, sliced once per note (the run walks ask for most)."""
        text = self.text
        return [text[e:s] for e, s in zip(self.ends, self.starts[1:])]

    @cached_property
    def joins(self) -> list[bool]:
        """``joined(i)`` of every token (False for the last), computed once per note.

        Every name, street and city walk asks it of every token it crosses; a list lookup is what
        keeps those walks cheap.
        """
        return [*map(_BLANK.__getitem__, self.gaps), False] if self.starts else []

    def gap(self, i: int) -> str:
        """The characters between token ``i`` and the next one (empty after the last token)."""
        if i + 1 >= len(self.starts):
            return ""
        if i >= 0:
            return self.gaps[i]
        return self.text[self.ends[i] : self.starts[i + 1]]

    def joined(self, i: int) -> bool:
        """Whether token ``i + 1`` continues token ``i`` on the same line, separated by blanks only."""
        if i >= 0:
            joins = self.joins
            return i < len(joins) and joins[i]
        return i + 1 < len(self.starts) and blank_gap(self.gap(i))

    def index_at(self, offset: int) -> int:
        """Index of the first token that ends after ``offset`` (the token at or after it)."""
        return bisect_right(self.ends, offset)

    def index_before(self, offset: int) -> int:
        """Index of the last token that starts before ``offset`` (-1 if none)."""
        return bisect_left(self.starts, offset) - 1

    def line_start(self, i: int) -> bool:
        """Whether token ``i`` is the first of its line (or of a table cell)."""
        if i == 0:
            return True
        gap = self.text[self.ends[i - 1] : self.starts[i]]
        return "\n" in gap or "\t" in gap

    def line_end(self, i: int) -> bool:
        """Whether token ``i`` is the last of its line (or of a table cell)."""
        if i + 1 >= len(self.starts):
            return True
        gap = self.gap(i)
        return "\n" in gap or "\t" in gap

    def span(self, i: int, j: int) -> tuple[int, int]:
        """Text offsets of tokens ``i`` to ``j`` (exclusive)."""
        return self.starts[i], self.ends[j - 1]


#: What a token is to a run (see :func:`run_end`).
CORE = 2  # part of the run, and the run may end on it
INNER = 1  # part of the run only if a core token follows (particles, initials)
STOP = 0  # ends the run before it


def run_end(view: NoteView, i: int, max_tokens: int, kind) -> int:
    """End (exclusive) of the run of tokens starting at ``i``; ``i`` when no run starts there.

    The shared walk of the name, street-name and city rules: tokens on one line joined by blanks,
    at most ``max_tokens``, each classified by ``kind(j, first)`` (``first``: ``j == i``) as
    :data:`CORE`, :data:`INNER` or :data:`STOP`; the run ends on its last core token.
    """
    n = len(view)
    joined = view.joins.__getitem__ if i >= 0 else view.joined  # the per-note list, unless i counts from the end
    j, end = i, i
    while j < n and j - i < max_tokens:
        if j > i and not joined(j - 1):
            break
        what = kind(j, j == i)
        if what == STOP:
            break
        j += 1
        if what == CORE:
            end = j
    return end
