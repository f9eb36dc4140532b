"""fold_text reads what fold must keep one character for one: decomposed (NFD) accents and compatibility forms
(fullwidth letters, ligatures), so that every spelling of a name folds the same; fold_mapped says where each
folded character comes from."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.kb.normalize import fold, fold_key, fold_mapped, fold_text

#: Latin letters, with and without accents (Latin-1 and Latin Extended-A/B), spaces and punctuation.
LATIN = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x24F, exclude_categories=("Cs", "Cc")), max_size=60)


def test_every_spelling_of_a_name_folds_the_same() -> None:
    spellings = [
        "Moëlan-sur-Mer",
        unicodedata.normalize("NFD", "Moëlan-sur-Mer"),
        "ＭＯＥＬＡＮ-ＳＵＲ-ＭＥＲ",
        "MOELAN-SUR-MER",
    ]
    assert {fold_text(s) for s in spellings} == {"moelan-sur-mer"}
    assert {fold_key(s) for s in spellings} == {"moelan-sur-mer"}
    assert fold_text("oﬃce") == "office" and fold_text("Kerdraon") == fold("Kerdraon")


@settings(max_examples=300, deadline=None)
@given(LATIN)
def test_nfc_and_nfd_spellings_fold_equal(text: str) -> None:
    nfc, nfd = unicodedata.normalize("NFC", text), unicodedata.normalize("NFD", text)
    assert fold_text(nfc) == fold_text(nfd) == fold_text(text)
    assert fold_key(nfc) == fold_key(nfd)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_fold_mapped_gives_each_folded_character_its_origin(text: str) -> None:
    folded, index = fold_mapped(text)
    assert folded == fold_text(text)
    if index is None:
        assert folded == fold(text)
        return
    assert len(index) == len(folded) + 1 and index[-1] == len(text)
    assert index == sorted(index)
    for i, char in enumerate(folded):  # each folded character is the fold of the character it comes from
        assert char in fold_text(text[index[i]])


def test_a_match_in_nfd_text_maps_back_to_the_whole_letters() -> None:
    text = "Mme " + unicodedata.normalize("NFD", "LÉGER") + " vue"
    folded, index = fold_mapped(text)
    start = folded.index("leger")
    assert text[index[start] : index[start + len("leger")]] == unicodedata.normalize("NFD", "LÉGER")


def test_the_lexicon_folded_in_one_call_has_the_keys_of_its_words():
    from deid_ds.kb.ambiguity import _folded_keys, _lexicon

    tricky = frozenset(["É\x00a", "a b", "x\u00a0y", "Œuvre", "cafe\u0301", "", " ", "a-b", "A - B", "ＡＢＣ"])
    assert _folded_keys(tricky) == frozenset(fold_key(word) for word in tricky)
    words, folded = _lexicon()
    assert folded == frozenset(fold_key(word) for word in words)


@settings(max_examples=300, deadline=None)
@given(st.frozensets(st.text(max_size=8), max_size=12))
def test_any_words_folded_in_one_call_have_their_own_keys(words):
    from deid_ds.kb.ambiguity import _folded_keys

    assert _folded_keys(words) == frozenset(fold_key(word) for word in words)
