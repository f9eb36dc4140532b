"""Writing a surrogate the way the original was written: capitals, title case, lower case, accents.

Notes write the same name ``LE GALL``, ``Le Gall`` and ``le gall``, and warehouse metadata often drops
accents in capitals (``LEGER`` for ``Léger``). A surrogate that kept the pool's own casing would stand
out (and tell a reader which words were replaced), so each one takes the original's style.
"""

from __future__ import annotations

import unicodedata


def strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn"))


def case_style(text: str) -> str:
    """``upper`` (two letters or more, all capitals), ``lower``, ``title`` or ``mixed``."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "mixed"
    if all(c.isupper() for c in letters) and len(letters) >= 2:
        return "upper"
    if all(c.islower() for c in letters):
        return "lower"
    return "title" if letters[0].isupper() else "mixed"


def apply_case(surrogate: str, original: str) -> str:
    """``surrogate`` in the style of ``original``; capitals without accents stay without accents."""
    style = case_style(original)
    if style == "upper":
        out = surrogate.upper()
        if original.isascii():
            out = strip_accents(out)
        return out
    if style == "lower":
        return surrogate.lower()
    if style == "title" and len([c for c in original if c.isalpha()]) == 1:
        return surrogate  # one capital letter: an initial-like word, keep the pool's form
    return surrogate
