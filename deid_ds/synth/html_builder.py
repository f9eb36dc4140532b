"""Write an HTML note piece by piece and record where every entity lands in it.

Gold offsets are never searched for after the fact (a name can occur twice, or inside a longer word):
each entity is appended through :meth:`HtmlDoc.entity`, which knows its exact HTML range and the text
it reads as once tags are removed and references decoded. That text is built together with the HTML,
character by character, so the two always agree; the tests check it against
:func:`deid_ds.segmentation.html_text.html_to_text`.

What real exported notes do to an entity, and this module reproduces:

* accented letters written as character references (``&eacute;``, ``&#233;``, ``&#xE9;``);
* the entity split by inline markup (``<b>Jean</b> DUPONT``, a style run starting mid-word);
* source line wraps inside it (a newline and indentation, which the browser shows as one space);
* a non-breaking space between its parts (``03&nbsp;02&nbsp;21``), which reads as ``\\xa0``.

A span always starts and ends on a character of the entity, never on a tag or a ``&nbsp;``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from html.entities import codepoint2name

#: Inline elements that may split an entity without changing the extracted text.
INLINE_TAGS: tuple[str, ...] = (
    "b",
    "strong",
    "i",
    "em",
    "u",
    "span",
    'span style="font-weight:bold"',
    'font face="Arial"',
    'span class="MsoNormal"',
)


@dataclass(frozen=True, slots=True)
class GoldSpan:
    """A gold entity: label, HTML offsets (end exclusive) and the text it reads as."""

    label: str
    html_start: int
    html_end: int
    text: str


@dataclass(slots=True)
class Encoding:
    """How a document writes non-ASCII characters (a property of the software that exported it).

    ``mode`` is ``"raw"`` (UTF-8 characters), ``"named"`` (``&eacute;``), ``"numeric"`` (``&#233;``)
    or ``"mixed"`` (any of them, character by character, as hand-edited templates end up).
    """

    mode: str = "raw"
    hex_numeric: bool = False

    def char(self, char: str, rng: random.Random) -> str:
        if char == "&":
            return "&amp;"
        if char == "<":
            return "&lt;"
        if char == ">":
            return "&gt;"
        if char == "\xa0":
            return "&nbsp;"
        if ord(char) < 128:
            return char
        mode = self.mode if self.mode != "mixed" else rng.choice(("raw", "named", "numeric"))
        if mode == "named" and ord(char) in codepoint2name:
            return f"&{codepoint2name[ord(char)]};"
        if mode in ("named", "numeric"):
            return f"&#x{ord(char):X};" if self.hex_numeric else f"&#{ord(char)};"
        return char


@dataclass(slots=True)
class HtmlDoc:
    """An HTML document under construction, with its gold spans.

    ``noise`` (0 to 1) scales how often entities are split by markup, wrapped or glued with ``&nbsp;``.
    """

    rng: random.Random
    encoding: Encoding = field(default_factory=Encoding)
    noise: float = 0.3
    parts: list[str] = field(default_factory=list)
    length: int = 0
    spans: list[GoldSpan] = field(default_factory=list)

    def _append(self, html: str) -> None:
        self.parts.append(html)
        self.length += len(html)

    def markup(self, html: str) -> None:
        """Append markup (or any HTML) verbatim; it must hold no entity."""
        self._append(html)

    def text(self, text: str) -> None:
        """Append prose (no entity): escaped, with the document's character references."""
        rng, enc = self.rng, self.encoding
        self._append("".join(enc.char(c, rng) for c in text))

    def entity(self, label: str, value: str, *, nbsp: bool = False) -> None:
        """Append an entity whose extracted text is ``value`` (single spaces between its words).

        ``nbsp`` allows a space of the value to be written ``&nbsp;`` (the gold text then holds
        ``\\xa0``): phones and dates are typed that way by some secretaries' templates.
        """
        if not value or value != value.strip() or "  " in value:
            raise ValueError("entity values are trimmed, single-spaced and not empty")
        rng, enc = self.rng, self.encoding
        html_chars: list[str] = []
        text_chars: list[str] = []
        wrap = rng.random() < 0.04 * self.noise
        for char in value:
            if char == " ":
                if nbsp and rng.random() < 0.5:
                    html_chars.append("&nbsp;")
                    text_chars.append("\xa0")
                    continue
                html_chars.append("\n      " if wrap and rng.random() < 0.5 else " ")
                text_chars.append(" ")
            else:
                html_chars.append(enc.char(char, rng))
                text_chars.append(char)
        pre = post = ""
        if len(value) > 1 and rng.random() < 0.35 * self.noise:
            pre, html_chars, post = self._split(value, html_chars)
        self._append(pre)
        start = self.length
        self._append("".join(html_chars))
        self.spans.append(GoldSpan(label, start, self.length, "".join(text_chars)))
        self._append(post)

    def _split(self, value: str, html_chars: list[str]) -> tuple[str, list[str], str]:
        """Put an inline element boundary inside the entity: at a word boundary most of the time."""
        rng = self.rng
        tag = rng.choice(INLINE_TAGS)
        name = tag.split()[0]
        spaces = [i for i, c in enumerate(value) if c == " "]
        if spaces and rng.random() < 0.8:
            cut = rng.choice(spaces)  # the tag goes around the words before or after this space
            if rng.random() < 0.5:  # <b>Jean</b> DUPONT
                return f"<{tag}>", html_chars[:cut] + [f"</{name}>"] + html_chars[cut:], ""
            return "", html_chars[: cut + 1] + [f"<{tag}>"] + html_chars[cut + 1 :], f"</{name}>"  # Jean <b>DUPONT</b>
        cut = rng.randrange(1, len(value))  # a style run that starts mid-word: DU<span>PONT</span>
        return "", html_chars[:cut] + [f"<{tag}>"] + html_chars[cut:], f"</{name}>"

    def splice(self, index: int, other: HtmlDoc) -> list[GoldSpan]:
        """Insert ``other``'s HTML before part ``index`` (a boundary between two appends, so no span is cut): the
        spans after it move by its length, its own spans land where it went and are returned."""
        offset = sum(len(part) for part in self.parts[:index])
        shift = other.length
        self.parts[index:index] = other.parts
        self.length += shift
        moved = [GoldSpan(s.label, s.html_start + offset, s.html_end + offset, s.text) for s in other.spans]
        self.spans = [
            s if s.html_start < offset else GoldSpan(s.label, s.html_start + shift, s.html_end + shift, s.text)
            for s in self.spans
        ] + moved
        return moved

    def html(self) -> str:
        return "".join(self.parts)
