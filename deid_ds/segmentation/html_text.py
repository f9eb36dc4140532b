"""HTML to plain text, with the source range of every text character.

The reference study parses notes with a parser built on the standard ``html.parser`` that "allows
tracking character positions of extracted raw texts in the original HTML documents so that we can mask
potential PII at the end of the pipeline". This module is that parser.

How it stays exact and loses nothing
-------------------------------------
``HTMLParser`` is used only to recognise *markup* (tags, comments, declarations, processing
instructions) and where each construct starts and ends. Everything between two markup constructs is
text, taken verbatim from the source and decoded here (character references, whitespace). Text is thus
the exact complement of the markup, whatever ``HTMLParser`` does with odd input: a stray ``<``, an
unterminated reference or a truncated tag is text, never dropped.

Layout
------
Browsers render block elements on their own lines; gluing the words of two lines or two table cells
together would create tokens (and entities) that do not exist. So block elements insert ``\\n`` (two for
paragraph-like elements, at most two in a row), ``<br>`` inserts one, and table cells are separated by
``\\t``. Inserted characters map to an empty source range at their tag (see :mod:`deid_ds.segmentation.offsets`).
Whitespace collapses as a browser would (a run becomes one space mapped to the whole run) except
inside ``<pre>``/``<textarea>`` and in documents that contain no markup at all, which are treated as
preformatted plain text.

Content that is never rendered produces no text: ``<script>``, ``<style>``, ``<template>``, comments,
and the ``<head>`` (``<title>`` included). Its source ranges are reported in
:attr:`ParsedHtml.hidden`, because a de-identified document must still deal with a name hidden in a
``<title>`` or a comment. An element that is opened and never closed (``<style>`` with no
``</style>``) would hide the rest of the note; its content is kept as text instead and a warning is
counted.

Warnings are counts per kind (``fallback_decoded_bytes``, ``control_chars``, ``unclosed_hidden_element``,
``parser_recovered``); they never carry note text.

Speed
-----
Most notes never reach ``HTMLParser``: a fused scanner (one regex over the whole note, one loop over its
matches, see :func:`_fused_extract`) computes the same result for the constructs it models, and gives
the note to the ``HTMLParser``-driven extractor whenever it meets anything else. It runs only on the
``html.parser`` sources it was checked against (differential tests against the extractor path,
``_html_to_text(..., fused=False)``).
"""

from __future__ import annotations

import hashlib
import inspect
import re
from array import array
from dataclasses import dataclass, field
from functools import lru_cache
from html import unescape as _html_unescape
from html.entities import html5 as _HTML5
from html.parser import HTMLParser

import numpy as np

from deid_ds.segmentation.encoding import decode_note_bytes
from deid_ds.segmentation.offsets import OffsetMap

#: Elements that start and end on their own line.
LINE_ELEMENTS = frozenset(
    """address article aside body center dd details dialog dir div dt fieldset figcaption figure footer
    form frameset header hgroup html legend li main menu nav option caption section summary tr
    tbody thead tfoot colgroup frame noframes""".split()
)
#: Elements separated from what surrounds them by a blank line.
PARAGRAPH_ELEMENTS = frozenset("p h1 h2 h3 h4 h5 h6 blockquote pre table ul ol dl hr".split())
#: Table cells: separated by a tab on the same line.
CELL_ELEMENTS = frozenset({"td", "th"})
#: Elements whose whitespace is preserved.
PREFORMATTED_ELEMENTS = frozenset({"pre", "textarea", "listing", "plaintext", "xmp"})
#: Elements whose content is never rendered.
HIDDEN_ELEMENTS = frozenset({"script", "style", "template", "title"})
#: Elements that may appear inside ``<head>`` without closing it (HTML5 "in head" insertion mode).
HEAD_ELEMENTS = frozenset(
    {"base", "basefont", "bgsound", "link", "meta", "title", "style", "script", "noscript", "template"}
)
#: Tags whose start (resp. end) tag changes the layout or the parser state; the others (``<b>``,
#: ``<span>``, ``<font>``...) only delimit text, and their handlers return early.
_START_TAGS_WITH_EFFECT = (
    LINE_ELEMENTS | PARAGRAPH_ELEMENTS | CELL_ELEMENTS | PREFORMATTED_ELEMENTS | HIDDEN_ELEMENTS | {"head", "br"}
)
_END_TAGS_WITH_EFFECT = LINE_ELEMENTS | PARAGRAPH_ELEMENTS | PREFORMATTED_ELEMENTS | {"head", "br"}
#: Start tags always left to ``HTMLParser`` itself: elements whose content is raw or escapable raw text
#: in some Python version (3.14 added RCDATA elements and more CDATA ones), plus the hidden ones.
_STDLIB_START_TAGS = (
    frozenset({"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext"})
    | HIDDEN_ELEMENTS
    | frozenset(getattr(HTMLParser, "CDATA_CONTENT_ELEMENTS", ()))
    | frozenset(getattr(HTMLParser, "RCDATA_CONTENT_ELEMENTS", ()))
)

