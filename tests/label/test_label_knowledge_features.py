"""Knowledge features of a hand-written note: what the labeller's own lookups say about each token."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.kb.fingerprint import kb_fingerprint
from deid_ds.label import features as F
from deid_ds.label._numbers import WORDS
from deid_ds.label.features import FEATURES, feature_column, feature_columns, parse_feature_column, token_features
from deid_ds.label.labeller import WeakLabeller
from deid_ds.label.lookup import NoteLookup
from deid_ds.model import PatientMetadata
from deid_ds.segmentation.tokens import tokenize

NOTE = (
    "Mme Marie KERBRAT, née le 12/03/1954, demeurant 5 rue de Brest 22000 Saint-Brieuc.\n"
    "Tél 06 12 34 56 78. Vue par le Dr Yves Le Goff. La porte est ouverte."
)
PATIENT = PatientMetadata(
    firstname="Marie",
    lastname="Kerbrat",
    birthdate="1954-03-12",
    address="5 rue de Brest",
    zip="22000",
    city="Saint-Brieuc",
    phone="06.12.34.56.78",
)


def tokens(text: str) -> tuple[list[int], list[int]]:
    spans = [m.span() for m in re.finditer(r"\w+|[^\w\s]", text)]
    return [s for s, _ in spans], [e for _, e in spans]


@pytest.fixture(scope="module")
def matcher(kb_dir):
    return WeakLabeller.from_kb(kb_dir).matcher


def features_by_word(text: str, matcher=None, patient=None) -> dict[str, set[str]]:
    """Each word's features (a word seen twice: the union of both occurrences)."""
    starts, ends = tokens(text)
    found: dict[str, set[str]] = {}
    for s, e, feats in zip(starts, ends, token_features(text, starts, ends, matcher, patient)):
        assert list(feats) == sorted(feats) and set(feats) <= set(FEATURES)
        found.setdefault(text[s:e], set()).update(feats)
    return found


def test_a_note_reads_like_what_the_rules_know(matcher):
    f = features_by_word(NOTE, matcher, PATIENT)
    assert {"kb:first", "meta:first", "shape:title"} <= f["Marie"]
    assert {"kb:last", "meta:last", "shape:upper", "len:7+"} <= f["KERBRAT"]
    assert {"street_type", "kb:street"} <= f["rue"]  # the street rules' list, the BAN's street
    assert {"kb:street", "meta:address"} <= f["Brest"]
    assert {"postcode", "meta:address", "shape:digits"} <= f["22000"]
    assert {"kb:commune"} <= f["Saint"] and {"kb:commune", "meta:address"} <= f["Brieuc"]  # a multi-token commune
    assert {"meta:birth"} <= f["1954"] and {"meta:birth"} <= f["03"]  # inside the birthdate
    assert {"meta:phone"} <= f["78"] and {"meta:phone"} <= f["56"]
    assert {"common_word", "shape:lower"} <= f["porte"] and "kb:first" not in f["porte"]
    assert "meta:first" not in f["Yves"] and "meta:last" not in f["Goff"]  # the doctor is not the patient
    assert f["."] >= {"shape:punct", "len:1"}


@pytest.fixture(scope="module")
def lookup(matcher) -> NoteLookup:
    """The note with its names, address and birthdate written once more."""
    text = NOTE + " Marie KERBRAT, 22000 Saint-Brieuc. Rue de Brest, le 12.03.54."
    return NoteLookup.of_offsets(text, *tokens(text), matcher, PATIENT)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_columns_of_some_sentences_are_theirs_among_all(lookup, data):
    """Columns are computed for the written sentences only: any sorted, disjoint token ranges get the very
    columns they have among the whole note's (the names, address, dates and matches that span them included)."""
    n = len(lookup.view.words)
    bounds = sorted(data.draw(st.sets(st.integers(0, n), max_size=12)))
    ranges = [r for r in pairwise(bounds) if data.draw(st.booleans())]
    whole = feature_columns(lookup)
    assert any(c != "-" and "meta:" in c for c in whole) and any("kb:" in c for c in whole)
    assert feature_columns(lookup, ranges) == [whole[k] for first, end in ranges for k in range(first, end)]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789٣/.- a\n", max_size=40), st.sampled_from(["54", "1954", "00", "5", "٣4"]))
