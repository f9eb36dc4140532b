"""Every view of an HTML note besides its visible text: where a value can hide, and how it reads there.

The visible text is what :func:`deid_ds.segmentation.html_text.html_to_text` extracts; its characters map to
*text segments* of the source. Everything else of the file is one of:

* ``hidden`` content, never rendered but in the file: comments, ``<title>``, ``<script>``, ``<style>``,
  ``<template>`` (the parser's :attr:`~deid_ds.segmentation.html_text.ParsedHtml.hidden` ranges);
* ``attribute`` values of start tags (``title``, ``alt``, ``href="mailto:..."``, ``src``, ``data-*``,
  ``<meta content>``);
* ``markup``: the rest of the tags (their names, attribute names, junk in end tags ``</p foo>``), the
  doctype and other declarations, processing instructions ``<?...?>``.

:func:`regions` cuts a parsed note into those regions (source ranges, with what kind each is);
:func:`decode` reads a region the way a person or a parser would — character references decoded, soft
hyphens and zero-width characters dropped — keeping the source range of each character, so that a value
found in the decoded reading can be replaced in the source. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache
from operator import itemgetter
from typing import NamedTuple

import numpy as np

from deid_ds.segmentation.html_text import ParsedHtml, decode_reference

#: Characters that are invisible inside a word and split it for a naive search: soft hyphen, zero-width
#: space / non-joiner / joiner, word joiner, byte-order mark (``Du&shy;pont`` reads ``Dupont``).
INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
INVISIBLE_RE = re.compile(f"[{INVISIBLE}]")
VIEWS = ("text", "hidden", "attribute", "markup")

_REFERENCE = re.compile(rf"&(?:#[xX][0-9a-fA-F]+;?|#[0-9]+;?|[A-Za-z][A-Za-z0-9]*;?)|[{INVISIBLE}]")
# Markup constructs inside the parts of the source that are not text (comments are hidden ranges already).
_CONSTRUCT = re.compile(
    r"""(?P<end></[^>]*>?)|(?P<decl><![^>]*>?)|(?P<pi><\?[^>]*>?)"""
    r"""|(?P<start><[A-Za-z][^\s/>]*(?:"[^"]*"|'[^']*'|[^'">])*>?)""",
    re.S,
)
# Most stretches of markup are bare tags (``<br>``, ``</td>``, ``<p>``): nothing in them but names.
_BARE_TAGS = re.compile(r"(?:\s*</?[A-Za-z][A-Za-z0-9]*\s*/?>)*\s*")
_TAG_NAME = re.compile(r"</?[A-Za-z]?[^\s/>]*")
_ATTRIBUTE = re.compile(r"""([^\s/>"'=][^\s/>=]*)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]+))?""")
_COMMENT = re.compile(r"<!--(.*?)(?:--!?>)?\Z|<[!?/](.*?)>?\Z", re.S)


class Region(NamedTuple):
    """A source range ``[start, end)`` outside the visible text (a named tuple, not a frozen dataclass: a note has
    a hundred of them, built twice, and a frozen dataclass takes 1.5 times as long to build: docs/benchmarks.md).

    ``view`` is ``hidden``, ``attribute`` or ``markup``; ``kind`` says more: the hidden element or
    ``comment``, ``attribute``/``unquoted`` (an attribute value and how it is delimited), ``end-tag``
    (what follows an end tag's name), ``declaration`` (doctype), ``pi``, or ``tag`` (a tag's name and
    attribute names: searched by the leak check, never rewritten, since a changed name changes the
    document's structure).
    """

    start: int
    end: int
    view: str
    kind: str


class Decoded:
    """``html[start:end]`` as it reads (:func:`decode`): ``text`` and, per character, its source range in the HTML
    (``starts``, ``ends``). The ranges are worked out when first asked for: most regions searched hold nothing to
    replace, and working them out for each was most of reading it (0.16 -> 0.02 s for the 36,700 regions
    searched in 1,000 export-style notes: docs/benchmarks.md, *deidentify*)."""

    __slots__ = ("_end", "_html", "_ranges", "_start", "text")

    def __init__(self, html: str, start: int, end: int) -> None:
        self.text = decode_text(html, start, end)
        self._html, self._start, self._end = html, start, end
        self._ranges: tuple[list[int], list[int]] | None = None

    @property
    def starts(self) -> list[int]:
        return self._source_ranges()[0]

    @property
    def ends(self) -> list[int]:
        return self._source_ranges()[1]

    def _source_ranges(self) -> tuple[list[int], list[int]]:
        if self._ranges is None:
            _, starts, ends = _decoded(self._html, self._start, self._end)
            self._ranges = (starts, ends)
        return self._ranges

    def source(self, i: int, j: int) -> tuple[int, int]:
        """Source range of the decoded characters ``[i, j)`` (what lies between them included)."""
        starts, ends = self._source_ranges()
        return starts[i], ends[j - 1]


def _text_ranges(parsed: ParsedHtml) -> list[tuple[int, int]]:
    """The merged source ranges of the visible text's characters (inserted layout characters have none)."""
    starts = np.frombuffer(parsed.offsets.starts, dtype=np.int64)
    ends = np.frombuffer(parsed.offsets.ends, dtype=np.int64)
    real = ends > starts
    starts, ends = starts[real], ends[real]
    if not len(starts):
        return []
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], np.maximum.accumulate(ends[order])
    breaks = np.flatnonzero(starts[1:] > ends[:-1]) + 1
    run_starts = starts[np.concatenate(([0], breaks))]
    run_ends = ends[np.concatenate((breaks - 1, [len(ends) - 1]))]
    return list(zip(run_starts.tolist(), run_ends.tolist()))