_WHITESPACE = " \t\n\r\f"
# A text run is split into literal stretches, character references and whitespace runs. C0 control
# characters (NUL included) behave as whitespace: they are never rendered, and dropping them could glue
# two words together.
_WS_CHARS = "\\t\\n\\f\\r \\x00-\\x08\\x0b\\x0e-\\x1f\\x7f"
# A single space between two words is the common case: it stays inside the literal run (one call per
# run instead of one per word); runs of two or more and other whitespace characters are matched.
_GAP_RE = re.compile(
    r"(?P<ref>&(?:#[xX][0-9a-fA-F]+;?|#[0-9]+;?|[A-Za-z][A-Za-z0-9]*;?))"
    rf"|(?P<ws>[{_WS_CHARS}]{{2,}}|[{_WS_CHARS.replace(' ', '')}])"
)
_BLANK = re.compile(r"[ \t\n\r\f]+")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_MARKUP_PROBE = re.compile(r"<[A-Za-z!/?]")
# The common tags of clinical notes carry no attribute (<br>, <p>, <b>, </td>...) or well-formed ones
# (<td class="x" colspan=2>, <font face='Arial'>). For exactly those shapes every HTMLParser version does
# the same thing (event streams checked identical on 3.10 to 3.13; the raw-text elements 3.14 treats
# specially never take the fast path); see _Extractor.parse_starttag. An attribute value holding "<",
# ">" or "/" unquoted, a self-closing "/>", or any odd spacing goes through HTMLParser.
_ATTRIBUTE = (
    r"[ \t\n\r\f]+[a-zA-Z_:][-a-zA-Z0-9_:.]*"
    r"(?:[ \t\n\r\f]*=[ \t\n\r\f]*(?:\"[^\"<>]*\"|'[^'<>]*'|[^ \t\n\r\f\"'=<>`/]+))?"
)
_SIMPLE_START_TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9]*)(?:" + _ATTRIBUTE + r")*[ \t\n\r\f]*>")
_SIMPLE_END_TAG = re.compile(r"</([a-zA-Z][a-zA-Z0-9]*)>")
_FALLBACK_MARKUP = re.compile(r"<[A-Za-z!/?][^<>]*>")
_STARTTAG_OPEN = re.compile("<[a-zA-Z]")  # html.parser.starttagopen
#: sha256 of the source of ``HTMLParser.goahead`` that :meth:`_Extractor._goahead_markup` mirrors
#: (identical in CPython 3.10.13, 3.11.7, 3.12.1 and 3.13.0; later security releases changed it).
_MIRRORED_GOAHEAD_SHA256 = "482555522333534ed0d5c112fe13d0d76732a1c38a94d9dcf3f8c228b8678233"


@lru_cache(maxsize=1)
def _KNOWN_GOAHEAD() -> bool:
    """Whether this Python's ``HTMLParser.goahead`` is the code the extractor's own loop mirrors."""
    try:
        source = inspect.getsource(HTMLParser.goahead)
    except (OSError, TypeError):  # no source shipped: keep the stdlib loop
        return False
    return hashlib.sha256(source.encode()).hexdigest() == _MIRRORED_GOAHEAD_SHA256


@dataclass(frozen=True, slots=True)
class HiddenRange:
    """A range of the HTML source whose content produced no text (comment, script, title...)."""

    html_start: int
    html_end: int
    reason: str


