"""HTML to plain text, with the source range of every text character.

The reference study parses notes with a parser that "allows tracking character positions of extracted
raw texts in the original HTML documents so that we can mask potential PII at the end of the pipeline".
This module is that parser's text builder; where markup is and what it is comes from deid-ds's own
scanner, :mod:`deid_ds.segmentation.html_scanner` (its docstring is the specification of the markup).

How it stays exact and loses nothing
-------------------------------------
Everything between two markup constructs is text, taken verbatim from the source and decoded here
(character references, whitespace). Text is thus the exact complement of the markup: a stray ``<``, an
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
counted. A ``<title>`` or ``<template>`` whose closing tag is seen further on but never read as one (it
sits in a comment, say) is found open at the end of the note: the rest of the note from its start tag
is then read as text, tags dropped (:func:`_recover`), with the same warning.

Warnings are counts per kind (``fallback_decoded_bytes``, ``control_chars``, ``unclosed_hidden_element``,
``parser_recovered``: a marked section of an unknown name, ``<![foo]>``, read as a comment); they never
carry note text.

Speed
-----
One loop over the scanner's matches (:func:`_extract`) does all the work: the scanner's pattern
classifies every construct in C, and the loop keeps the text builder's state in local variables,
decoding the common text runs itself.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from html import unescape as _html_unescape
from html.entities import html5 as _HTML5
from itertools import chain, islice

import numpy as np

from deid_ds.segmentation.encoding import decode_note_bytes
from deid_ds.segmentation.html_scanner import GROUP, RAW_TEXT_ELEMENTS, SCANNER, Construct, markup_at
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
_FALLBACK_MARKUP = re.compile(r"<[A-Za-z!/?][^<>]*>")


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


#: The name of a complete character reference, with its ";" (what follows its "&"): exactly what
#: _GAP_RE's ``ref`` group takes there.
_REFERENCE_NAME = re.compile(r"(?:#[xX][0-9a-fA-F]+|#[0-9]+|[A-Za-z][A-Za-z0-9]*);")


def _layout_code(tag: str, start: bool) -> int:
    """What a start (end) tag does to the layout (see the module docstring).

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


_START_CODES = {tag: _layout_code(tag, True) for tag in _START_TAGS_WITH_EFFECT}
_END_CODES = {tag: _layout_code(tag, False) for tag in _END_TAGS_WITH_EFFECT}
#: A tag name as written ("br", "BR", "o:p") → its start (end) layout code, 0 for no effect: one lookup
#: per tag, without lower-casing the name. Filled by _code_of_name, bounded: notes use few spellings.
_START_CODE_OF_NAME: dict[str, int] = {}
_END_CODE_OF_NAME: dict[str, int] = {}


def _code_of_name(name: str, cache: dict[str, int], codes: dict[str, int]) -> int:
    """The layout code (``codes``: _START_CODES or _END_CODES) of the tag written ``name``, cached."""
    code = codes.get(name.lower(), 0)
    if len(cache) < 4096:
        cache[name] = code
    return code


#: reference → (decoded text, characters it stands for, whether it decodes to a blank or to nothing),
#: filled by _decoded_reference, bounded: notes use few distinct references.
_REFERENCE_CACHE: dict[str, tuple[str, int, bool]] = {}
#: what follows an "&" up to ";" ("eacute;", "#233;") → the decoded text of that reference where a run's
#: core may hold it, "" where it may not; filled by _simple_reference, bounded as _REFERENCE_CACHE.
_SIMPLE_REFERENCES: dict[str, str] = {}


def _decoded_reference(ref: str) -> tuple[str, int, bool]:
    """``decode_reference(ref)`` and whether it is blank (as _emit_reference tests it), cached."""
    decoded = _REFERENCE_CACHE.get(ref)
    if decoded is None:
        value, consumed = decode_reference(ref)
        decoded = (value, consumed, value == "" or (len(value) == 1 and value in _WHITESPACE))
        if len(_REFERENCE_CACHE) < 4096:
            _REFERENCE_CACHE[ref] = decoded
    return decoded


