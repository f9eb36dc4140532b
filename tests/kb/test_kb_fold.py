"""fold maps every character as the fold table says: lower case, no accents, one apostrophe, hyphen and space,
one character for one (so that offsets in the folded text are offsets in the note)."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.kb.normalize import APOSTROPHES, HYPHENS, fold


def _folded_char(char: str) -> str:
    """The fold of one character, written out as the table's rule."""
    if char in APOSTROPHES:
        return "'"
    if char in HYPHENS:
        return "-"
    if char.isspace():
        return " "
    lower = unicodedata.normalize("NFD", char)[0].lower()
    return lower if len(lower) == 1 else (char.lower() if len(char.lower()) == 1 else char)


def test_every_code_point_folds_to_one_character_as_the_rule_says() -> None:
    every = "".join(map(chr, range(0x110000)))
    for start in range(0, len(every), 4096):  # surrogates (a chunk no UTF encodes) included
        chunk = every[start : start + 4096]
        assert fold(chunk) == "".join(map(_folded_char, chunk)), hex(start)


def test_short_ascii_and_mixed_texts() -> None:
    assert fold("Dr LÉGER — 3 rue de l’Église\n\tŒdème") == "dr leger - 3 rue de l'eglise  œdeme"
    for text in ("", "a", "É" * 63, "É" * 64, "Dr LÉGER — 3 rue de l’Église\n\tŒdème ☎ 02 99 😀 İstanbul ß µg" * 3):
        assert fold(text) == "".join(map(_folded_char, text))
        assert len(fold(text)) == len(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_folds_character_by_character(text: str) -> None:
    folded = fold(text)
    assert len(folded) == len(text) and folded == "".join(map(_folded_char, text))