@dataclass(frozen=True)
class ParsedHtml:
    """The result of :func:`html_to_text`."""

    html: str
    text: str
    offsets: OffsetMap
    hidden: tuple[HiddenRange, ...] = ()
    warnings: dict[str, int] = field(default_factory=dict)

    def html_span(self, start: int, end: int) -> tuple[int, int]:
        """HTML range of the text range ``[start, end)`` (see :meth:`OffsetMap.html_span`)."""
        return self.offsets.html_span(start, end)

    def text_span(self, html_start: int, html_end: int) -> tuple[int, int]:
        """Text range of the HTML range ``[html_start, html_end)`` (see :meth:`OffsetMap.text_span`)."""
        return self.offsets.text_span(html_start, html_end)


def decode_reference(ref: str) -> tuple[str, int]:
    """Decode the character reference at the start of ``ref`` as the HTML5 text state does.

    ``ref`` is what :data:`_GAP_RE` matched (``&eacute;``, ``&eacute``, ``&#233;``, ``&eacutex``...).
    Returns the decoded characters and how many characters of ``ref`` they stand for; the rest of
    ``ref`` is literal text. An unknown name decodes to nothing (``("", 0)``): it is literal.
    """
    if ref[1] == "#":
        return _html_unescape(ref), len(ref)
    name = ref[1:]
    if name in _HTML5:
        return _HTML5[name], len(ref)
    # Legacy references without a semicolon: the longest known prefix, as html.unescape does.
    for length in range(len(name) - 1, 1, -1):
        value = _HTML5.get(name[:length])
        if value is not None:
            return value, length + 1
    return "", 0


class _TextBuilder:
    """Accumulates text characters and their source ranges, applying the layout rules.

    Source ranges are recorded per *run* of characters rather than per character — an identity run
    (``length`` characters copied from ``html[start:start + length]``) or a constant run (every
    character maps to ``[start, end)``: a reference, a collapsed space, an inserted character) — and
    expanded to per-character arrays once, with numpy, in :meth:`build`. Each part of the text is one
    run: ``runs`` holds ``length, start, end`` for each part in turn (``end`` -1 for an identity run),
    one flat list because one ``extend`` per part costs less than three ``append``.
    """

    __slots__ = ("collapsing", "last", "parts", "pending_space", "runs", "trailing_newlines")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.runs: list[int] = []  # length, start, end (-1: identity) of each part
        self.last = ""  # last character emitted ("" at the start)
        self.trailing_newlines = 0
        self.pending_space: tuple[int, int] | None = None
        self.collapsing = True  # False while emitting preformatted text

    # -- characters backed by the source ------------------------------------------------------------
    def _flush_space(self) -> None:
        if self.pending_space is not None:
            start, end = self.pending_space
            self.pending_space = None
            self.parts.append(" ")
            self.runs += (1, start, end)
            self.last = " "

    def literal(self, text: str, start: int) -> None:
        """Characters copied verbatim from ``html[start:start + len(text)]``."""
        if self.pending_space is not None:
            self._flush_space()
        self.parts.append(text)
        self.runs += (len(text), start, -1)
        self.last = text[-1]
        self.trailing_newlines = 0

    def mapped(self, chars: str, start: int, end: int) -> None:
        """Characters that all stand for ``html[start:end]`` (a character reference)."""
        self._flush_space()
        self.parts.append(chars)
        self.runs += (len(chars), start, end)
        self.last = chars[-1]
        self.trailing_newlines = 0

    def collapsible_space(self, start: int, end: int) -> None:
        """Whitespace outside preformatted text: at most one space, none at the start of a line."""
        if self.pending_space is None and self.last not in ("", "\n", "\t", " "):
            self.pending_space = (start, end)

    def preserved_space(self, chars: str, start: int) -> None:
        """Whitespace inside preformatted text, kept as is except ``\r\n``/``\r`` become ``\n``."""
        self._flush_space()
        i, n = 0, len(chars)
        while i < n:
            char = chars[i]
            width = 1
            if char == "\r":
                char = "\n"
                if i + 1 < n and chars[i + 1] == "\n":
                    width = 2
            elif char not in _WHITESPACE:
                char = " "  # control characters
            self.parts.append(char)
            self.runs += (1, start + i, start + i + width)
            self.trailing_newlines = self.trailing_newlines + 1 if char == "\n" else 0
            self.last = char
            i += width

    def mapped_space(self, char: str, start: int, end: int) -> None:
        """A whitespace character reference inside preformatted text (``&#10;``)."""
        self._flush_space()
        char = "\n" if char in "\r\n" else char
        self.parts.append(char)
        self.runs += (1, start, end)
        self.trailing_newlines = self.trailing_newlines + 1 if char == "\n" else 0
        self.last = char

    # -- characters inserted for layout --------------------------------------------------------------
    def _insert(self, char: str, position: int) -> None:
        self.parts.append(char)
        self.runs += (1, position, position)
        self.last = char

    def _last_is_inserted(self) -> bool:
        return bool(self.runs) and self.runs[-2] == self.runs[-1]

    def line_break(self, position: int, count: int) -> None:
        """Make sure the text ends with ``count`` newlines (nothing at the very start)."""
        self.pending_space = None
        self._drop_trailing_space()
        if self.last == "":
            return
        if self.last == "\t" and self._last_is_inserted():
            self._drop_last()  # a trailing cell separator separates nothing
        while self.trailing_newlines < count:
            self._insert("\n", position)
            self.trailing_newlines += 1

    def forced_break(self, position: int) -> None:
        """``<br>``: one more newline, up to two in a row."""
        self.pending_space = None
        self._drop_trailing_space()
        if self.last == "" or self.trailing_newlines >= 2:
            return
        self._insert("\n", position)
        self.trailing_newlines += 1

    def cell_separator(self, position: int) -> None:
        self.pending_space = None
        self._drop_trailing_space()
        if self.last not in ("", "\n", "\t"):
            self._insert("\t", position)
            self.trailing_newlines = 0

    def _drop_trailing_space(self) -> None:
        """A collapsible space before a line break or a cell is not rendered (outside <pre>)."""
        while self.last == " " and self.collapsing:
            self._drop_last()

    def _drop_last(self) -> None:
        last_part = self.parts[-1]
        if len(last_part) == 1:
            self.parts.pop()
            del self.runs[-3:]
        else:
            self.parts[-1] = last_part[:-1]
            self.runs[-3] -= 1
        self.last = self.parts[-1][-1] if self.parts else ""

    def build(self) -> tuple[str, OffsetMap]:
        self._drop_trailing_space()
        while self.last in ("\n", "\t") and self._last_is_inserted():
            self._drop_last()  # inserted layout characters at the very end carry nothing
        return "".join(self.parts), _expand_runs(self.runs)


