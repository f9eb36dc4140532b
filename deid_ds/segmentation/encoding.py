"""Decoding note bytes to text with a documented, counted fallback.

Warehouse exports are mostly UTF-8, but notes converted from older systems sometimes carry stray
Windows-1252 bytes (``é`` as ``0xE9``) in the middle of otherwise valid UTF-8. Decoding the whole note
as Windows-1252 would then garble every real multi-byte character, so the fallback works byte by byte:

* valid UTF-8 sequences decode as UTF-8 (a leading BOM is dropped);
* each byte that is not part of a valid UTF-8 sequence decodes as Windows-1252, and the five bytes
  Windows-1252 leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) as Latin-1.

The number of bytes decoded by the fallback is returned so it can be counted per document as a warning;
the bytes themselves are never logged. HTML offsets produced downstream are offsets into the decoded
string.
"""

from __future__ import annotations

import codecs
import re


def _byte_to_char(b: int) -> str:
    try:
        return bytes([b]).decode("cp1252")
    except UnicodeDecodeError:
        return bytes([b]).decode("latin-1")


# ``surrogateescape`` turns each undecodable byte b (always >= 0x80) into the lone surrogate U+DC00+b.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
_FALLBACK_TABLE = {0xDC00 + b: _byte_to_char(b) for b in range(0x80, 0x100)}


def decode_note_bytes(data: bytes) -> tuple[str, int]:
    """Decode ``data`` as UTF-8 with the per-byte Windows-1252 fallback.

    Returns the text and the number of bytes that needed the fallback (0 for clean UTF-8).
    """
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        pass
    escaped = data.decode("utf-8", errors="surrogateescape")
    fallback_bytes = len(_ESCAPED_BYTE.findall(escaped))
    return escaped.translate(_FALLBACK_TABLE), fallback_bytes