def test_the_birthdate_is_looked_for_in_the_stretches_holding_its_year(text, digits):
    """Every date of the text whose year ends with the birth year's digits is found in the stretches of digits
    and separators holding them, as the search of the whole text finds it (Arabic-Indic digits are ``\\d``)."""
    whole = [(m.span(), m.groups()) for m in F._DATE.finditer(text)]
    found = [(m.span(), m.groups()) for m in F._dates_ending_with(text, digits)]
    assert set(found) <= set(whole) and len(set(found)) == len(found)
    assert [m for m in whole if m[1][2].endswith(digits)] == [m for m in found if m[1][2].endswith(digits)]


def test_without_metadata_or_kb_only_the_other_features():
    f = features_by_word(NOTE)
    every = set().union(*f.values())
    assert not any(name.startswith(("meta:", "kb:")) for name in every)
    assert {"street_type", "postcode", "common_word", "shape:upper"} <= every


def test_the_flair_column_and_back():
    assert feature_column(()) == "-" and parse_feature_column("-") == ()
    assert feature_column(("kb:first", "len:4-6")) == "kb:first|len:4-6"
    assert parse_feature_column("kb:first|len:4-6") == ("kb:first", "len:4-6")


def test_the_kb_fingerprint_follows_the_tables_not_the_build(kb_dir, tmp_path):
    import json
    import shutil

    copy = tmp_path / "kb"
    shutil.copytree(kb_dir, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["built_at"] = "another day"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert kb_fingerprint(copy) == kb_fingerprint(kb_dir)
    manifest["tables"]["names"]["sha256"] = "0" * 64
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert kb_fingerprint(copy) != kb_fingerprint(kb_dir)


def test_numbers_written_in_words_as_the_tokenizer_cuts_them():
    """A dictated date or phone number: each number word and hyphenated compound is ``number_word`` (the date
    and phone rules' vocabulary); ``une`` is not (an article, never a date nor a phone number), ``un`` and
    ``neuf`` are (``zéro un``, ``deux mille neuf``) whatever their sense here."""
    text = (
        "Vu le vingt-trois mars deux mille neuf, rappeler au ZÉRO un quatre-vingt-dix dix-huit soixante-et-onze "
        "Zero. Une vingtaine de fois, un neuf sixième."
    )
    spans = tokenize(text)
    words = [text[s:e] for s, e in spans]
    assert {"vingt-trois", "quatre-vingt-dix", "dix-huit", "soixante-et-onze"} <= set(words)  # one token each
    features = token_features(text, [s for s, _ in spans], [e for _, e in spans])
    numbers = {word for word, feats in zip(words, features) if "number_word" in feats}
    assert numbers == {
        "vingt-trois", "deux", "mille", "neuf", "ZÉRO", "un", "quatre-vingt-dix", "dix-huit", "soixante-et-onze", "Zero"
    }  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(sorted(WORDS)), min_size=1, max_size=5), st.sampled_from(["", "-et"]))
def test_a_hyphenated_compound_of_number_words_is_one_number_word_token(parts, et):
    """Any hyphenated run of the rules' number words (``et`` between two) is one token, ``number_word``; its ordinal
    (``dix-huitième``) is not."""
    compound = (et + "-").join(parts) if len(parts) > 1 else parts[0]
    assert tokenize(compound) == [(0, len(compound))]
    assert F.is_number_word(compound) == (compound != "une")
    assert F.is_number_word(compound.upper()) == (compound != "une")
    assert not F.is_number_word(compound + "ième")  # an ordinal
