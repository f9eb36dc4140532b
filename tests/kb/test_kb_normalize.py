"""Normalisation of names and places, and which entries are ambiguous."""

from __future__ import annotations

import pytest

from deid_ds.kb.ambiguity import ambiguity_reason
from deid_ds.kb.normalize import expand_street_abbreviations, fold, fold_key, name_parts, street_type_words, titles


def test_fold_is_length_preserving_and_ignores_case_accents_and_punctuation_variants():
    text = "LÉGER Jean\u2011Pierre l\u2019hôpital\u00a0Œuvre"
    assert fold(text) == "leger jean-pierre l'hopital œuvre"
    assert len(fold(text)) == len(text)


def test_keys_collapse_spacing():
    assert fold_key("  Le   Gall  -  Dupont ") == "le gall-dupont"


@pytest.mark.parametrize(
    "name, parts",
    [
        ("JEAN-PIERRE", ["JEAN-PIERRE", "JEAN", "PIERRE"]),
        ("MARTIN DUPONT", ["MARTIN DUPONT", "MARTIN", "DUPONT"]),
        ("LE GALL", ["LE GALL"]),
        ("D'ALMEIDA", ["D'ALMEIDA"]),
        ("DE LA TOUR", ["DE LA TOUR"]),
        ("MARTIN LE GALL", ["MARTIN LE GALL", "MARTIN", "LE GALL"]),
        ("Marie-Anne", ["Marie-Anne", "Marie", "Anne"]),
        ("JEAN-M", ["JEAN-M", "JEAN"]),
        ("  ", []),
    ],
)
def test_compound_names_are_split_into_the_parts_they_are_written_as(name, parts):
    assert name_parts(name) == parts


def test_street_abbreviations_are_expanded_as_whole_words():
    assert expand_street_abbreviations("12 av. du Gal de Gaulle, bd Voltaire, imp des Lilas") == (
        "12 avenue du Gal de Gaulle, boulevard Voltaire, impasse des Lilas"
    )
    assert expand_street_abbreviations("Avenir") == "Avenir"


def test_street_type_words_announce_addresses():
    assert {"rue", "avenue", "lieu-dit", "impasse", "bp", "cs", "cedex", "allee"} <= street_type_words()


def test_titles_dictionary():
    assert titles()["dr"] == ("docteur", "professional")
    assert titles()["mme"] == ("madame", "civility")


@pytest.mark.parametrize(
    "entry, reason",
    [
        ("PETIT", "common_word"),
        ("BLANC", "common_word"),
        ("ROSE", "common_word"),
        ("Orange", "common_word"),
        ("Tours", "common_word"),
        ("Sens", "common_word"),
        ("Y", "short"),
        ("Eu", "short"),
        ("Brest", None),
        ("KERBRAT", None),
        ("Marie", None),  # the lexicon has 'marié', not 'marie'
        ("LE GALL", None),  # multi-word entries are specific enough
        ("Saint-Brieuc", None),
    ],
)
def test_ambiguity_comes_from_the_lexicon(entry, reason):
    assert ambiguity_reason(entry) == reason
