"""Punkt parameters: shipped, trainable, saved and loaded without any download."""

from __future__ import annotations

import json

import nltk
import pytest

from deid_ds.segmentation.punkt import (
    default_parameters,
    load_parameters,
    save_parameters,
    sentence_splitter,
)
from deid_ds.segmentation.punkt_training import train_parameters


@pytest.fixture(autouse=True)
def no_download(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("nltk.download must never be called")

    monkeypatch.setattr(nltk, "download", refuse)


def test_shipped_parameters_know_french_clinical_abbreviations():
    abbreviations = default_parameters().abbrev_types
    assert {"dr", "pr", "mme", "cf", "env"} <= abbreviations
    assert "mg" not in abbreviations  # a unit often ends a sentence: "5 mg."


def test_training_learns_from_the_corpus_and_keeps_the_abbreviation_list(tmp_path):
    corpus = ["Le traitement comprend de l'amox. en IV. Le patient va bien. Revu par le Pr. Martin."] * 50
    parameters = train_parameters(corpus)
    assert "dr" in parameters.abbrev_types
    path = tmp_path / "punkt.json"
    save_parameters(parameters, path)
    data = json.loads(path.read_text())
    assert data["format"] == "deid-ds/punkt-parameters/1"
    loaded = load_parameters(path)
    assert loaded.abbrev_types == parameters.abbrev_types
    assert loaded.ortho_context == parameters.ortho_context
    splitter = sentence_splitter(loaded)
    assert len(splitter.tokenize("Revu par le Pr. Martin. Le patient va bien.")) == 2


def test_a_file_that_is_not_punkt_parameters_is_refused(tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="not a deid-ds Punkt parameter file"):
        load_parameters(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_parameters(path)


def test_the_ellipsis_character_ends_a_sentence():
    assert len(sentence_splitter().tokenize("Il hésite\u2026 Puis il accepte.")) == 2


@pytest.mark.parametrize(
    "line",
    [
        "24 All. des Rochers - 35615 RENNES Cedex 3",
        "21, Ch. du Général de Gaulle – 56000 Vannes",
        "Rés. Ker Avel, 92 Rte. La Bourdonnais",
    ],
)
def test_an_abbreviated_street_type_does_not_end_the_address_line(line):
    # A split there would cut the STR span in two, and a tagger only sees one sentence at a time.
    assert sentence_splitter().tokenize(line) == [line]


def test_hyphenated_initials_do_not_end_a_sentence_before_the_last_name():
    splitter = sentence_splitter()
    assert splitter.tokenize("Médecins : Dr. A.-A. KERDRAON, Dr. J.-F. LEBRETON") == [
        "Médecins : Dr. A.-A. KERDRAON, Dr. J.-F. LEBRETON"
    ]
    assert splitter.tokenize("Vu par J.-P. Morvan. Il va bien.") == ["Vu par J.-P. Morvan.", "Il va bien."]
