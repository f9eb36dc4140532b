"""Tokenisation of clinical French: entity boundaries are token boundaries."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.segmentation import tokens
from deid_ds.segmentation.tokens import token_texts, tokenize


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("le 03/02/2021", ["le", "03/02/2021"]),
        ("le 03.02.21.", ["le", "03.02.21", "."]),
        ("né le 2021-02-03", ["né", "le", "2021-02-03"]),
        ("Tél : 02 99 28 43 21", ["Tél", ":", "02", "99", "28", "43", "21"]),
        ("02.99.28.43.21 / 02-99-28-43-21", ["02.99.28.43.21", "/", "02-99-28-43-21"]),
        ("+33 2 99 28 43 21", ["+33", "2", "99", "28", "43", "21"]),
        ("écrire à jean.dupont@chu-rennes.fr.", ["écrire", "à", "jean.dupont@chu-rennes.fr", "."]),
        ("Jean-Pierre de Saint-Brieuc", ["Jean-Pierre", "de", "Saint-Brieuc"]),
        ("l'hôpital d'Rennes qu'il", ["l'", "hôpital", "d'", "Rennes", "qu'", "il"]),
        ("l’hôpital jusqu'à aujourd'hui", ["l’", "hôpital", "jusqu'", "à", "aujourd'hui"]),
        ("12nov 5mg 2007])", ["12", "nov", "5", "mg", "2007", "]", ")"]),
        (
            "Dr. Martin, M. Dupont, J. Morvan, J.-P. Le Gall",
            ["Dr.", "Martin", ",", "M.", "Dupont", ",", "J.", "Morvan", ",", "J.-P.", "Le", "Gall"],
        ),
        ("cf. supra", ["cf.", "supra"]),
        ("fin.", ["fin", "."]),
        ("------ ___ ...", ["------", "___", "..."]),
        ("14h30, 1,5 mg, J+3", ["14", "h", "30", ",", "1,5", "mg", ",", "J", "+", "3"]),
        ("COVID-19", ["COVID", "-", "19"]),
        ("2019-2020", ["2019", "-", "2020"]),
    ],
)
def test_tokens(text, tokens):
    assert token_texts(text) == tokens


def test_offsets_point_into_the_text_and_skip_whitespace():
    text = "Mme\xa0LE GALL,\tnée"
    spans = tokenize(text)
    assert [text[s:e] for s, e in spans] == ["Mme", "LE", "GALL", ",", "née"]
    assert all(not text[s:e].isspace() for s, e in spans)


def test_tokenize_a_slice_keeps_offsets_of_the_whole_text():
    text = "AAA Jean DUPONT BBB"
    assert tokenize(text, 4, 15) == [(4, 8), (9, 15)]


def test_invisible_format_characters_are_not_tokens():
    assert token_texts("a\u200bb \ufeff c") == ["a", "b", "c"]


def test_decomposed_accents_stay_inside_their_word():
    import unicodedata

    assert token_texts(unicodedata.normalize("NFD", "Hôpital Jean-Pierre")) == [
        unicodedata.normalize("NFD", "Hôpital"),
        unicodedata.normalize("NFD", "Jean-Pierre"),
    ]


# The token pattern as first written: one flat list of alternatives, the address alternatives first where
# the range may hold an address. deid_ds.segmentation.tokens writes the same alternatives grouped by their first
# character and tries the address alternatives only around an address; the tokens must be the same.
_L = r"[^\W\d_]"
_W = r"[^\W\d_]+(?:[\u0300-\u036f]+[^\W\d_]*)*"
_FLAT_CORE = [
    rf"{_L}\.(?:-?{_L}\.)+(?!{_L})",
    rf"{_W}(?:[\-'\u2019]{_W})*",
    r"\d{2}(?:-\d{2}){4}(?!\d)",
    r"\d{1,4}-\d{1,2}-\d{1,4}(?![\d-])",
    r"(?<![\w+])\+\d{1,3}(?!\d)",
    r"\d+(?:[.,/:]\d+)*",
    "_+|([^\\w\\s\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\ufeff])\\1*",
]
_FLAT_ADDRESSES = [r"[\w.+\-]*\w@[\w\-]+(?:\.[\w\-]+)+", r"(?:https?://|www\.)[^\s<>\"]*[^\s<>\".,;:!?)\]]"]
_REFERENCE_CORE = re.compile("|".join(f"(?:{a})" for a in _FLAT_CORE))
_REFERENCE_WITH_ADDRESSES = re.compile("|".join(f"(?:{a})" for a in _FLAT_ADDRESSES + _FLAT_CORE))


def _reference_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    pattern = _REFERENCE_WITH_ADDRESSES if re.search(r"@|://|www\.", text[start:end]) else _REFERENCE_CORE
    return [m.span() for m in pattern.finditer(text, start, end)]


_FRAGMENTS = [
    "jean.dupont@chu-rennes.fr",
    "a@b",
    "x.@y.z",
    "@",
    "www.",
    "www.chu.fr",
    "http://",
    "https://x.fr/a?b=1).",
    "J.-P.",
    "J.P.",
    "A.-",
    "Dr.",
    "l'hôpital",
    "l\u2019eau",
    "aujourd'hui",
    "Jean-Pierre",
    "o\u0302te\u0301",
    "\u0301",
    "02-99-28-43-21",
    "2021-02-03",
    "03/02/2021",
    "1,5",
    "14:30",
    "+33",
    "J+3",
    "++3",
    "12nov",
    "2007])",
    "----",
    "___",
    "...",
    "«",
    "»",
    "\u00ad",
    "\u200b",
    "\ufeff",
    "ß",
    "Ⅷ",
    "²",
    "٣",
    "_x_",
    "-",
    "'",
    ":",
    "/",
    ".",
    "@@",
]
_SEPARATORS = ["", "", " ", "\n", "\t", "\xa0", "\u2028", "  ", ".", "-", "@"]


@st.composite
def _texts_with_ranges(draw):
    pieces = draw(st.lists(st.tuples(st.sampled_from(_FRAGMENTS), st.sampled_from(_SEPARATORS)), max_size=12))
    text = "".join(fragment + separator for fragment, separator in pieces)
    text += draw(st.text(alphabet="aZé1.-'\u2019@:/w+_ \n\t\xa0\u200b\u0301", max_size=20))
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, len(text)))
    return text, start, end


@settings(max_examples=2000, deadline=None)
@given(_texts_with_ranges())
def test_the_grouped_pattern_finds_the_tokens_of_the_flat_one(case):
    text, start, end = case
    assert tokens._pattern_spans(text, start, end) == _reference_spans(text, start, end)


@settings(max_examples=1000, deadline=None)
@given(st.text(max_size=40), st.data())
def test_the_grouped_pattern_finds_the_tokens_of_the_flat_one_on_any_text(text, data):
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    assert tokens._pattern_spans(text, start, end) == _reference_spans(text, start, end)