def _simple_reference(name: str) -> str:
    """The decoded text of the reference ``"&" + name`` if a run's core may hold it, else "".

    ``name`` is what follows an "&" up to the first ";" (included), or "" where no ";" follows: not
    simple unless it is a complete reference's name (_REFERENCE_NAME), i.e. what _GAP_RE reads there.

    _emit_reference maps such a reference's whole text to the whole reference (``mapped``), and neither
    its first nor its last character changes how a following blank collapses. Not simple: a reference
    that stands for fewer characters than it has (a legacy prefix such as "&ampx;" or an unknown name:
    the rest is literal) or that decodes to a blank or to nothing ("&#10;", "&#1;": collapsible).
    """
    simple = ""
    if _REFERENCE_NAME.fullmatch(name):
        value, consumed, is_space = _decoded_reference("&" + name)
        if consumed == len(name) + 1 and not is_space and value[-1] not in "\n\t ":
            simple = value
    if len(_SIMPLE_REFERENCES) < 4096 and len(name) <= 64:  # (names of references are short)
        _SIMPLE_REFERENCES[name] = simple
    return simple


def _extract(source: str, pre_depth: int = 0) -> tuple[_TextBuilder, list[HiddenRange], dict[str, int]]:
    """The text of ``source`` (in the builder), its hidden ranges and the warnings counted.

    One loop over the scanner's matches (see :mod:`deid_ds.segmentation.html_scanner`): text runs, then each
    tag's layout effect, with the state of the document (``hidden_element``, ``in_head``, ``pre_depth``).
    The builder's scalar state (last character, trailing newlines, pending space) lives in local variables
    and is written back to the builder around the calls that need it (preformatted text, dropping a space).
    Text runs are decoded as _emit_collapsed does: a "run" whose core has single spaces only, or also
    single "\n" and simple references (_simple_reference), without _GAP_RE; any other one split at
    _GAP_RE's gaps (_collapsed_run). A construct of a shape the pattern does not match whole is read by
    :func:`~deid_ds.segmentation.html_scanner.markup_at`, and the scan goes on after it (a new round of
    ``finditer``).
    """
    scanner = SCANNER
    out = _TextBuilder()
    parts, runs = out.parts, out.runs
    add_part, add_run = parts.append, runs.extend
    last = ""  # out.last
    newlines = 0  # out.trailing_newlines
    space_start = space_end = -1  # out.pending_space, -1 for None
    hidden: list[HiddenRange] = []
    hidden_element: str | None = None
    hidden_start = 0
    in_head = False
    head_blank_start = head_blank_end = -1  # the last blank run dropped in <head>
    warnings: dict[str, int] = {}
    closing_tags: dict[str, list[int]] = {}
    start_codes, end_codes = _START_CODE_OF_NAME.get, _END_CODE_OF_NAME.get
    # kinds (match.lastindex) and group numbers as local variables: this loop runs once per construct
    kinds = GROUP
    script, style, comment = kinds["script"], kinds["style"], kinds["comment"]
    run, start_tag, end_tag, other_text = (
        kinds["run"],
        kinds["start"],
        kinds["end"],
        kinds["text"],
    )
    run_lead, run_core, run_trail = kinds["lead"], kinds["core"], kinds["trail"]
    start_name, end_name, start_slash = kinds["start_name"], kinds["end_name"], kinds["slash"]
    simple_references = _SIMPLE_REFERENCES
    other = kinds["other"]
    finditer = scanner.finditer
    position = 0
    pending: _Found | None = None  # a construct read by markup_at, to handle first in the next round
    while True:
        matches = finditer(source, position)
        if pending is not None:
            matches = chain((pending,), matches)
            pending = None
        for match in matches:
            kind = match.lastindex
            if kind == run:
                if hidden_element is not None:
                    continue
                core = match.group(run_core)
                if in_head:
                    if core:
                        in_head = False  # text in <head> closes it
                    else:
                        head_blank_start, head_blank_end = match.span()
                        continue
                if pre_depth:
                    start, end = match.span()
                    last, newlines, space_start, space_end = _preformatted(
                        out, source, start, end, last, newlines, space_start, space_end
                    )
                    continue
                start, end = match.span(run_lead)
                if not core:
                    if space_start < 0 and last not in "\n\t ":  # collapsible_space(blanks) ("" is in it too)
                        space_start, space_end = start, end
                    continue
                if "&" in core or "\n" in core or "  " in core:
                    # references, line breaks or runs of blanks in the core
                    if "  " in core or ("\n" in core and ("\n\n" in core or " \n" in core or "\n " in core)):
                        start, end = match.span()  # runs of blanks: _GAP_RE's gaps
                        last, newlines, space_start, space_end = _collapsed_run(
                            out, source, start, end, last, newlines, space_start, space_end
                        )
                        continue
                    # single "\n" and complete references: one identity run per literal stretch, each single
                    # "\n" in it read as a space mapped to itself (collapsible_space, flushed by the next
                    # literal), one run per reference (``mapped``), i.e. what _GAP_RE's split would give
                    rollback = len(parts)  # one run per part
                    if space_start >= 0:  # collapsible_space(leading blanks), then the core (as below)
                        add_part(" ")
                        add_run((1, space_start, space_end))
                    elif end > start and last not in "\n\t ":
                        add_part(" ")
                        add_run((1, start, end))
                    chunks = core.replace("\n", " ").split("&")
                    position = end
                    literal = chunks[0]
                    if literal:
                        add_part(literal)
                        add_run((len(literal), position, -1))
                        position += len(literal)
                    # each chunk after the first: a reference without its "&" (up to ";"), then a literal
                    for chunk in islice(chunks, 1, None):
                        name = chunk[: chunk.find(";") + 1]  # "" where no ";" follows
                        value = simple_references.get(name) or _simple_reference(name)
                        if not value:
                            break
                        add_part(value)
                        add_run((len(value), position, position + len(name) + 1))
                        position += len(name) + 1
                        literal = chunk[len(name) :]
                        if literal:
                            add_part(literal)
                            add_run((len(literal), position, -1))
                            position += len(literal)
                    else:
                        last = parts[-1][-1]
                        newlines = 0
                        space_start = -1
                        start, end = match.span(run_trail)
                        if end > start:
                            space_start, space_end = start, end
                        continue
                    # a reference that is not simple: undo, and decode the run the general way
                    del parts[rollback:], runs[3 * rollback :]
                    start, end = match.span()
                    last, newlines, space_start, space_end = _collapsed_run(
                        out, source, start, end, last, newlines, space_start, space_end
                    )
                    continue
                # a core with single spaces only: collapsible_space(leading blanks), then literal(core)
                if space_start >= 0:  # flush the pending space
                    add_part(" ")
                    add_run((1, space_start, space_end))
                elif end > start and last not in "\n\t ":  # ("" is in it too)
                    add_part(" ")
                    add_run((1, start, end))
                add_part(core)
                add_run((len(core), end, -1))
                last = core[-1]
                newlines = 0
                space_start = -1
                start, end = match.span(run_trail)
                if end > start:
                    space_start, space_end = start, end
            elif kind == start_tag or kind == end_tag:
                if kind == start_tag:
                    name = match.group(start_name)
                    if hidden_element is not None:
                        continue
                    if in_head and name.lower() not in HEAD_ELEMENTS:
                        in_head = False
                    code = start_codes(name)
                    if code is None:
                        code = _code_of_name(name, _START_CODE_OF_NAME, _START_CODES)
                    if not code:  # <b>, <span>, <font>...: no effect
                        continue
                    if code > 4:  # preformatted, <head>, hidden elements: not only a layout code
                        tag = name.lower()
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
                            if tag in RAW_TEXT_ELEMENTS:
                                # no closing tag follows (else the scanner reads it as raw text): its content
                                # is text
                                warnings["unclosed_hidden_element"] = warnings.get("unclosed_hidden_element", 0) + 1
                                continue
                            closings = closing_tags.get(tag)
                            if closings is None:  # <title>, <template>: is a closing tag written further on?
                                pattern = re.compile(rf"</{tag}(?![\w-])", re.I)
                                closings = closing_tags[tag] = [m.start() for m in pattern.finditer(source)]
                            if not closings or closings[-1] <= position:
                                # none: the element would hide the rest of the note; its content is text
                                warnings["unclosed_hidden_element"] = warnings.get("unclosed_hidden_element", 0) + 1
                                continue
                            hidden_element = tag
                            hidden_start = match.end()
                            continue
                else:
                    name = match.group(end_name)
                    if hidden_element is not None:
                        if name.lower() == hidden_element:
                            position = match.start()
                            if position > hidden_start:
                                hidden.append(HiddenRange(hidden_start, position, hidden_element))
                            hidden_element = None
                        continue
                    code = end_codes(name)
                    if code is None:
                        code = _code_of_name(name, _END_CODE_OF_NAME, _END_CODES)
                    if not code:
                        continue
                    if code > 4:  # preformatted elements, <head>
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
                        add_part("\n")
                        add_run((1, position, position))
                        newlines += 1
                        last = "\n"
                elif code == 4:
                    if last not in "\n\t":  # ("" is in it too)
                        add_part("\t")
                        add_run((1, position, position))
                        newlines = 0
                        last = "\t"
                elif last != "":
                    if last == "\t" and runs[-2] == runs[-1]:
                        # _drop_last of an inserted cell separator: its own part and run
                        parts.pop()
                        del runs[-3:]
                        last = parts[-1][-1] if parts else ""
                    count = 2 if code == 2 else 1
                    while newlines < count:
                        add_part("\n")
                        add_run((1, position, position))
                        newlines += 1
                        last = "\n"
            elif kind == other_text:
                if hidden_element is not None:
                    continue
                start, end = match.span()
                if in_head:
                    if source[start:end].strip(_WHITESPACE):
                        in_head = False
                        if head_blank_end == start:
                            # a "<" read as text (markup_at) right after a blank run dropped in <head>: the
                            # text between two markup constructs is one run, the blank run with it
                            start = head_blank_start
                    else:
                        continue
                if pre_depth:
                    last, newlines, space_start, space_end = _preformatted(
                        out, source, start, end, last, newlines, space_start, space_end
                    )
                    continue
                last, newlines, space_start, space_end = _collapsed_run(
                    out, source, start, end, last, newlines, space_start, space_end
                )
            elif kind == script or kind == style:
                if hidden_element is None:
                    # the element is hidden from the end of its start tag (no ">" inside: see _FUSED_ATTRIBUTE)
                    # to its closing tag (the match's only "<" after its start)
                    content_start = source.find(">", match.start()) + 1
                    content_end = source.rfind("<", content_start, match.end())
                    if content_end > content_start:
                        hidden.append(HiddenRange(content_start, content_end, "script" if kind == script else "style"))
            elif kind == comment:
                hidden.append(HiddenRange(match.start(), match.end(), "comment"))
            elif kind == other:
                # markup of another shape: read by markup_at, then the scan resumes after it; a tag or
                # text is handled above, as the first match of the next round
                construct = markup_at(source, match.start())
                if construct.recovered:
                    warnings["parser_recovered"] = warnings.get("parser_recovered", 0) + 1
                kind = construct.kind
                if kind == "start" or kind == "end" or kind == "text":
                    pending = _Found(construct)
                elif kind == "comment":
                    hidden.append(HiddenRange(construct.start, construct.end, "comment"))
                elif kind == "raw":
                    if hidden_element is None and construct.content_end > construct.content_start:
                        hidden.append(HiddenRange(construct.content_start, construct.content_end, construct.name))
                elif kind == "cdata" and hidden_element is None:
                    start, end = construct.content_start, construct.content_end
                    if in_head and source[start:end].strip(_WHITESPACE):
                        in_head = False
                    if not in_head:
                        _store_state(out, last, newlines, space_start, space_end)
                        emit_text(out, source, start, end, preformatted=bool(pre_depth), decode=False)
                        space_start, space_end = out.pending_space or (-1, -1)
                        last, newlines = out.last, out.trailing_newlines
                position = construct.end
                break
        else:
            break
    _store_state(out, last, newlines, space_start, space_end)
    if hidden_element is not None:
        # its closing tag was never read as one (it sits in a comment, say): the rest of the note, from
        # the element's start, is read as text
        warnings["unclosed_hidden_element"] = warnings.get("unclosed_hidden_element", 0) + 1
        _recover(out, source, hidden_start, bool(pre_depth))
    return out, hidden, warnings


