"""Replacing entities inside the original HTML: pure functions, no I/O.

A span's ``[html_start, html_end)`` may hold markup (``<b>Jean</b> DUPONT``) and character references
(``LE&nbsp;GALL``). Only its *text segments* are rewritten — the maximal runs of source characters
that the parser turned into text (:class:`deid_ds.segmentation.offsets.OffsetMap`) — so every tag inside the span
stays where it was and the document keeps its structure. A character reference lies inside one
segment and is replaced as a whole; the replacement text is HTML-escaped; nothing outside the
segments changes.

How the replacement is shared between segments (:func:`split_replacement`): when the replacement has
as many words as the original, word ``i`` goes where word ``i`` was (a cut inside a word falls at the
same relative place), so ``<b>Jean</b> DUPONT`` becomes ``<b>Marc</b> DURAND``; otherwise each cut
moves to the word start of the replacement nearest to its proportional position (``[PATIENT]`` goes
whole into one segment). Either way the segments, read in order, spell the replacement exactly.

A span that does not start and end on text (offsets past the end, on a tag, inside a reference) or
that overlaps another is refused with :class:`SpanError`, whose message holds no note content: the
caller fails the document rather than write a half-masked one.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from deid_ds.segmentation.html_text import ParsedHtml

_WORD = re.compile(r"\S+")


class SpanError(ValueError):
    """A span that cannot be replaced safely (the message names the problem, never the content)."""


@dataclass(frozen=True, slots=True)
class Located:
    """A checked span: its HTML range, its text range, and its text segments in the source."""

    html_start: int
    html_end: int
    text_start: int
    text_end: int
    segments: tuple[tuple[int, int], ...]  # source ranges, in order, disjoint
    cuts: tuple[int, ...]  # where each segment after the first starts, as an index into the span's text


@dataclass(frozen=True, slots=True)
class Edit:
    """A located span and the text that replaces it (plain text: escaped when written)."""

    span: Located
    text: str


def locate(parsed: ParsedHtml, html_start: int, html_end: int) -> Located:
    """Check that ``[html_start, html_end)`` starts and ends on text and find its text segments."""
    if not (0 <= html_start < html_end <= len(parsed.html)):
        raise SpanError("span offsets outside the note or empty")
    text_start, text_end = parsed.text_span(html_start, html_end)
    if text_start >= text_end or parsed.html_span(text_start, text_end) != (html_start, html_end):
        raise SpanError(
            "span does not start and end on text (on a tag, inside a character reference, or stale offsets)"
        )
    starts, ends = parsed.offsets.starts, parsed.offsets.ends
    segments: list[list[int]] = []
    cuts: list[int] = []
    for i in range(text_start, text_end):
        start, end = starts[i], ends[i]
        if start == end:
            continue  # a line break or cell separator inserted for a tag: no source of its own
        if segments and segments[-1][1] == start:
            segments[-1][1] = end
        else:
            if segments:
                cuts.append(i - text_start)
            segments.append([start, end])
    return Located(html_start, html_end, text_start, text_end, tuple((s, e) for s, e in segments), tuple(cuts))


def _words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _WORD.finditer(text)]


def _aligned_cut(
    original: str, cut: int, t_words: list[tuple[int, int]], replacement: str, r_words: list[tuple[int, int]]
) -> int:
    """Where ``cut`` falls in ``replacement`` when both have the same words (word ``i`` ↔ word ``i``)."""
    previous_t, previous_r = 0, 0
    for (ts, te), (rs, re_) in zip(t_words, r_words):
        if cut <= ts:  # in the gap before this word
            if cut == previous_t:
                return previous_r
            return rs if cut == ts else previous_r + round((cut - previous_t) * (rs - previous_r) / (ts - previous_t))
        if cut < te:  # inside this word: same relative place
            return rs + round((cut - ts) * (re_ - rs) / (te - ts))
        previous_t, previous_r = te, re_
    return previous_r if cut == previous_t else len(replacement)


def split_replacement(original: str, cuts: Sequence[int], replacement: str) -> list[str]:
    """Share ``replacement`` between ``len(cuts) + 1`` segments of ``original`` cut at ``cuts``.

    The pieces concatenate to ``replacement`` exactly (see the module docstring for where cuts fall).
    """
    if not cuts:
        return [replacement]
    t_words, r_words = _words(original), _words(replacement)
    same_shape = len(t_words) == len(r_words) and t_words
    starts = sorted({0, len(replacement), *(s for s, _ in r_words)})
    positions: list[int] = []
    previous = 0
    for cut in cuts:
        if same_shape:
            position = _aligned_cut(original, cut, t_words, replacement, r_words)
        else:
            target = cut * len(replacement) / max(len(original), 1)
            position = min(starts, key=lambda s: (abs(s - target), s))
        position = min(max(position, previous), len(replacement))
        positions.append(position)
        previous = position
    bounds = [0, *positions, len(replacement)]
    return [replacement[a:b] for a, b in itertools.pairwise(bounds)]


def apply_edits(parsed: ParsedHtml, edits: Sequence[Edit]) -> tuple[str, list[tuple[int, int]]]:
    """The new HTML, and for each edit (in the given order) its ``[start, end)`` in the new HTML.

    Raises :class:`SpanError` if two edits overlap. Everything outside the edits' text segments is
    copied unchanged.
    """
    html, ranges, _ = apply_all(parsed, edits, ())
    return html, ranges


def apply_all(
    parsed: ParsedHtml, edits: Sequence[Edit], raw: Sequence[tuple[int, int, str]]
) -> tuple[str, list[tuple[int, int]], list[tuple[int, int]]]:
    """:func:`apply_edits` plus ``raw`` edits outside the text: ``html[start:end]`` becomes the given
    string, written as it is (already escaped for its place: an attribute value, a ``<title>``...).

    Returns the new HTML and the new ranges of ``edits`` and of ``raw``, each in its given order.
    A raw edit may lie inside a span's HTML range (an attribute of a tag the span holds) but never on
    one of its text segments; any overlap raises :class:`SpanError`.
    """
    html = parsed.html
    order = sorted(range(len(edits)), key=lambda k: (edits[k].span.html_start, edits[k].span.html_end))
    for a, b in itertools.pairwise(order):
        if edits[b].span.html_start < edits[a].span.html_end:
            raise SpanError("overlapping spans")
    text = parsed.text
    pieces: list[tuple[int, int, str, int]] = []  # source start, end, written text, owner (edit k, or -1 - raw index)
    for k in order:
        span = edits[k].span
        parts = split_replacement(text[span.text_start : span.text_end], span.cuts, edits[k].text)
        pieces += [(start, end, escape(piece, quote=False), k) for (start, end), piece in zip(span.segments, parts)]
    pieces += [(start, end, written, -1 - r) for r, (start, end, written) in enumerate(raw)]
    pieces.sort(key=lambda p: (p[0], p[1]))
    out: list[str] = []
    length = cursor = 0
    firsts: dict[int, int] = {}
    lasts: dict[int, int] = {}
    for start, end, written, owner in pieces:
        if start < cursor:
            raise SpanError("overlapping edits")
        kept = html[cursor:start]
        out += (kept, written)
        length += len(kept)
        firsts.setdefault(owner, length)
        length += len(written)
        lasts[owner] = length
        cursor = end
    out.append(html[cursor:])
    ranges = [(firsts.get(k, 0), lasts.get(k, 0)) for k in range(len(edits))]
    raw_ranges = [(firsts[-1 - r], lasts[-1 - r]) for r in range(len(raw))]
    return "".join(out), ranges, raw_ranges
