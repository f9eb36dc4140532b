"""A patient's pattern is not run on a view without its hint (text every match holds: docs/benchmarks.md,
*deidentify*): the hint is in every match, so the counts are those of the patterns run everywhere."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification.leaks import needles_for
from deid_ds.kb.normalize import fold_text
from deid_ds.model import PatientMetadata

PATIENTS = [
    PatientMetadata(
        firstname="Marie-Hélène",
        lastname="Kerdraon",
        birthdate="1961-04-12",
        address="12 rue de l'Église",
        zip="29000",
        city="Pont-l'Abbé",
        email="marie.kerdraon@example.org",
    ),
    PatientMetadata(lastname="Le Gall", birthdate="01/03/2005", zip="35 000", city="Saint-Malo", address="Kerlouan"),
    PatientMetadata(birthdate="1900-01-01", city="Brest", address="3 bis avenue Jean Jaurès"),
]
_PIECES = [
    *("12/04/1961", "12.04.61", "1961-04-12", "12041961", "19610412", "12 avril 1961", "12-AVR-1961", "12avr1961"),
    *("1er mars 2005", "01/03/05", "20050301", "1/1/1900", "premier janvier 1900", "29000", "29 000", "35000"),
    *("Pont-l'Abbé", "PONT L ABBE", "pont’l’abbé", "Saint Malo", "Brest", "Église", "l'Eglise", "Kerlouan"),
    *("Jean Jaurès", "jean-jaures", "marie.kerdraon@example.org", "MARIE.KERDRAON@EXAMPLE.ORG", " ", "-", "/"),
    *("\n", "x", "61", "05", "1900", "avril", "mars", "rue", "de", "l'", "0", "1", "2"),
]


@pytest.mark.parametrize("patient", PATIENTS, ids=["full", "2005", "1900"])
@settings(max_examples=200, deadline=None)
@given(text=st.lists(st.sampled_from(_PIECES), max_size=25).map("".join))
def test_every_match_of_a_patients_pattern_holds_its_hint(patient, text):
    needles = needles_for(patient)
    folded = fold_text(text)
    assert set(needles.hints) == set(needles.patterns)
    for name, pattern in needles.patterns.items():
        for match in pattern.finditer(folded):
            assert needles.hints[name] in match.group()
        assert needles.searched(name, folded) or not pattern.search(folded)


def test_the_hints_let_the_values_through():
    needles = needles_for(PATIENTS[0])
    folded = fold_text("Née le 12 avril 1961 à Pont-l'Abbé (29000), 12 rue de l’Église, marie.kerdraon@example.org")
    assert {name: len(p.findall(folded)) for name, p in needles.patterns.items() if needles.searched(name, folded)} == {
        "birthdate": 1,
        "zip": 1,
        "city": 1,
        "address": 1,
        "email": 1,
    }