class _Found:
    """A construct read by :func:`~deid_ds.segmentation.html_scanner.markup_at` (a tag or text), shaped like
    the match of :data:`~deid_ds.segmentation.html_scanner.SCANNER` that stands for it (what _extract reads of
    a match)."""

    __slots__ = ("construct", "lastindex")

    def __init__(self, construct: Construct) -> None:
        self.construct = construct
        kind = construct.kind
        self.lastindex = GROUP["text"] if kind == "text" else GROUP[kind]

    def start(self) -> int:
        return self.construct.start

    def end(self) -> int:
        return self.construct.end

    def span(self) -> tuple[int, int]:
        return self.construct.start, self.construct.end

    def group(self, number: int) -> str:
        """The tag's name (groups ``start_name``, ``end_name``), or "/" for a self-closing start tag (``slash``)."""
        if number == _SLASH:
            return "/" if self.construct.self_closing else ""
        return self.construct.name


_SLASH = GROUP["slash"]


def _recover(out: _TextBuilder, source: str, position: int, preformatted: bool) -> None:
    """Read ``source[position:]`` as text, tags (``<x...>``, no ``<`` or ``>`` inside) dropped without effect."""
    for match in _FALLBACK_MARKUP.finditer(source, position):
        if match.start() > position:
            _text_piece(out, source, position, match.start(), preformatted)
        position = match.end()
    if position < len(source):
        _text_piece(out, source, position, len(source), preformatted)


