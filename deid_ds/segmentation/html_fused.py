"""The fused scanner: ``html_to_text``'s fast path for the markup it models exactly.

One compiled pattern walks the whole document (``finditer``, in C) and classifies every construct:
text runs, start tags with well-formed attributes (self-closing ``<br/>`` included), ``</name>`` end
tags, raw-text elements with their content, comments, doctypes, Word's conditional sections
(``<![if ...]>``, ``<![endif]>``), processing instructions. Each match is handled in one loop that keeps
the text builder's state in local variables (see _fused_extract). Anything it does not model exactly —
a tag of another shape, other ``<!`` forms, an unterminated construct, a hidden element left open —
makes it give up, and the document goes through the HTMLParser-driven extractor
from the start. Its semantics are those of HTMLParser *as it is written in the stdlib it was checked
against*, so it runs only where ``html.parser`` and ``_markupbase`` are exactly those sources.

:func:`deid_ds.segmentation.html_text.html_to_text` tries :func:`_fused_extract` first and hands the whole document to
the HTMLParser-driven extractor (``deid_ds.segmentation.html_text._Extractor``) when it returns ``None``; the
extractor is the reference it is tested against (``tests/segmentation/test_html_text_fused.py``).
"""

from __future__ import annotations

import hashlib
import inspect
import re
from functools import lru_cache
from itertools import islice

from deid_ds.segmentation.html_text import (
    _END_TAGS_WITH_EFFECT,
    _GAP_RE,
    _START_TAGS_WITH_EFFECT,
    _WHITESPACE,
    CELL_ELEMENTS,
    HEAD_ELEMENTS,
    HIDDEN_ELEMENTS,
    LINE_ELEMENTS,
    PARAGRAPH_ELEMENTS,
    PREFORMATTED_ELEMENTS,
    HiddenRange,
    _emit_preformatted,
    _TextBuilder,
    decode_reference,
)

