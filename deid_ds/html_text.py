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
``\\t``. Inserted characters map to an empty source range at their tag (see :mod:`deid_ds.offsets`).
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

from deid_ds.encoding import decode_note_bytes
from deid_ds.offsets import OffsetMap

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
def _KNOWN_GOAHEAD() -> bool:  # noqa: N802 - reads as the constant it is, computed once
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
    expanded to per-character arrays once, with numpy, in :meth:`build`.
    """

    __slots__ = ("parts", "run_lengths", "run_starts", "run_ends", "last", "trailing_newlines", "pending_space", "collapsing")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.run_lengths: list[int] = []
        self.run_starts: list[int] = []
        self.run_ends: list[int] = []  # -1 for an identity run
        self.last = ""  # last character emitted ("" at the start)
        self.trailing_newlines = 0
        self.pending_space: tuple[int, int] | None = None
        self.collapsing = True  # False while emitting preformatted text

    def _run(self, length: int, start: int, end: int) -> None:
        self.run_lengths.append(length)
        self.run_starts.append(start)
        self.run_ends.append(end)

    # -- characters backed by the source ------------------------------------------------------------
    def _flush_space(self) -> None:
        if self.pending_space is not None:
            start, end = self.pending_space
            self.pending_space = None
            self.parts.append(" ")
            self._run(1, start, end)
            self.last = " "

    def literal(self, text: str, start: int) -> None:
        """Characters copied verbatim from ``html[start:start + len(text)]``."""
        if self.pending_space is not None:
            self._flush_space()
        self.parts.append(text)
        # _run inlined: this is the hottest call of the extractor
        self.run_lengths.append(len(text))
        self.run_starts.append(start)
        self.run_ends.append(-1)
        self.last = text[-1]
        self.trailing_newlines = 0

    def mapped(self, chars: str, start: int, end: int) -> None:
        """Characters that all stand for ``html[start:end]`` (a character reference)."""
        self._flush_space()
        self.parts.append(chars)
        self._run(len(chars), start, end)
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
            self._run(1, start + i, start + i + width)
            self.trailing_newlines = self.trailing_newlines + 1 if char == "\n" else 0
            self.last = char
            i += width

    def mapped_space(self, char: str, start: int, end: int) -> None:
        """A whitespace character reference inside preformatted text (``&#10;``)."""
        self._flush_space()
        char = "\n" if char in "\r\n" else char
        self.parts.append(char)
        self._run(1, start, end)
        self.trailing_newlines = self.trailing_newlines + 1 if char == "\n" else 0
        self.last = char

    # -- characters inserted for layout --------------------------------------------------------------
    def _insert(self, char: str, position: int) -> None:
        self.parts.append(char)
        self.run_lengths.append(1)
        self.run_starts.append(position)
        self.run_ends.append(position)
        self.last = char

    def _last_is_inserted(self) -> bool:
        return bool(self.run_ends) and self.run_starts[-1] == self.run_ends[-1]

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
        else:
            self.parts[-1] = last_part[:-1]
        self.run_lengths[-1] -= 1
        if self.run_lengths[-1] == 0:
            self.run_lengths.pop()
            self.run_starts.pop()
            self.run_ends.pop()
        self.last = self.parts[-1][-1] if self.parts else ""

    def build(self) -> tuple[str, OffsetMap]:
        self._drop_trailing_space()
        while self.last in ("\n", "\t") and self._last_is_inserted():
            self._drop_last()  # inserted layout characters at the very end carry nothing
        return "".join(self.parts), _expand_runs(self.run_lengths, self.run_starts, self.run_ends)


def _expand_runs(lengths: list[int], run_starts: list[int], run_ends: list[int]) -> OffsetMap:
    """Per-character ``starts``/``ends`` arrays from runs (vectorised: notes have many short runs)."""
    starts, ends = array("q"), array("q")
    if not lengths:
        return OffsetMap(starts, ends)
    n_runs = len(lengths)
    length = np.fromiter(lengths, dtype=np.int64, count=n_runs)
    run_start = np.fromiter(run_starts, dtype=np.int64, count=n_runs)
    run_end = np.fromiter(run_ends, dtype=np.int64, count=n_runs)
    run_of_char = np.repeat(np.arange(n_runs), length)
    first_char_of_run = np.cumsum(length) - length
    offset_in_run = np.arange(len(run_of_char), dtype=np.int64) - first_char_of_run[run_of_char]
    identity = (run_end < 0)[run_of_char]
    char_starts = run_start[run_of_char] + np.where(identity, offset_in_run, 0)
    char_ends = np.where(identity, char_starts + 1, run_end[run_of_char])
    starts.frombytes(char_starts.astype("=i8").tobytes())
    ends.frombytes(char_ends.astype("=i8").tobytes())
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
    def goahead(self, end: bool) -> None:  # noqa: D401 - HTMLParser internal
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

    def set_cdata_mode(self, elem: str, *args, **kwargs) -> None:  # noqa: D401 - HTMLParser internal
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


def emit_text(
    out: _TextBuilder, source: str, start: int, end: int, *, preformatted: bool, decode: bool = True
) -> None:
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


# -- The fused scanner ---------------------------------------------------------------------------------
# One compiled pattern walks the whole document (``finditer``, in C) and classifies every construct:
# text runs, start tags with well-formed attributes (self-closing ``<br/>`` included), ``</name>`` end
# tags, raw-text elements with their content, comments, doctypes, Word's conditional sections
# (``<![if ...]>``, ``<![endif]>``), processing instructions. Each match is handled in one loop that keeps
# the text builder's state in local variables (see _fused_extract). Anything it does not model exactly —
# a tag of another shape, other ``<!`` forms, an unterminated construct, a hidden element left open —
# makes it give up, and the document goes through the HTMLParser-driven extractor
# from the start. Its semantics are those of HTMLParser *as it is written in the stdlib it was checked
# against*, so it runs only where ``html.parser`` and ``_markupbase`` are exactly those sources.

#: sha256 of ``inspect.getsource(html.parser) + inspect.getsource(_markupbase)`` for which the fused
#: scanner reproduces the HTMLParser-driven extractor (differential tests; CPython 3.11.7).
_FUSED_STDLIB_SHA256 = frozenset({"c679a63e9a349553de6797dac8a05e51db06f817bc890deab96fd57a13146adc"})
#: Text characters that stand for themselves in a collapsed run (not whitespace, control, "&" or "<").
_PLAIN_CHAR = r"[^\x00-\x20\x7f&<]"
_MARKUP_START = r"<[a-zA-Z!/?]"  # where HTMLParser's loop sees markup (a lone "<" is text)
#: An attribute of a start tag as the scanner models it: ASCII name, optional value quoted (no "<" or
#: ">" inside) or unquoted. An unquoted value stops where attrfind_tolerant's bare value ``[^>\s]*``
#: stops (at a ``\s`` character, Unicode whitespace included) and may hold "/": like HTMLParser, the
#: possessive value takes the "/" of ``<a href=x/>``, which is then an ordinary start tag, not a
#: self-closing one (quotes, "=", "<" and "`" in it are not modelled: such a tag falls back).
_FUSED_ATTRIBUTE = (
    r"[ \t\n\r\f]+[a-zA-Z_:][-a-zA-Z0-9_:.]*+"
    r"(?:[ \t\n\r\f]*+=[ \t\n\r\f]*+(?:\"[^\"<>]*+\"|'[^'<>]*+'|[^\s\"'=<>`]++))?"
)
#: The fused scanner's alternatives, in matching order: (kind, pattern). Each becomes the named group
#: ``kind``, the outer group of its alternative, so ``match.lastindex`` is that group's number.
_FUSED_ALTERNATIVES = (
    # Raw-text elements of this stdlib (CDATA_CONTENT_ELEMENTS): start tag, then the content up to the
    # closing tag. HTMLParser looks for r"</\s*script\s*>" with re.I, which also matches "</ſcript>", but
    # then parse_endtag's endtagfind wants an ASCII name and reads that one as text: the content ends at
    # the first closing tag whose name is "script" in ASCII letters, any case.
    # (A self-closing <script/> is not one: HTMLParser calls handle_startendtag, no raw text; it is a
    # "start" match below.)
    ("script", r"<[sS][cC][rR][iI][pP][tT](?:" + _FUSED_ATTRIBUTE + r")*+[ \t\n\r\f]*+>(?s:.*?)</\s*[sS][cC][rR][iI][pP][tT]\s*>"),
    ("style", r"<[sS][tT][yY][lL][eE](?:" + _FUSED_ATTRIBUTE + r")*+[ \t\n\r\f]*+>(?s:.*?)</\s*[sS][tT][yY][lL][eE]\s*>"),
    # Tag names as HTMLParser's endtagfind reads them (namespaced Word tags such as <o:p> included);
    # for start tags, tagfind_tolerant takes every character up to whitespace, "/" or ">". A start tag
    # ending in "/>" (after the name, a quoted value, a name without value or blanks: <br/>, <br />,
    # <img src="x"/>, <o:p/>) is the XHTML empty tag for which parse_starttag calls
    # handle_startendtag: group +2 is then "/".
    ("start", r"<([a-zA-Z][-.a-zA-Z0-9:_]*+)(?:" + _FUSED_ATTRIBUTE + r")*+[ \t\n\r\f]*+(/?)>"),  # +1: the name
    ("end", r"</([a-zA-Z][-.a-zA-Z0-9:_]*+)>"),
    # A text run made of blanks, then literal characters with single spaces between them, then blanks,
    # up to the next markup: the common case, decoded without _GAP_RE (groups +1, +2, +3).
    (
        "plain",
        r"(?=[^<])([ \t\n\r\f]*+)((?:" + _PLAIN_CHAR + r"++(?: " + _PLAIN_CHAR + r"++)*+)?)([ \t\n\r\f]*+)"
        r"(?=" + _MARKUP_START + r"|\Z)",
    ),
    ("text", r"(?:[^<]|<(?![a-zA-Z!/?]))(?:[^<]++|<(?![a-zA-Z!/?]))*+"),  # any other text run
    ("comment", r"<!--(?s:.*?)--\s*>"),  # _markupbase.parse_comment: the first "--\s*>" after "<!--"
    ("doctype", r"<![dD][oO][cC][tT][yY][pP][eE][^>]*>"),  # parse_html_declaration: up to the first ">"
    # Word's conditional sections (<![if !supportLists]>, <![endif]>): parse_marked_section reads the
    # name (_declname_match: ASCII, lower-cased) and, for if/else/endif, ends at the first "]\s*>"
    # after "<![" (\s: Unicode whitespace, as in _markupbase); unknown_decl then has no effect here.
    # Other names (CDATA: its content is text; unknown ones: AssertionError, a bogus comment) fall back.
    (
        "marked",
        r"<!\[(?:[iI][fF]|[eE][lL][sS][eE]|[eE][nN][dD][iI][fF])(?![-_.a-zA-Z0-9])(?s:.*?)\]\s*>",
    ),
    ("pi", r"<\?[^>]*>"),  # parse_pi: up to the first ">"
    ("other", r"<"),  # markup the scanner does not model: give up
)


@lru_cache(maxsize=1)
def _fused_scanner():
    """The fused scanner's compiled pattern, or None where this stdlib is not the one it mirrors."""
    try:
        import _markupbase
        import html.parser as html_parser

        source = inspect.getsource(html_parser) + inspect.getsource(_markupbase)
    except (OSError, TypeError, ImportError):  # no source shipped: keep the HTMLParser-driven path
        return None
    if hashlib.sha256(source.encode()).hexdigest() not in _FUSED_STDLIB_SHA256:
        return None
    # compiled only here: possessive quantifiers need Python 3.11
    return re.compile("|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _FUSED_ALTERNATIVES))


def _layout_code(tag: str, start: bool) -> int:
    """What a start (end) tag does to the layout, as _Extractor._start_element (handle_endtag) does it.

    1 ``<br>``, 2 paragraph break, 3 line break, 4 cell separator, 5 ``<head>`` (opens or closes it),
    6 hidden element (start tags only); plus 8 for preformatted elements (``pre_depth``).
    """
    code = 0
    if tag == "head":
        code = 5
    elif start and tag in HIDDEN_ELEMENTS:
        code = 6
    elif tag == "br":
        code = 1
    elif tag in PARAGRAPH_ELEMENTS:
        code = 2
    elif tag in LINE_ELEMENTS:
        code = 3
    elif start and tag in CELL_ELEMENTS:
        code = 4
    if tag in PREFORMATTED_ELEMENTS:
        code += 8
    return code


_FUSED_START_CODES = {tag: _layout_code(tag, True) for tag in _START_TAGS_WITH_EFFECT}
_FUSED_END_CODES = {tag: _layout_code(tag, False) for tag in _END_TAGS_WITH_EFFECT}
#: Elements whose content this stdlib's HTMLParser reads as raw text (its CDATA_CONTENT_ELEMENTS).
_FUSED_CDATA = frozenset({"script", "style"})
_REFERENCE_CACHE: dict[str, tuple[str, int, bool]] = {}


def _fused_extract(source: str, pre_depth: int = 0) -> tuple[_TextBuilder, list[HiddenRange]] | None:
    """The extractor's result computed by the fused scanner, or None where it gives up (see above).

    This is ``_Extractor`` driven by ``HTMLParser`` restated for the constructs the scanner matches:
    the same handlers in the same order (text runs, then each tag's layout effect), the same state
    (``hidden_element``, ``in_head``, ``pre_depth``), the same builder operations. The builder's
    scalar state (last character, trailing newlines, pending space) lives in local variables and is
    written back to the builder around the calls that need it (preformatted text, dropping a space).
    Text runs are decoded as _emit_collapsed does: a run of the ``plain`` shape without _GAP_RE, any
    other one split at _GAP_RE's gaps.
    """
    scanner = _fused_scanner()
    if scanner is None:
        return None
    out = _TextBuilder()
    parts, run_lengths, run_starts, run_ends = out.parts, out.run_lengths, out.run_starts, out.run_ends
    add_part, add_length, add_start, add_end = parts.append, run_lengths.append, run_starts.append, run_ends.append
    last = ""  # out.last
    newlines = 0  # out.trailing_newlines
    space_start = space_end = -1  # out.pending_space, -1 for None
    hidden: list[HiddenRange] = []
    hidden_element: str | None = None
    hidden_start = 0
    in_head = False
    closing_tags: dict[str, list[int]] = {}
    start_codes, end_codes = _FUSED_START_CODES.get, _FUSED_END_CODES.get
    split_gaps = _GAP_RE.split
    references = _REFERENCE_CACHE
    # kinds (match.lastindex) and group numbers as local variables: this loop runs once per construct
    kinds = scanner.groupindex
    script, style, comment, doctype, pi = (kinds[k] for k in ("script", "style", "comment", "doctype", "pi"))
    plain, start_tag, end_tag, other_text = kinds["plain"], kinds["start"], kinds["end"], kinds["text"]
    marked = kinds["marked"]
    plain_lead, plain_core, plain_trail, start_name, end_name = plain + 1, plain + 2, plain + 3, start_tag + 1, end_tag + 1
    start_slash = start_tag + 2
    for match in scanner.finditer(source):
        kind = match.lastindex
        if kind == plain:
            if hidden_element is not None:
                continue
            core = match.group(plain_core)
            if in_head:
                if core:
                    in_head = False  # text in <head> closes it
                else:
                    continue
            if pre_depth:
                out.last, out.trailing_newlines = last, newlines
                out.pending_space = (space_start, space_end) if space_start >= 0 else None
                start, end = match.span()
                _emit_preformatted(out, source, start, end, True)
                last, newlines = out.last, out.trailing_newlines
                space_start, space_end = out.pending_space or (-1, -1)
                continue
            start, end = match.span(plain_lead)
            if core:
                # collapsible_space(leading blanks), then literal(core): flush the pending space
                if space_start >= 0:
                    add_part(" "); add_length(1); add_start(space_start); add_end(space_end)
                    space_start = -1
                elif end > start and last not in "\n\t ":  # ("" is in it too)
                    add_part(" "); add_length(1); add_start(start); add_end(end)
                add_part(core); add_length(len(core)); add_start(end); add_end(-1)
                last = core[-1]
                newlines = 0
                start, end = match.span(plain_trail)
                if end > start:
                    space_start, space_end = start, end
            elif space_start < 0 and last not in "\n\t ":
                space_start, space_end = start, end
        elif kind == start_tag or kind == end_tag:
            if kind == start_tag:
                tag = match.group(start_name).lower()
                if hidden_element is not None:
                    if tag in _FUSED_CDATA and not match.group(start_slash):
                        return None  # a raw-text element never closed: HTMLParser swallows the rest
                    continue
                if in_head and tag not in HEAD_ELEMENTS:
                    in_head = False
                code = start_codes(tag)
                if code is None:  # <b>, <span>, <font>...: no effect
                    continue
                # <tag/>: handle_startendtag, i.e. _start_element(..., self_closing=True): the same
                # layout, but no pre_depth and no hidden element
                if code & 8:
                    code -= 8
                    if not match.group(start_slash):
                        pre_depth += 1
                if code == 5:
                    in_head = True
                    continue
                if code == 6:
                    if match.group(start_slash):
                        continue
                    position = match.start()
                    if tag in _FUSED_CDATA:
                        return None
                    closings = closing_tags.get(tag)
                    if closings is None:  # as _Extractor._is_closed_later (title, template)
                        pattern = re.compile(r"</%s(?![\w-])" % tag, re.I)
                        closings = closing_tags[tag] = [m.start() for m in pattern.finditer(source)]
                    if not closings or closings[-1] <= position:
                        return None  # kept as text by the extractor, with a warning
                    hidden_element = tag
                    hidden_start = match.end()
                    continue
            else:
                tag = match.group(end_name).lower()
                if hidden_element is not None:
                    if tag == hidden_element:
                        position = match.start()
                        if position > hidden_start:
                            hidden.append(HiddenRange(hidden_start, position, tag))
                        hidden_element = None
                    continue
                code = end_codes(tag)
                if code is None:
                    continue
                if code & 8:
                    code -= 8
                    if pre_depth:
                        pre_depth -= 1  # after the line break in the extractor, which ignores pre_depth
                if code == 5:
                    in_head = False
                    continue
            if not code:
                continue
            # forced_break / line_break / cell_separator
            position = match.start()
            space_start = -1
            if last == " ":  # a space kept as a literal: _drop_trailing_space
                out.last, out.pending_space = last, None
                out._drop_trailing_space()
                last = out.last
            if code == 1:
                if last != "" and newlines < 2:
                    add_part("\n"); add_length(1); add_start(position); add_end(position)
                    newlines += 1
                    last = "\n"
            elif code == 4:
                if last not in "\n\t":  # ("" is in it too)
                    add_part("\t"); add_length(1); add_start(position); add_end(position)
                    newlines = 0
                    last = "\t"
            elif last != "":
                if last == "\t" and run_starts[-1] == run_ends[-1]:
                    # _drop_last of an inserted cell separator: its own part and run
                    parts.pop(); run_lengths.pop(); run_starts.pop(); run_ends.pop()
                    last = parts[-1][-1] if parts else ""
                count = 2 if code == 2 else 1
                while newlines < count:
                    add_part("\n"); add_length(1); add_start(position); add_end(position)
                    newlines += 1
                    last = "\n"
        elif kind == other_text:
            if hidden_element is not None:
                continue
            start, end = match.span()
            if in_head:
                if source[start:end].strip(_WHITESPACE):
                    in_head = False
                else:
                    continue
            if pre_depth:
                out.last, out.trailing_newlines = last, newlines
                out.pending_space = (space_start, space_end) if space_start >= 0 else None
                _emit_preformatted(out, source, start, end, True)
                last, newlines = out.last, out.trailing_newlines
                space_start, space_end = out.pending_space or (-1, -1)
                continue
            # _emit_collapsed (such a run is never blank: "plain" takes those), on the run split at its
            # gaps: [literal, reference, whitespace, literal, reference, whitespace, ..., literal]
            pieces = split_gaps(source[start:end])
            pieces.append(None)
            pieces.append(None)
            triples = iter(pieces)
            position = start
            for text, ref, blank in zip(triples, triples, triples):
                if text:
                    # _collapsed_literal(text, position)
                    text_end = position + len(text)
                    if text[0] == " " and (space_start >= 0 or last in "\n\t "):
                        text = text[1:]
                        position += 1
                    if text:
                        if text[-1] == " " and len(text) > 1 and space_start < 0:
                            add_part(text[:-1]); add_length(len(text) - 1); add_start(position); add_end(-1)
                            last = text[-2]
                            newlines = 0
                            if last not in "\n\t ":
                                space_start, space_end = text_end - 1, text_end
                        elif text == " ":
                            if space_start < 0 and last not in "\n\t ":
                                space_start, space_end = position, text_end
                        else:
                            if space_start >= 0:
                                add_part(" "); add_length(1); add_start(space_start); add_end(space_end)
                                space_start = -1
                            add_part(text); add_length(len(text)); add_start(position); add_end(-1)
                            last = text[-1]
                            newlines = 0
                    position = text_end
                if ref is None:
                    if blank is None:
                        break  # the final literal
                    # collapsible_space(whitespace)
                    blank_end = position + len(blank)
                    if space_start < 0 and last not in "\n\t ":
                        space_start, space_end = position, blank_end
                    position = blank_end
                    continue
                # _emit_reference(ref, position, preformatted=False)
                ref_start = position
                position += len(ref)
                decoded = references.get(ref)
                if decoded is None:
                    value, consumed = decode_reference(ref)
                    decoded = (value, consumed, value == "" or (len(value) == 1 and value in _WHITESPACE))
                    if len(references) < 4096:
                        references[ref] = decoded
                value, consumed, is_space = decoded
                if space_start >= 0 and (consumed == 0 or not is_space):
                    add_part(" "); add_length(1); add_start(space_start); add_end(space_end)
                    space_start = -1
                if consumed == 0:  # an unknown name: literal
                    add_part(ref); add_length(len(ref)); add_start(ref_start); add_end(-1)
                    last = ref[-1]
                    newlines = 0
                    continue
                ref_end = ref_start + consumed
                if is_space:
                    if space_start < 0 and last not in "\n\t ":
                        space_start, space_end = ref_start, ref_end
                else:
                    add_part(value); add_length(len(value)); add_start(ref_start); add_end(ref_end)
                    last = value[-1]
                    newlines = 0
                if ref_end < position:  # a legacy reference without ";": the rest is literal
                    if space_start >= 0:
                        add_part(" "); add_length(1); add_start(space_start); add_end(space_end)
                        space_start = -1
                    add_part(ref[consumed:]); add_length(position - ref_end); add_start(ref_end); add_end(-1)
                    last = ref[-1]
                    newlines = 0
        elif kind == script or kind == style:
            if hidden_element is None:
                # the element is hidden from the end of its start tag (no ">" inside: see _ATTRIBUTE)
                # to its closing tag (the match's only "<" after its start)
                content_start = source.find(">", match.start()) + 1
                content_end = source.rfind("<", content_start, match.end())
                if content_end > content_start:
                    hidden.append(HiddenRange(content_start, content_end, "script" if kind == script else "style"))
        elif kind == comment:
            hidden.append(HiddenRange(match.start(), match.end(), "comment"))
        elif kind != doctype and kind != pi and kind != marked:
            return None  # markup the scanner does not model
    if hidden_element is not None:
        return None  # its closing tag was never parsed as one: the extractor keeps the rest as text
    out.last, out.trailing_newlines = last, newlines
    out.pending_space = (space_start, space_end) if space_start >= 0 else None
    return out, hidden


def html_to_text(html: str | bytes, *, preformatted: bool | None = None) -> ParsedHtml:
    """Extract the text of an HTML note with the source range of every character.

    ``html`` may be bytes (decoded with :func:`deid_ds.encoding.decode_note_bytes`; offsets then refer
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
        try:
            result = _fused_extract(html, 1 if preformatted else 0)
        except Exception:  # noqa: BLE001 - a bug there must not cost a note: the reference path decides
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
    except Exception:  # noqa: BLE001 - never crash on a malformed note; counted, text kept
        extractor.recover()
    for kind, n in extractor.warnings.items():
        warnings[kind] = warnings.get(kind, 0) + n
    text, offsets = extractor.out.build()
    return ParsedHtml(html, text, offsets, tuple(extractor.hidden), warnings)
