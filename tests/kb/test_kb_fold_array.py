"""fold's numpy path for long non-ASCII texts gives exactly what str.translate with the fold table gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.kb import normalize
from deid_ds.kb.normalize import fold


def _translated(text: str) -> str:
    return text.translate(normalize._FOLD)


def test_every_code_point_folds_as_the_table_says() -> None:
    every = "".join(map(chr, range(0x110000)))
    for start in range(0, len(every), 4096):  # surrogates (a chunk no UTF encodes) included
        chunk = every[start : start + 4096]
        assert fold(chunk) == _translated(chunk), hex(start)


def test_short_ascii_and_mixed_texts() -> None:
    for text in ("", "a", "É" * 63, "É" * 64, "Dr LÉGER — 3 rue de l’Église\n\tŒdème ☎ 02 99 😀 İstanbul ß µg" * 3):
        assert fold(text) == _translated(text)
        assert len(fold(text)) == len(text)


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=normalize._ARRAY_FOLD_FROM, max_size=300))
def test_long_texts_fold_as_the_table_says(text: str) -> None:
    assert fold(text) == _translated(text)