def _expand_runs(runs: list[int]) -> OffsetMap:
    """Per-character ``starts``/``ends`` arrays from runs (vectorised: notes have many short runs).

    Each numpy call costs microseconds whatever its size, so the per-run values a character needs
    (its run's base, whether the run is an identity one, its width) are repeated per character in one
    call: an identity run's character ``i`` of the text starts at ``base + i`` (base: the run's start
    minus its first character's position in the text), any other at ``base`` (the run's start).
    """
    starts, ends = array("q"), array("q")
    if not runs:
        return OffsetMap(starts, ends)
    length, run_start, run_end = np.fromiter(runs, dtype=np.int64, count=len(runs)).reshape(-1, 3).T
    identity = run_end < 0
    first_char = np.cumsum(length)
    first_char -= length
    base = np.where(identity, run_start - first_char, run_start)
    width = np.where(identity, 1, run_end - run_start)
    base_of_char, identity_of_char, width_of_char = np.repeat(np.array((base, identity, width)), length, axis=1)
    char_starts = base_of_char + np.arange(len(base_of_char)) * identity_of_char
    char_ends = char_starts + width_of_char
    starts.frombytes(char_starts.tobytes())
    ends.frombytes(char_ends.tobytes())
    return OffsetMap(starts, ends)


class _Extractor(HTMLParser):
    """Drives ``HTMLParser`` and turns the complement of its markup into text (see module docstring)."""

    def __init__(self, source: str) -> None:
        # convert_charrefs=True makes HTMLParser look for the next "<" only; with False it also stops at
        # every "&" to report references we decode ourselves anyway, and a bogus "&#" (not followed by
        # digits, with a ";" further on) made it stop parsing markup altogether. Where markup starts and
        # ends is the same in both modes, and the decoded text it passes to handle_data is ignored.
        super().__init__(convert_charrefs=True)
        self.source = source
        self.out = _TextBuilder()
        self.warnings: dict[str, int] = {}
        self.hidden: list[HiddenRange] = []
        self.cursor = 0  # source position up to which everything has been handled
        self.position = 0  # source position of the construct HTMLParser is handling
        self.base = 0  # source position of HTMLParser's rawdata[0]
        self.markup_kind: str | None = None
        self.hidden_element: str | None = None  # inside <script>, <style>, <title>, <template>
        self.hidden_start = 0
        self.in_head = False
        self.pre_depth = 0
        self._closing_tags: dict[str, list[int]] = {}
        self.keep_raw_text = False  # an unclosed <script>/<style>: do not let HTMLParser swallow the rest

    # -- HTMLParser plumbing ------------------------------------------------------------------------
    def goahead(self, end: bool) -> None:
        # rawdata holds the not-yet-consumed tail of the source.
        self.base = len(self.source) - len(self.rawdata)
        if _KNOWN_GOAHEAD():
            consumed = self._goahead_markup()
            if consumed:
                self.rawdata = self.rawdata[consumed:]
                self.base += consumed
        super().goahead(end)

    def _goahead_markup(self) -> int:
        """``HTMLParser.goahead``'s own loop for ``convert_charrefs=True``, without the text it decodes.

        The stdlib loop hands every text run to ``handle_data`` after decoding its references; this
        extractor ignores that text (it reads the source itself), so the loop below does the same
        dispatch — the same ``parse_*`` calls in the same order, the same ``updatepos`` calls — and
        skips the decoding. It is used only where ``HTMLParser.goahead`` is exactly the code it mirrors
        (:func:`_KNOWN_GOAHEAD`: CPython 3.10 to 3.13.0); elsewhere the stdlib loop runs. Wherever the
        stdlib would stop or recover (trailing text, an incomplete construct, unterminated raw text),
        this loop stops and the stdlib loop goes on from there: it keeps no state but its position.
        Returns how much of ``rawdata`` was consumed.
        """
        rawdata = self.rawdata
        n = len(rawdata)
        find, startswith = rawdata.find, rawdata.startswith
        starttag_open = _STARTTAG_OPEN.match
        updatepos = self.updatepos
        i = 0
        while i < n:
            if self.cdata_elem:
                match = self.interesting.search(rawdata, i)
                if match is None:
                    return i
                j = match.start()
            else:
                j = find("<", i)
                if j < 0:
                    return i
            i = updatepos(i, j)  # the text before, if any (handle_data would be a no-op here)
            if starttag_open(rawdata, i):
                k = self.parse_starttag(i)
            elif startswith("</", i):
                k = self.parse_endtag(i)
            elif startswith("<!--", i):
                k = self.parse_comment(i)
            elif startswith("<?", i):
                k = self.parse_pi(i)
            elif startswith("<!", i):
                k = self.parse_html_declaration(i)
            elif i + 1 < n:
                k = i + 1  # a lone "<" is text
            else:
                return i
            if k < 0:
                return i
            i = updatepos(i, k)
        return i

    def updatepos(self, i: int, j: int) -> int:
        # Called by HTMLParser after every construct [i, j) of rawdata (text or markup).
        if self.markup_kind is not None:
            start, end = self.base + i, self.base + j
            if self.markup_kind == "comment":
                self.hidden.append(HiddenRange(start, end, "comment"))
            self.cursor = end
            self.markup_kind = None
        self.position = self.base + j
        return j

    def parse_starttag(self, i: int) -> int:
        """A start tag at ``rawdata[i]``: fast path for ``<name>`` and well-formed attributes, else ``HTMLParser``.

        For a start tag of :data:`_SIMPLE_START_TAG`'s shape, every ``HTMLParser`` version records the
        tag text, lower-cases the name, calls ``handle_starttag(name, attrs)`` and, for raw-text elements
        only, switches to CDATA mode: those elements (:data:`_STDLIB_START_TAGS`) and every other shape
        go through ``HTMLParser.parse_starttag`` unchanged. Attributes are never used here, so they are
        not parsed (the handlers get an empty list). This skips the attribute machinery for the tags
        that make up most of a note (``<br>``, ``<p>``, ``<b>``, ``<td class="...">``).
        """
        match = _SIMPLE_START_TAG.match(self.rawdata, i)
        if match is not None:
            tag = match.group(1).lower()
            if tag not in _STDLIB_START_TAGS:
                self._HTMLParser__starttag_text = match.group()  # what get_starttag_text() returns
                self.lasttag = tag
                self.handle_starttag(tag, [])
                return match.end()
        return super().parse_starttag(i)

    def parse_endtag(self, i: int) -> int:
        """An end tag at ``rawdata[i]``: fast path for ``</name>`` outside raw text (see parse_starttag).

        Outside CDATA mode, every ``HTMLParser`` version handles ``</name>`` as
        ``handle_endtag(name.lower())`` then ``clear_cdata_mode()``; inside (``<script>`` content),
        only the matching end tag counts, so that case is left to ``HTMLParser``.
        """
        if self.cdata_elem is None:
            match = _SIMPLE_END_TAG.match(self.rawdata, i)
            if match is not None:
                self.handle_endtag(match.group(1).lower())
                self.clear_cdata_mode()
                return match.end()
        return super().parse_endtag(i)

    def _begin_markup(self, kind: str) -> int:
        """Flush the text before the construct that starts at ``self.position``; return that start."""
        start = self.position
        self.keep_raw_text = False
        if start > self.cursor:
            self._text(self.cursor, start)
            self.cursor = start
        self.markup_kind = kind
        return start

    # -- markup handlers ----------------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list) -> None:
        # _begin_markup("tag"), inlined: this runs for most constructs of a note
        position = self.position
        self.keep_raw_text = False
        if position > self.cursor:
            self._text(self.cursor, position)
            self.cursor = position
        self.markup_kind = "tag"
        self._start_element(tag, position)

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        position = self._begin_markup("tag")
        self._start_element(tag, position, self_closing=True)

    def handle_endtag(self, tag: str) -> None:
        # _begin_markup("tag"), inlined (see handle_starttag)
        position = self.position
        self.keep_raw_text = False
        if position > self.cursor:
            self._text(self.cursor, position)
            self.cursor = position
        self.markup_kind = "tag"
        out = self.out
        if self.hidden_element is not None:
            if tag == self.hidden_element:
                self._hide(self.hidden_start, position, tag)
                self.hidden_element = None
            return
        if tag not in _END_TAGS_WITH_EFFECT:
            return
        if tag == "head":
            self.in_head = False
        elif tag == "br":  # </br> is a line break in every browser
            out.forced_break(position)
        elif tag in PARAGRAPH_ELEMENTS:
            out.line_break(position, 2)
        elif tag in LINE_ELEMENTS:
            out.line_break(position, 1)
        if tag in PREFORMATTED_ELEMENTS and self.pre_depth:
            self.pre_depth -= 1

    def handle_comment(self, data: str) -> None:
        self._begin_markup("comment")

    def handle_decl(self, decl: str) -> None:
        self._begin_markup("decl")

    def handle_pi(self, data: str) -> None:
        self._begin_markup("pi")

    def unknown_decl(self, data: str) -> None:
        position = self._begin_markup("decl")
        if data.startswith("CDATA[") and self.hidden_element is None:
            content_start = position + len("<![CDATA[")
            self._text(content_start, content_start + len(data) - len("CDATA["), decode=False)

    def parse_html_declaration(self, i: int) -> int:
        # _markupbase raises AssertionError on some malformed declarations (``<![foo]>``); treat those
        # as the bogus comments browsers see.
        try:
            return super().parse_html_declaration(i)
        except AssertionError:
            self._count("parser_recovered")
            return self.parse_bogus_comment(i)

    # -- element semantics --------------------------------------------------------------------------
    def _start_element(self, tag: str, position: int, self_closing: bool = False) -> None:
        if self.hidden_element is not None:
            return
        out = self.out
        if self.in_head and tag not in HEAD_ELEMENTS:
            self.in_head = False
        if tag not in _START_TAGS_WITH_EFFECT:
            return
        if tag == "head":
            self.in_head = True
        elif tag in HIDDEN_ELEMENTS:
            if self_closing:
                return
            if self._is_closed_later(tag, position):
                self.hidden_element = tag
                self.hidden_start = self._end_of_start_tag(position)
            else:
                self._count("unclosed_hidden_element")
                # HTMLParser would swallow the rest of the note as raw text; keep it as text.
                self.keep_raw_text = True
        elif tag == "br":
            out.forced_break(position)
        elif tag in PARAGRAPH_ELEMENTS:
            out.line_break(position, 2)
        elif tag in LINE_ELEMENTS:
            out.line_break(position, 1)
        elif tag in CELL_ELEMENTS:
            out.cell_separator(position)
        if tag in PREFORMATTED_ELEMENTS and not self_closing:
            self.pre_depth += 1

    def _end_of_start_tag(self, position: int) -> int:
        tag_text = self.get_starttag_text() or ""
        return position + len(tag_text)

    def _is_closed_later(self, tag: str, position: int) -> bool:
        closings = self._closing_tags.get(tag)
        if closings is None:
            pattern = re.compile(r"</\s*%s\s*>" % tag if tag in ("script", "style") else r"</%s(?![\w-])" % tag, re.I)
            closings = [m.start() for m in pattern.finditer(self.source)]
            self._closing_tags[tag] = closings
        return bool(closings) and closings[-1] > position

    def set_cdata_mode(self, elem: str, *args, **kwargs) -> None:
        if self.keep_raw_text:  # called right after handle_starttag of the same element
            self.keep_raw_text = False
            return
        super().set_cdata_mode(elem, *args, **kwargs)

    # -- text ---------------------------------------------------------------------------------------
    def _hide(self, start: int, end: int, reason: str) -> None:
        if end > start:
            self.hidden.append(HiddenRange(start, end, reason))

    def _text(self, start: int, end: int, decode: bool = True) -> None:
        """Handle the source text ``[start, end)`` between two markup constructs."""
        if self.hidden_element is not None:
            return  # recorded as one range when the element closes
        source = self.source
        if self.in_head:
            if source[start:end].strip(_WHITESPACE):
                self.in_head = False  # text in <head> closes it (HTML5 "in head" mode)
            else:
                return
        self.cursor = end
        if self.pre_depth:
            _emit_preformatted(self.out, source, start, end, decode)
        elif _BLANK.fullmatch(source, start, end):
            self.out.collapsible_space(start, end)  # the common gap between two tags: "\n  "
        else:
            _emit_collapsed(self.out, source, start, end, decode)

    def _count(self, kind: str, n: int = 1) -> None:
        self.warnings[kind] = self.warnings.get(kind, 0) + n

    def finish(self) -> None:
        if self.hidden_element is not None:
            # The closing tag seen ahead was never parsed as one (it sat in a comment, say): the
            # element hides the rest of the note, which is kept as text instead.
            self._count("unclosed_hidden_element")
            self.recover(self.hidden_start)
            return
        if self.cursor < len(self.source):
            self._text(self.cursor, len(self.source))
            self.cursor = len(self.source)

    def recover(self, position: int | None = None) -> None:
        """Read the rest of the source, from ``position`` (default: the cursor), with a simple tag pattern.

        Used after an unexpected parser error and for hidden elements left open: text is never lost.
        """
        if position is None:
            self._count("parser_recovered")
            position = self.cursor
        self.hidden_element = None
        self.in_head = False
        for match in _FALLBACK_MARKUP.finditer(self.source, position):
            if match.start() > position:
                self._text(position, match.start())
            position = match.end()
        self.cursor = position
        if self.cursor < len(self.source):
            self._text(self.cursor, len(self.source))
            self.cursor = len(self.source)