#: sha256 of ``inspect.getsource(html.parser) + inspect.getsource(_markupbase)`` for which the fused
#: scanner reproduces the HTMLParser-driven extractor (differential tests; CPython 3.11.7).
_FUSED_STDLIB_SHA256 = frozenset({"c679a63e9a349553de6797dac8a05e51db06f817bc890deab96fd57a13146adc"})
_MARKUP_START = r"<[a-zA-Z!/?]"  # where HTMLParser's loop sees markup (a lone "<" is text)
#: The name of a complete character reference, with its ";" (what follows its "&"): exactly what
#: _GAP_RE's ``ref`` group takes there.
_REFERENCE_NAME = re.compile(r"(?:#[xX][0-9a-fA-F]+|#[0-9]+|[A-Za-z][A-Za-z0-9]*);")
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
    (
        "script",
        r"<[sS][cC][rR][iI][pP][tT](?:"
        + _FUSED_ATTRIBUTE
        + r")*+[ \t\n\r\f]*+>(?s:.*?)</\s*[sS][cC][rR][iI][pP][tT]\s*>",
    ),
    (
        "style",
        r"<[sS][tT][yY][lL][eE](?:" + _FUSED_ATTRIBUTE + r")*+[ \t\n\r\f]*+>(?s:.*?)</\s*[sS][tT][yY][lL][eE]\s*>",
    ),
    # Tag names as HTMLParser's endtagfind reads them (namespaced Word tags such as <o:p> included);
    # for start tags, tagfind_tolerant takes every character up to whitespace, "/" or ">". A start tag
    # ending in "/>" (after the name, a quoted value, a name without value or blanks: <br/>, <br />,
    # <img src="x"/>, <o:p/>) is the XHTML empty tag for which parse_starttag calls
    # handle_startendtag: group +2 is then "/".
    ("start", r"<([a-zA-Z][-.a-zA-Z0-9:_]*+)(?:" + _FUSED_ATTRIBUTE + r")*+[ \t\n\r\f]*+(/?)>"),  # +1: the name
    ("end", r"</([a-zA-Z][-.a-zA-Z0-9:_]*+)>"),
    # A text run: blanks, a core that starts and ends with a character that is not a blank, blanks, up
    # to the next markup (groups +1, +2, +3). The only control character the core may hold is "\n" (a
    # run with "\t", "\r", "\f" or another one inside is "text"). The loop decodes the common cores
    # itself (see _fused_extract) and hands the others to _collapsed_run: matching any such core and
    # telling the cases apart with str methods costs the regex engine far less than spelling them out.
    (
        "run",
        r"(?=[^<])([ \t\n\r\f]*+)((?:[^\x00-\x09\x0b-\x1f\x7f<]*[^\x00-\x20\x7f<])?)([ \t\n\r\f]*+)"
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
#: A tag name as written ("br", "BR", "o:p") → its start (end) layout code, 0 for no effect: one lookup
#: per tag, without lower-casing the name. Filled by _code_of_name, bounded: notes use few spellings.
_START_CODE_OF_NAME: dict[str, int] = {}
_END_CODE_OF_NAME: dict[str, int] = {}


def _code_of_name(name: str, cache: dict[str, int], codes: dict[str, int]) -> int:
    """The layout code (``codes``: _FUSED_START_CODES or _FUSED_END_CODES) of the tag written ``name``, cached."""
    code = codes.get(name.lower(), 0)
    if len(cache) < 4096:
        cache[name] = code
    return code


#: Elements whose content this stdlib's HTMLParser reads as raw text (its CDATA_CONTENT_ELEMENTS).
_FUSED_CDATA = frozenset({"script", "style"})
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


def _fused_extract(source: str, pre_depth: int = 0) -> tuple[_TextBuilder, list[HiddenRange]] | None:
    """The extractor's result computed by the fused scanner, or None where it gives up (see above).

    This is ``_Extractor`` driven by ``HTMLParser`` restated for the constructs the scanner matches:
    the same handlers in the same order (text runs, then each tag's layout effect), the same state
    (``hidden_element``, ``in_head``, ``pre_depth``), the same builder operations. The builder's
    scalar state (last character, trailing newlines, pending space) lives in local variables and is
    written back to the builder around the calls that need it (preformatted text, dropping a space).
    Text runs are decoded as _emit_collapsed does: a "run" whose core has single spaces only, or also
    single "\n" and simple references (_simple_reference), without _GAP_RE; any other one split at
    _GAP_RE's gaps (_collapsed_run).
    """
    scanner = _fused_scanner()
    if scanner is None:
        return None
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
    closing_tags: dict[str, list[int]] = {}
    start_codes, end_codes = _START_CODE_OF_NAME.get, _END_CODE_OF_NAME.get
    # kinds (match.lastindex) and group numbers as local variables: this loop runs once per construct
    kinds = scanner.groupindex
    script, style, comment, doctype, pi = (kinds[k] for k in ("script", "style", "comment", "doctype", "pi"))
    run, start_tag, end_tag, other_text, marked = (
        kinds["run"],
        kinds["start"],
        kinds["end"],
        kinds["text"],
        kinds["marked"],
    )
    run_lead, run_core, run_trail, start_name, end_name = run + 1, run + 2, run + 3, start_tag + 1, end_tag + 1
    simple_references = _SIMPLE_REFERENCES
    start_slash = start_tag + 2
    for match in scanner.finditer(source):
        kind = match.lastindex
        if kind == run:
            if hidden_element is not None:
                continue
            core = match.group(run_core)
            if in_head:
                if core:
                    in_head = False  # text in <head> closes it
                else:
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
                    if name.lower() in _FUSED_CDATA and not match.group(start_slash):
                        return None  # a raw-text element never closed: HTMLParser swallows the rest
                    continue
                if in_head and name.lower() not in HEAD_ELEMENTS:
                    in_head = False
                code = start_codes(name)
                if code is None:
                    code = _code_of_name(name, _START_CODE_OF_NAME, _FUSED_START_CODES)
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
                    code = _code_of_name(name, _END_CODE_OF_NAME, _FUSED_END_CODES)
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
        elif kind != doctype and kind != pi and kind != marked:
            return None  # markup the scanner does not model
    if hidden_element is not None:
        return None  # its closing tag was never parsed as one: the extractor keeps the rest as text
    _store_state(out, last, newlines, space_start, space_end)
    return out, hidden


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