def _gaps(parsed: ParsedHtml) -> list[tuple[int, int]]:
    """What is neither visible text nor hidden content: the markup, as source ranges."""
    covered = sorted([*_text_ranges(parsed), *((h.html_start, h.html_end) for h in parsed.hidden)])
    gaps, cursor = [], 0
    for start, end in covered:
        if start > cursor:
            gaps.append((cursor, start))
        cursor = max(cursor, end)
    if cursor < len(parsed.html):
        gaps.append((cursor, len(parsed.html)))
    return gaps


def _hidden_region(html: str, start: int, end: int, reason: str) -> Region:
    """A hidden range; for a comment, its content only (the delimiters stay, so blanking keeps a comment)."""
    if reason == "comment":
        match = _COMMENT.match(html, start, end)
        if match is not None:
            group = 1 if match.group(1) is not None else 2
            return Region(match.start(group), match.end(group), "hidden", "comment")
    return Region(start, end, "hidden", reason)


def _tag_regions(html: str, start: int, end: int) -> list[Region]:
    """A start tag cut into its name and attribute names (``tag``) and its attribute values."""
    name = _TAG_NAME.match(html, start, end)
    cursor = name.end() if name else start + 1
    inner_end = end - 1 if html[end - 1] == ">" else end
    regions = [Region(start, cursor, "markup", "tag")]
    for match in _ATTRIBUTE.finditer(html, cursor, inner_end):
        value = match.group(2)
        if value is None:
            continue
        value_start, value_end = match.span(2)
        if value[0] in "\"'":
            value_start, value_end, kind = value_start + 1, value_end - 1, "attribute"
        else:
            kind = "unquoted"
        regions.append(Region(cursor, value_start, "markup", "tag"))
        if value_end > value_start:
            regions.append(Region(value_start, value_end, "attribute", kind))
        cursor = value_end
    regions.append(Region(cursor, end, "markup", "tag"))
    return [r for r in regions if r.end > r.start]


def _markup_regions(html: str, start: int, end: int) -> list[Region]:
    """The constructs of one stretch of markup (see the module docstring for the kinds)."""
    if _BARE_TAGS.fullmatch(html, start, end):
        return [Region(start, end, "markup", "tag")]
    regions: list[Region] = []
    cursor = start
    for match in _CONSTRUCT.finditer(html, start, end):
        if match.start() > cursor:
            regions.append(Region(cursor, match.start(), "markup", "tag"))
        kind = match.lastgroup
        m_start, m_end = match.span()
        if kind == "start":
            regions += _tag_regions(html, m_start, m_end)
        else:
            opener = _TAG_NAME.match(html, m_start, m_end).end() if kind == "end" else m_start + 2
            closer = m_end - 1 if html[m_end - 1] == ">" else m_end
            regions.append(Region(m_start, opener, "markup", "tag"))
            regions.append(
                Region(opener, closer, "markup", {"end": "end-tag", "decl": "declaration", "pi": "pi"}[kind])
            )
            regions.append(Region(closer, m_end, "markup", "tag"))
        cursor = m_end
    if end > cursor:
        regions.append(Region(cursor, end, "markup", "tag"))
    return [r for r in regions if r.end > r.start]