def emit_text(out: _TextBuilder, source: str, start: int, end: int, *, preformatted: bool, decode: bool = True) -> None:
    """Decode ``source[start:end]`` (references, whitespace) into ``out``."""
    if preformatted:
        _emit_preformatted(out, source, start, end, decode)
    else:
        _emit_collapsed(out, source, start, end, decode)


def _emit_preformatted(out: _TextBuilder, source: str, start: int, end: int, decode: bool) -> None:
    out.collapsing = False
    position = start
    for match in _GAP_RE.finditer(source, start, end):
        match_start = match.start()
        if match_start > position:
            out.literal(source[position:match_start], position)
        ref = match.group(1)
        if ref is None:
            out.preserved_space(match.group(2), match_start)
        elif decode:
            _emit_reference(out, ref, match_start, True)
        else:
            out.literal(ref, match_start)
        position = match.end()
    if end > position:
        out.literal(source[position:end], position)
    out.collapsing = True


def _emit_collapsed(out: _TextBuilder, source: str, start: int, end: int, decode: bool) -> None:
    position = start
    for match in _GAP_RE.finditer(source, start, end):
        match_start, match_end = match.span()
        if match_start > position:
            _collapsed_literal(out, source[position:match_start], position)
        ref = match.group(1)
        if ref is None:
            out.collapsible_space(match_start, match_end)
        elif decode:
            _emit_reference(out, ref, match_start, False)
        else:
            _collapsed_literal(out, ref, match_start)
        position = match_end
    if end > position:
        _collapsed_literal(out, source[position:end], position)


