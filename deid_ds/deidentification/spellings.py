"""The other spellings a value takes inside a URL: percent-encoding and base64 ``data:`` URLs.

A link or an embedded file writes a name as a browser would send it: ``?nom=Kerdr%61on``,
``href="mailto:jeanne%2Elegall%40orange.fr"``, or inside ``data:text/plain;base64,S2VyZHJhb24=``. Searched as
written, none of them holds the name. :func:`percent_decoded` reads percent-encoding back (keeping, per
decoded character, its range in the encoded text, so that a match can be replaced where it was written);
:func:`data_url_payloads` finds the base64 ``data:`` URLs of a text and decodes those whose bytes are text
(UTF-8), for the residual-leak check and for rewriting them. Pure functions.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
#: A base64 ``data:`` URL: media type and parameters, ``;base64,``, the payload (whitespace allowed).
DATA_URL = re.compile(r"data:[\w.+\-/]*(?:;[\w.+\-]+=?[\w.+\-%\"]*)*;base64,(?P<payload>[A-Za-z0-9+/=\s]+)", re.I)
_BASE64 = re.compile("base64", re.I)
#: Payloads longer than this are not decoded (an image, not a text someone typed).
MAX_PAYLOAD = 1 << 20


@dataclass(frozen=True, slots=True)
class Mapped:
    """A decoded text and, per decoded character, the range ``[starts[i], ends[i])`` it was written in."""

    text: str
    starts: list[int]
    ends: list[int]

    def source(self, i: int, j: int) -> tuple[int, int]:
        return self.starts[i], self.ends[j - 1]


def percent_decoded(text: str) -> Mapped | None:
    """``text`` with its ``%XX`` runs decoded as UTF-8 (runs that are not UTF-8 kept as written); ``None``
    when it holds none."""
    if "%" not in text or not _PERCENT_RUN.search(text):
        return None
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    cursor = 0
    for m in _PERCENT_RUN.finditer(text):
        parts.append(text[cursor : m.start()])
        starts.extend(range(cursor, m.start()))
        ends.extend(range(cursor + 1, m.start() + 1))
        raw = bytes.fromhex(m.group().replace("%", ""))
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError:
            decoded = None
        if decoded is None:
            parts.append(m.group())
            starts.extend(range(m.start(), m.end()))
            ends.extend(range(m.start() + 1, m.end() + 1))
        else:
            at = m.start()
            for char in decoded:
                width = 3 * len(char.encode("utf-8"))
                parts.append(char)
                starts.append(at)
                ends.append(at + width)
                at += width
        cursor = m.end()
    parts.append(text[cursor:])
    starts.extend(range(cursor, len(text)))
    ends.extend(range(cursor + 1, len(text) + 1))
    return Mapped("".join(parts), starts, ends)


def decode_payload(payload: str) -> str | None:
    """The text of a base64 payload when its bytes are UTF-8 text, else ``None`` (an image, a PDF)."""
    compact = re.sub(r"\s+", "", payload)
    if not compact or len(compact) > MAX_PAYLOAD:
        return None
    try:
        raw = base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if any(c < " " and c not in "\t\n\r\f" for c in text):
        return None  # control characters: binary that happens to be valid UTF-8
    return text


def data_url_payloads(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, decoded)`` of the base64 payloads of ``text``'s ``data:`` URLs that read as text."""
    if not _BASE64.search(text):
        return []
    found = []
    for m in DATA_URL.finditer(text):
        decoded = decode_payload(m.group("payload"))
        if decoded is not None:
            found.append((m.start("payload"), m.end("payload"), decoded))
    return found


def encode_payload(text: str, like: str) -> str:
    """``text`` as a base64 payload, in place of ``like`` (a payload written without padding stays so)."""
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return encoded if "=" in like or not like.strip() else encoded.rstrip("=")


def readings(text: str) -> tuple[list[str], list[str]]:
    """How ``text`` also reads: ``(alternatives, payloads)``. An alternative is the same text read another
    way (percent-decoded): a value found in both is one value. A payload is content of its own (a
    ``data:`` URL's decoded text, itself percent-decoded if it has to be)."""
    alternatives = []
    decoded = percent_decoded(text)
    if decoded is not None and decoded.text != text:
        alternatives.append(decoded.text)
    payloads = []
    for _, _, payload in data_url_payloads(text):
        again = percent_decoded(payload)
        payloads.append(again.text if again is not None else payload)
    return alternatives, payloads