#: Stretches of markup longer than this are cut without the cache (a long one is rarely seen twice).
_CACHED_UP_TO = 1024


@lru_cache(maxsize=8192)
def _markup_pieces(markup: str) -> tuple[tuple[int, int, str, str], ...]:
    """:func:`_markup_regions` of a stretch of markup on its own, as ``(start, end, view, kind)`` from its start.

    The same whatever stands around it (its patterns have no lookbehind, word boundary nor anchor), and the same
    stretches (``</td><td class="c">``) come back in note after note and in a note's output: cached, each is
    cut once (0.50 -> 0.30 s for 1,000 export-style notes: docs/benchmarks.md, *deidentify*)."""
    return tuple((r.start, r.end, r.view, r.kind) for r in _markup_regions(markup, 0, len(markup)))


@lru_cache(maxsize=8192)
def _rewritable_pieces(markup: str) -> tuple[tuple[int, int, str, str], ...]:
    """:func:`_markup_pieces` without the ``tag`` pieces (the names of tags and attributes, never rewritten)."""
    return tuple(piece for piece in _markup_pieces(markup) if piece[3] != "tag")


def regions(parsed: ParsedHtml, tags: bool = True) -> list[Region]:
    """Every source range of the note outside its visible text, in source order (module docstring); without the
    ``tag`` ones unless ``tags``: :func:`~deid_ds.deidentification.other_views.view_edits` rewrites no name, and
    names are five regions in six (the note stage of 1,000 export-style notes 3.00 -> 2.85 s: docs/benchmarks.md,
    *deidentify*)."""
    html = parsed.html
    found = [_hidden_region(html, h.html_start, h.html_end, h.reason) for h in parsed.hidden]
    if not tags:
        found = [r for r in found if r.kind != "tag"]
    for start, end in _gaps(parsed):
        if end - start > _CACHED_UP_TO:
            found += [r for r in _markup_regions(html, start, end) if tags or r.kind != "tag"]
        else:
            pieces = _markup_pieces(html[start:end]) if tags else _rewritable_pieces(html[start:end])
            found += [Region(start + a, start + b, v, k) for a, b, v, k in pieces]
    return sorted(found, key=itemgetter(0, 1))


def decode(html: str, start: int, end: int) -> Decoded:
    """``html[start:end]`` as it reads: references decoded, invisible characters dropped (module docstring)."""
    return Decoded(html, start, end)


def _decoded(html: str, start: int, end: int) -> tuple[str, list[int], list[int]]:
    """:func:`decode`'s text and source ranges, worked out together."""
    starts: list[int] = []
    ends: list[int] = []
    parts: list[str] = []
    cursor = start
    for match in _REFERENCE.finditer(html, start, end):
        m_start = match.start()
        if m_start > cursor:
            parts.append(html[cursor:m_start])
            starts.extend(range(cursor, m_start))
            ends.extend(range(cursor + 1, m_start + 1))
        token = match.group()
        cursor = match.end()
        if token in INVISIBLE:
            continue
        value, consumed = decode_reference(token)
        if consumed == 0:
            value, consumed = token, len(token)
            parts.append(value)
            starts.extend(range(m_start, cursor))
            ends.extend(range(m_start + 1, cursor + 1))
            continue
        value = INVISIBLE_RE.sub("", value)
        parts.append(value)
        starts.extend([m_start] * len(value))
        ends.extend([m_start + consumed] * len(value))
        if consumed < len(token):  # a legacy reference without ";" followed by literal letters
            parts.append(token[consumed:])
            starts.extend(range(m_start + consumed, cursor))
            ends.extend(range(m_start + consumed + 1, cursor + 1))
    if end > cursor:
        parts.append(html[cursor:end])
        starts.extend(range(cursor, end))
        ends.extend(range(cursor + 1, end + 1))
    return "".join(parts), starts, ends