def _collapsed_literal(out: _TextBuilder, text: str, start: int) -> None:
    """A literal run outside preformatted text: its single spaces collapse with their neighbours."""
    if text[0] == " ":
        if out.pending_space is not None or out.last in ("", "\n", "\t", " "):
            text, start = text[1:], start + 1  # already separated, or at the start of a line
            if not text:
                return
    if text[-1] == " " and len(text) > 1 and out.pending_space is None:
        out.literal(text[:-1], start)
        out.collapsible_space(start + len(text) - 1, start + len(text))
        return
    if text == " ":
        out.collapsible_space(start, start + 1)
        return
    out.literal(text, start)


def _emit_reference(out: _TextBuilder, ref: str, start: int, preformatted: bool) -> None:
    value, consumed = decode_reference(ref)
    if consumed == 0:
        out.literal(ref, start)
        return
    ref_end = start + consumed
    if value == "" or (len(value) == 1 and value in _WHITESPACE):
        # &#1; decodes to nothing, &#32; / &NewLine; to whitespace: they separate words.
        if preformatted and value:
            out.mapped_space(value, start, ref_end)
        else:
            out.collapsible_space(start, ref_end)
    else:
        out.mapped(value, start, ref_end)
    if consumed < len(ref):
        out.literal(ref[consumed:], ref_end)