def _text_piece(out: _TextBuilder, source: str, start: int, end: int, preformatted: bool) -> None:
    if preformatted:
        _emit_preformatted(out, source, start, end, True)
    elif _BLANK.fullmatch(source, start, end):
        out.collapsible_space(start, end)
    else:
        _emit_collapsed(out, source, start, end, True)


def _store_state(out: _TextBuilder, last: str, newlines: int, space_start: int, space_end: int) -> None:
    """Write the loop's local copy of the builder's scalar state back to the builder (-1: no pending space)."""
    out.last, out.trailing_newlines = last, newlines
    out.pending_space = (space_start, space_end) if space_start >= 0 else None


def _preformatted(
    out: _TextBuilder, source: str, start: int, end: int, last: str, newlines: int, space_start: int, space_end: int
) -> tuple[str, int, int, int]:
    """A text run inside ``<pre>`` (rare): the builder's own preformatted path, with the loop's local state
    written to the builder before and read back after; returns ``(last, newlines, space_start, space_end)``."""
    _store_state(out, last, newlines, space_start, space_end)
    _emit_preformatted(out, source, start, end, True)
    space_start, space_end = out.pending_space or (-1, -1)
    return out.last, out.trailing_newlines, space_start, space_end


def _collapsed_run(
    out: _TextBuilder, source: str, start: int, end: int, last: str, newlines: int, space_start: int, space_end: int
) -> tuple[str, int, int, int]:
    """A text run outside ``<pre>`` whose core the loop does not decode itself (blank, unknown or legacy
    references, runs of blanks, control characters, a stray "<"): _emit_collapsed restated on the loop's local state;
    returns ``(last, newlines, space_start, space_end)``."""
    add_part, add_run = out.parts.append, out.runs.extend
    references = _REFERENCE_CACHE
    # _emit_collapsed (such a run is never blank: "run" takes those), on the run split at its
    # gaps: [literal, reference, whitespace, literal, reference, whitespace, ..., literal]
    pieces = _GAP_RE.split(source[start:end])
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
                    add_part(text[:-1])
                    add_run((len(text) - 1, position, -1))
                    last = text[-2]
                    newlines = 0
                    if last not in "\n\t ":
                        space_start, space_end = text_end - 1, text_end
                elif text == " ":
                    if space_start < 0 and last not in "\n\t ":
                        space_start, space_end = position, text_end
                else:
                    if space_start >= 0:
                        add_part(" ")
                        add_run((1, space_start, space_end))
                        space_start = -1
                    add_part(text)
                    add_run((len(text), position, -1))
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
        value, consumed, is_space = references.get(ref) or _decoded_reference(ref)
        if space_start >= 0 and (consumed == 0 or not is_space):
            add_part(" ")
            add_run((1, space_start, space_end))
            space_start = -1
        if consumed == 0:  # an unknown name: literal
            add_part(ref)
            add_run((len(ref), ref_start, -1))
            last = ref[-1]
            newlines = 0
            continue
        ref_end = ref_start + consumed
        if is_space:
            if space_start < 0 and last not in "\n\t ":
                space_start, space_end = ref_start, ref_end
        else:
            add_part(value)
            add_run((len(value), ref_start, ref_end))
            last = value[-1]
            newlines = 0
        if ref_end < position:  # a legacy reference without ";": the rest is literal
            if space_start >= 0:
                add_part(" ")
                add_run((1, space_start, space_end))
                space_start = -1
            add_part(ref[consumed:])
            add_run((position - ref_end, ref_end, -1))
            last = ref[-1]
            newlines = 0
    return last, newlines, space_start, space_end


def html_to_text(html: str | bytes, *, preformatted: bool | None = None) -> ParsedHtml:
    """Extract the text of an HTML note with the source range of every character.

    ``html`` may be bytes (decoded with :func:`deid_ds.segmentation.encoding.decode_note_bytes`; offsets then refer
    to the decoded string, returned as :attr:`ParsedHtml.html`). ``preformatted`` forces (``True``) or
    forbids (``False``) keeping the source whitespace; by default it is kept only for documents with no
    markup at all, i.e. plain-text notes.
    """
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
    out, hidden, counted = _extract(html, 1 if preformatted else 0)
    for kind, n in counted.items():
        warnings[kind] = warnings.get(kind, 0) + n
    text, offsets = out.build()
    return ParsedHtml(html, text, offsets, tuple(hidden), warnings)