def decode_text(html: str, start: int, end: int) -> str:
    """``decode(html, start, end).text`` without the source ranges (the leak check reads, it does not
    replace): most regions hold no reference nor invisible character and read as written."""
    if _REFERENCE.search(html, start, end) is None:
        return html[start:end]
    return _decoded(html, start, end)[0]


def readable(text: str) -> str:
    """A decoded string with the invisible characters dropped (``Du\\u00adpont`` → ``Dupont``)."""
    return INVISIBLE_RE.sub("", text) if INVISIBLE_RE.search(text) else text


def view_texts(parsed: ParsedHtml) -> dict[str, list[str]]:
    """The text of each view (:data:`VIEWS`), decoded as :func:`decode` does, for the leak check.

    The ``markup`` view joins the tag parts of one gap with a space where an attribute value was cut
    out, so that no word is made of a name and a value. The strings of a view are then joined with
    ``\x00``, which no word, number or pattern of the check runs across (one search per view).

    Read as :func:`regions` orders them (a hidden region never stands inside a stretch of markup), each stretch
    of markup as its :func:`_gap_reading`: cut, decoded and joined once, and no region object built (0.29 ->
    0.11 s for 1,000 export-style notes: docs/benchmarks.md, *deidentify*).
    """
    html = parsed.html
    texts: dict[str, list[str]] = {view: [] for view in VIEWS}
    texts["text"].append(parsed.text)
    markup: list[str] = []
    previous_end = -1
    hidden = sorted(
        (_hidden_region(html, h.html_start, h.html_end, h.reason) for h in parsed.hidden), key=itemgetter(0, 1)
    )
    next_hidden = 0
    for start, end in [*_gaps(parsed), (len(html) + 1, len(html) + 1)]:  # the last: the hidden regions after them
        while next_hidden < len(hidden) and hidden[next_hidden].start < start:
            region = hidden[next_hidden]  # of the view "hidden": never joined to the markup
            texts[region.view].append(decode_text(html, region.start, region.end))
            if markup:
                markup.append(" ")
            previous_end = region.end
            next_hidden += 1
        if start > len(html):
            break
        stretch = html[start:end]
        lead, run, rest = _gap_reading(stretch) if end - start <= _CACHED_UP_TO else _read_gap(stretch)
        for view, text in lead:
            texts[view].append(text)
            if markup:
                markup.append(" ")
        if run is not None:
            if not lead and start != previous_end and markup:
                texts["markup"].append("".join(markup))
                markup = []
            markup.append(run)
            for view, text in rest:
                texts[view].append(text)
        previous_end = end
    if markup:
        texts["markup"].append("".join(markup))
    return {view: ["\x00".join(strings)] if len(strings) > 1 else strings for view, strings in texts.items()}


class _GapReading(NamedTuple):
    """What :func:`view_texts` reads of one stretch of markup, its pieces in order as ``(view, decoded text)``: the
    pieces before its first ``markup`` one (``lead``), then the ``markup`` pieces from there joined, with a space
    after each other piece (``run``; ``None`` without any), and those other pieces (``rest``)."""

    lead: tuple[tuple[str, str], ...]
    run: str | None
    rest: tuple[tuple[str, str], ...]


def _read_gap(markup: str) -> _GapReading:
    """:class:`_GapReading` of a stretch of markup on its own (a reference reads the same wherever it stands)."""
    cut = _markup_pieces(markup) if len(markup) <= _CACHED_UP_TO else _markup_pieces.__wrapped__(markup)
    pieces = [(view, decode_text(markup, a, b)) for a, b, view, _ in cut]
    first = next((i for i, (view, _) in enumerate(pieces) if view == "markup"), len(pieces))
    run: list[str] = []
    rest: list[tuple[str, str]] = []
    for view, text in pieces[first:]:
        run.append(text if view == "markup" else " ")
        if view != "markup":
            rest.append((view, text))
    return _GapReading(tuple(pieces[:first]), "".join(run) if first < len(pieces) else None, tuple(rest))


_gap_reading = lru_cache(maxsize=8192)(_read_gap)