def html_to_text(html: str | bytes, *, preformatted: bool | None = None) -> ParsedHtml:
    """Extract the text of an HTML note with the source range of every character.

    ``html`` may be bytes (decoded with :func:`deid_ds.segmentation.encoding.decode_note_bytes`; offsets then refer
    to the decoded string, returned as :attr:`ParsedHtml.html`). ``preformatted`` forces (``True``) or
    forbids (``False``) keeping the source whitespace; by default it is kept only for documents with no
    markup at all, i.e. plain-text notes.
    """
    return _html_to_text(html, preformatted, fused=True)


def _html_to_text(html: str | bytes, preformatted: bool | None, *, fused: bool) -> ParsedHtml:
    """:func:`html_to_text`; with ``fused=False`` every document goes through the HTMLParser-driven
    extractor, the reference the fused scanner is tested against."""
    warnings: dict[str, int] = {}
    if isinstance(html, (bytes, bytearray, memoryview)):
        html, fallback = decode_note_bytes(bytes(html))
        if fallback:
            warnings["fallback_decoded_bytes"] = fallback
    if not isinstance(html, str):
        raise TypeError(f"html must be str or bytes, not {type(html).__name__}")
    controls = len(_CONTROL_RE.findall(html))
    if controls:
        warnings["control_chars"] = controls
    if preformatted is None:
        preformatted = _MARKUP_PROBE.search(html) is None
    if preformatted and _MARKUP_PROBE.search(html) is None:
        out = _TextBuilder()
        emit_text(out, html, 0, len(html), preformatted=True)
        text, offsets = out.build()
        return ParsedHtml(html, text, offsets, (), warnings)

    if fused:
        from deid_ds.segmentation import html_fused  # imported here: it builds on this module's builder and tables

        try:
            result = html_fused._fused_extract(html, 1 if preformatted else 0)
        except Exception:
            result = None
        if result is not None:
            out, hidden = result
            text, offsets = out.build()
            return ParsedHtml(html, text, offsets, tuple(hidden), warnings)
    extractor = _Extractor(html)
    if preformatted:
        extractor.pre_depth = 1
    try:
        extractor.feed(html)
        extractor.close()
        extractor.finish()
    except Exception:
        extractor.recover()
    for kind, n in extractor.warnings.items():
        warnings[kind] = warnings.get(kind, 0) + n
    text, offsets = extractor.out.build()
    return ParsedHtml(html, text, offsets, tuple(extractor.hidden), warnings)
