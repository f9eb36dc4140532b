"""deid-ds's HTML scanner: the source of a note cut into constructs, each with its ``[start, end)``.

This docstring is the specification; ``tests/segmentation/test_html_scanner.py`` states it as examples.
It is deid-ds's own and the same on every Python: nothing here uses ``html.parser``. (It was written to
give, on every note, what deid-ds read with CPython 3.11's ``html.parser`` before; where the two differ
now is listed by ``tests/segmentation/test_html_scanner_vs_stdlib.py``.)

Constructs
----------
Markup starts only at a ``<`` followed by an ASCII letter, ``!``, ``/`` or ``?``; every other ``<`` (``a < b``,
``<3``, a ``<`` at the very end) is text. **Text** is everything that is not markup, taken verbatim.

* **Start tag** ``<name ...>``: the name runs from the letter to a blank (``\\t \\n \\r \\f`` or a space),
  ``/``, ``>`` or NUL and is compared in lower case (``<BR>`` is ``br``). Attributes follow, separated by
  whitespace or ``/``: a name, then optionally ``=`` and a value, ``'...'`` or ``"..."`` (which may hold
  ``>`` and line breaks) or unquoted (up to whitespace or ``>``; it keeps a final ``/``: ``<a href=x/>`` is
  not self-closing). The tag ends at its ``>``; ``/>`` makes it **self-closing** (``<br/>``, ``<p />``).
  Attribute values are never read. A tag that ends with anything else than ``>`` or ``/>`` after its
  attributes (``<a"b"c``...) is text up to where its attributes stop.
* **End tag** ``</name>`` (blanks allowed around the name, ``</ p >``); after a name of the start-tag
  form, everything up to the next ``>`` is ignored (``</p class=x>`` is ``</p>``). ``</>`` is text;
  ``</`` followed by anything else up to a ``>`` is a comment (``</3>``).
* **Comment** ``<!-- ... -->`` up to the first ``--`` + optional whitespace + ``>`` after the ``<!--``
  (``<!-->`` is not a complete comment). ``<!`` followed by anything but ``--``, ``[`` or ``doctype`` is a
  comment up to the next ``>`` (``<!x>``), and so is ``</`` + non-letter (above).
* **Declaration** ``<!doctype ...>`` (any case) up to the next ``>``; **marked sections** ``<![name ...``:
  ``if``, ``else``, ``endif`` (Word's conditional comments) end at the first ``]`` + whitespace + ``>``;
  ``cdata``, ``temp``, ``ignore``, ``include``, ``rcdata`` at the first ``]]>`` (whitespace allowed
  between); ``<![CDATA[...]]>`` (that case exactly) is a **CDATA section**, whose content is text, read
  without decoding references. A marked section with another name or none (``<![foo]>``, ``<![]>``) is a
  comment up to the next ``>``, and is counted (``recovered``).
* **Processing instruction** ``<?...>`` up to the next ``>``.
* **Raw text**: the content of ``<script>`` and ``<style>`` (not self-closing) up to the first closing tag
  ``</script>`` (resp. ``</style>``) written in ASCII letters of any case, blanks allowed before the
  ``>`` and after the ``</``. Nothing inside is markup. A ``<script>`` with no such closing tag later is
  an ordinary start tag (the text builder then keeps what follows as text). Other elements (``<title>``,
  ``<textarea>``...) have no raw text: their content is scanned as usual.

Unterminated constructs
-----------------------
A construct with no end before the end of the note (``<p class="x``, ``<!-- x``, ``</td``, ``<?x``,
``<![if x``) is text up to and including the next ``>``, or else up to the next ``<``, or else is the
``<`` alone; scanning resumes there.

How it runs
-----------
:data:`SCANNER` is one pattern whose alternatives match the common constructs whole (a tag of the
usual shapes, a raw-text element with its content, a text run...), cut so that a loop over
``SCANNER.finditer`` (in C) sees each of them once. Its ``other`` alternative matches a ``<`` that opens
a construct of any other shape: :func:`markup_at` reads that one by the rules above, and the loop
resumes at its end. :func:`scan` is that loop in its plain form (the text builder,
:mod:`deid_ds.segmentation.html_text`, runs its own, faster copy of it).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass

#: Elements whose content is raw text.
RAW_TEXT_ELEMENTS = frozenset({"script", "style"})

_MARKUP_START = r"<[a-zA-Z!/?]"
#: An attribute of the common shapes: ASCII name, optional value quoted (no "<" or ">" inside) or unquoted
#: up to a ``\\s`` character (Unicode whitespace included), "/" included (``<a href=x/>`` is not
#: self-closing). Other shapes are read by markup_at.
_ATTRIBUTE = (
    r"[ \t\n\r\f]+[a-zA-Z_:][-a-zA-Z0-9_:.]*+"
    r"(?:[ \t\n\r\f]*+=[ \t\n\r\f]*+(?:\"[^\"<>]*+\"|'[^'<>]*+'|[^\s\"'=<>`]++))?"
)
#: The alternatives of :data:`SCANNER`, in matching order: (kind, pattern). Each becomes the named group
#: ``kind``, the outer group of its alternative, so ``match.lastindex`` is that group's number.
ALTERNATIVES = (
    # Raw-text elements (common start-tag shapes): start tag, content, closing tag.
    (
        "script",
        r"<[sS][cC][rR][iI][pP][tT](?:" + _ATTRIBUTE + r")*+[ \t\n\r\f]*+>(?s:.*?)</\s*[sS][cC][rR][iI][pP][tT]\s*>",
    ),
    (
        "style",
        r"<[sS][tT][yY][lL][eE](?:" + _ATTRIBUTE + r")*+[ \t\n\r\f]*+>(?s:.*?)</\s*[sS][tT][yY][lL][eE]\s*>",
    ),
    # A start tag of the common shapes (namespaced Word tags such as <o:p> included): its name, and "/" for
    # a self-closing one.
    ("start", r"<(?P<start_name>[a-zA-Z][-.a-zA-Z0-9:_]*+)(?:" + _ATTRIBUTE + r")*+[ \t\n\r\f]*+(?P<slash>/?)>"),
    ("end", r"</(?P<end_name>[a-zA-Z][-.a-zA-Z0-9:_]*+)>"),
    # A text run: blanks, a core that starts and ends with a character that is not a blank, blanks, up
    # to the next markup (lead, core, trail). The only control character the core may hold is "\n" (a
    # run with "\t", "\r", "\f" or another one inside is "text"). The text builder decodes the common
    # cores itself: matching any such core and telling the cases apart with str methods costs the
    # regex engine far less than spelling them out.
    (
        "run",
        r"(?=[^<])(?P<lead>[ \t\n\r\f]*+)(?P<core>(?:[^\x00-\x09\x0b-\x1f\x7f<]*[^\x00-\x20\x7f<])?)"
        r"(?P<trail>[ \t\n\r\f]*+)"
        r"(?=" + _MARKUP_START + r"|\Z)",
    ),
    ("text", r"(?:[^<]|<(?![a-zA-Z!/?]))(?:[^<]++|<(?![a-zA-Z!/?]))*+"),  # any other text run
    ("comment", r"<!--(?s:.*?)--\s*>"),
    ("doctype", r"<![dD][oO][cC][tT][yY][pP][eE][^>]*>"),
    ("marked", r"<!\[(?:[iI][fF]|[eE][lL][sS][eE]|[eE][nN][dD][iI][fF])(?![-_.a-zA-Z0-9])(?s:.*?)\]\s*>"),
    ("pi", r"<\?[^>]*>"),
    ("other", r"<"),  # markup of another shape: markup_at
)


def _compile(alternatives: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    pattern = "|".join(f"(?P<{kind}>{alternative})" for kind, alternative in alternatives)
    if sys.version_info < (3, 11):
        pattern = _without_possessive_quantifiers(pattern)
    return re.compile(pattern)


def _without_possessive_quantifiers(pattern: str) -> str:
    """``pattern`` with each possessive quantifier (Python 3.11+) written as its equivalent for older
    versions: ``X*+`` is ``(?=(?P<_pN>X*))(?P=_pN)`` (a lookahead takes the longest match and the
    backreference consumes it, never backtracking into it). The same matches, the same named groups."""
    out: list[str] = []  # the pattern as a list of atoms (a character, an escape, a class, a group)
    i, n, count = 0, len(pattern), 0
    while i < n:
        char = pattern[i]
        if char == "\\":
            out.append(pattern[i : i + 2])
            i += 2
        elif char == "[":
            j = i + 1
            if pattern[j] == "^":
                j += 1
            j += 1  # a "]" first in a class is literal
            while pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            out.append(pattern[i : j + 1])
            i = j + 1
        elif char == "(":
            out.append("(")
            i += 1
        elif char == ")":
            # the group's atoms since its "(" (the last one not yet closed) become one atom
            k = len(out) - 1 - out[::-1].index("(")
            out[k:] = ["".join(out[k:]) + ")"]
            i += 1
        elif char in "*+?" and i + 1 < n and pattern[i + 1] == "+" and out and out[-1] != "(":
            count += 1
            atom = out.pop()
            out.append(f"(?=(?P<_p{count}>{atom}{char}))(?P=_p{count})")
            i += 2
        else:
            out.append(char)
            i += 1
    return "".join(out)


#: The scanner's pattern (see the module docstring).
SCANNER = _compile(ALTERNATIVES)
#: kind → group number (``match.lastindex``), and back.
GROUP = SCANNER.groupindex
KIND_OF_GROUP = {number: kind for kind, number in GROUP.items()}

# -- the general rules, for what SCANNER leaves to markup_at ----------------------------------------
_TAG_END = re.compile(
    r"""
  <[a-zA-Z][^\t\n\r\f />\x00]*       # name
  (?:[\s/]*                          # whitespace or "/" before an attribute
    (?:(?<=['"\s/])[^\s/>][^\s/=>]*  # attribute name
      (?:\s*=+\s*                    # value
        (?:'[^']*'
          |"[^"]*"
          |(?!['"])[^>\s]*
         )
        \s*
       )?(?:\s|/(?!>))*
     )*
   )?
  \s*
""",
    re.VERBOSE,
)
_TAG_NAME = re.compile(r"([a-zA-Z][^\t\n\r\f />\x00]*)(?:\s|/(?!>))*")
_TAG_ATTRIBUTE = re.compile(
    r'((?<=[\'"\s/])[^\s/>][^\s/=>]*)(\s*=+\s*(\'[^\']*\'|"[^"]*"|(?![\'"])[^>\s]*))?(?:\s|/(?!>))*'
)
_UNFINISHED_AFTER_ATTRIBUTES = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ=/")
_END_TAG = re.compile(r"</\s*([a-zA-Z][-.a-zA-Z0-9:_]*)\s*>")
_COMMENT_END = re.compile(r"--\s*>")
_SECTION_NAME = re.compile(r"[a-zA-Z][-_.a-zA-Z0-9]*\s*")
_SECTION_END = re.compile(r"]\s*]\s*>")
_CONDITIONAL_END = re.compile(r"]\s*>")
_RAW_TEXT_END = {
    "script": re.compile(r"</\s*[sS][cC][rR][iI][pP][tT]\s*>"),
    "style": re.compile(r"</\s*[sS][tT][yY][lL][eE]\s*>"),
}


@dataclass(frozen=True, slots=True)
class Construct:
    """One construct of the source: ``kind`` is ``text``, ``start``, ``end``, ``raw`` (a raw-text element,
    start tag to closing tag), ``comment``, ``declaration``, ``cdata``, or ``pi``.

    ``name``: the tag's name in lower case (``start``, ``end``, ``raw``); ``content_start``,
    ``content_end``: the raw text or the CDATA section's content; ``recovered``: a marked section of an
    unknown name, read as a comment (or as text when unterminated).
    """

    kind: str
    start: int
    end: int
    name: str = ""
    self_closing: bool = False
    content_start: int = -1
    content_end: int = -1
    recovered: bool = False


def markup_at(source: str, i: int) -> Construct:
    """The construct that starts at ``source[i]``, a ``<`` followed by an ASCII letter, ``!``, ``/`` or ``?``."""
    char = source[i + 1]
    if char == "/":
        construct = _end_tag(source, i)
    elif char == "!":
        construct = _declaration(source, i)
    elif char == "?":
        close = source.find(">", i + 2)
        construct = Construct("pi", i, close + 1) if close >= 0 else None
    else:
        construct = _start_tag(source, i)
    if construct is None or construct.kind == "unterminated":
        return _unterminated(source, i, recovered=construct is not None)
    return construct


def _unterminated(source: str, i: int, recovered: bool = False) -> Construct:
    """Text up to and including the next ">", else up to the next "<", else the "<" alone."""
    end = source.find(">", i + 1) + 1
    if end == 0:
        end = source.find("<", i + 1)
        if end < 0:
            end = i + 1
    return Construct("text", i, end, recovered=recovered)


def _start_tag(source: str, i: int) -> Construct | None:
    j = _TAG_END.match(source, i).end()
    after = source[j : j + 1]
    if after == ">":
        end = j + 1
    elif source.startswith("/>", j):
        end = j + 2
    elif after == "" or after in _UNFINISHED_AFTER_ATTRIBUTES:
        return None  # the note ends inside the tag
    else:
        end = j
    name = _TAG_NAME.match(source, i + 1)
    k = name.end()
    while k < end:
        attribute = _TAG_ATTRIBUTE.match(source, k)
        if attribute is None:
            break
        k = attribute.end()
    rest = source[k:end].strip()
    if rest not in (">", "/>"):
        return Construct("text", i, end)
    tag = name.group(1).lower()
    self_closing = rest == "/>"
    if tag in RAW_TEXT_ELEMENTS and not self_closing:
        close = _RAW_TEXT_END[tag].search(source, end)
        if close is not None:
            return Construct("raw", i, close.end(), tag, False, end, close.start())
    return Construct("start", i, end, tag, self_closing)


def _end_tag(source: str, i: int) -> Construct | None:
    close = source.find(">", i + 1)
    if close < 0:
        return None
    match = _END_TAG.match(source, i)
    if match is not None:
        return Construct("end", i, match.end(), match.group(1).lower())
    name = _TAG_NAME.match(source, i + 2)
    if name is None:
        if source.startswith("</>", i):
            return Construct("text", i, i + 3)
        return Construct("comment", i, close + 1)
    return Construct("end", i, source.find(">", name.end()) + 1, name.group(1).lower())


def _declaration(source: str, i: int) -> Construct | None:
    if source.startswith("<!--", i):
        close = _COMMENT_END.search(source, i + 4)
        return Construct("comment", i, close.end()) if close is not None else None
    if source.startswith("<![", i):
        return _marked_section(source, i)
    if source[i : i + 9].lower() == "<!doctype":
        close = source.find(">", i + 9)
        return Construct("declaration", i, close + 1) if close >= 0 else None
    close = source.find(">", i + 2)
    return Construct("comment", i, close + 1) if close >= 0 else None


def _marked_section(source: str, i: int) -> Construct | None:
    name = _SECTION_NAME.match(source, i + 3)
    if i + 3 == len(source) or (name is not None and name.end() == len(source)):
        return None
    keyword = name.group().strip().lower() if name is not None else ""
    if keyword in ("temp", "cdata", "ignore", "include", "rcdata"):
        close = _SECTION_END.search(source, i + 3)
    elif keyword in ("if", "else", "endif"):
        close = _CONDITIONAL_END.search(source, i + 3)
    else:  # an unknown name, or none: a comment up to the next ">"
        close = source.find(">", i + 2)
        if close < 0:
            return Construct("unterminated", i, i)
        return Construct("comment", i, close + 1, recovered=True)
    if close is None:
        return None
    if source.startswith("CDATA[", i + 3):
        return Construct("cdata", i, close.end(), content_start=i + 9, content_end=close.start())
    return Construct("declaration", i, close.end())


def construct_of_match(match: re.Match[str]) -> Construct:
    """The construct a match of :data:`SCANNER` (not ``other``) stands for."""
    kind = KIND_OF_GROUP[match.lastindex]
    start, end = match.span()
    if kind in ("run", "text"):
        return Construct("text", start, end)
    if kind in ("start", "end"):
        self_closing = kind == "start" and bool(match.group("slash"))
        return Construct(kind, start, end, match.group(f"{kind}_name").lower(), self_closing)
    if kind in ("script", "style"):
        content_start = match.string.find(">", start) + 1  # (no ">" in the start tag: see _ATTRIBUTE)
        return Construct("raw", start, end, kind, False, content_start, match.string.rfind("<", content_start, end))
    return Construct({"doctype": "declaration", "marked": "declaration"}.get(kind, kind), start, end)


def scan(source: str) -> Iterator[Construct]:
    """The constructs of ``source`` in order, consecutive text merged into one ``text`` construct.

    A recovered text construct (an unterminated marked section of an unknown name) is never merged, so that
    each recovery is seen once, as the text builder's warnings count them.
    """
    pending_text: Construct | None = None
    position = 0
    while True:
        for match in SCANNER.finditer(source, position):
            if match.lastindex == GROUP["other"]:
                construct = markup_at(source, match.start())
                position = construct.end
            else:
                construct = construct_of_match(match)
            if construct.kind == "text" and not construct.recovered:
                if pending_text is not None:
                    construct = Construct("text", pending_text.start, construct.end)
                pending_text = construct
            else:
                if pending_text is not None:
                    yield pending_text
                    pending_text = None
                yield construct
            if match.lastindex == GROUP["other"]:
                break
        else:
            break
    if pending_text is not None:
        yield pending_text
