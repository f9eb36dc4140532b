"""Tokenisation of clinical French: entity boundaries are token boundaries."""

from __future__ import annotations

import pytest

from deid_ds.tokens import token_texts, tokenize


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
        ("Dr. Martin, M. Dupont, J. Morvan, J.-P. Le Gall", ["Dr.", "Martin", ",", "M.", "Dupont", ",", "J.", "Morvan", ",", "J.-P.", "Le", "Gall"]),
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
