"""The patient's metadata in the types and layouts warehouses export, read one way for every stage."""

from __future__ import annotations

import datetime as dt

import pytest

from deid_ds.io.metadata import read_birthdate, read_metadata, read_phone, read_zip, unreadable_fields
from deid_ds.model import PatientMetadata

APRIL_12 = dt.date(1961, 4, 12)


@pytest.mark.parametrize(
    "value",
    [
        "1961-04-12",
        "1961-04-12T00:00:00",
        "1961-04-12 00:00:00",
        "1961/04/12",
        "12/04/1961",
        "12-04-1961",
        "12.04.1961",
        "19610412",
        "12041961",
        19610412,
        19610412.0,
        "19610412.0",
        dt.date(1961, 4, 12),
        dt.datetime(1961, 4, 12, 0, 0),
    ],
)
def test_birthdates_in_every_exported_form(value):
    assert read_birthdate(value) == APRIL_12


@pytest.mark.parametrize("value", ["12 III 61", "1961", "31/02/1961", "99999999", 1961.5, "", None, "avril 61"])
def test_what_is_not_a_birthdate(value):
    assert read_birthdate(value) is None


@pytest.mark.parametrize(
    ("value", "read"),
    [
        ("29350", "29350"),
        ("29 350", "29350"),
        (29350, "29350"),
        (29350.0, "29350"),
        ("29350.0", "29350"),
        (1000, "01000"),
    ],
)
def test_postcodes(value, read):
    assert read_zip(value) == read


@pytest.mark.parametrize("value", ["29350-9", "293", "293500", 29350.5, "F29", None])
def test_what_is_not_a_postcode(value):
    assert read_zip(value) is None


@pytest.mark.parametrize(
    ("value", "read"),
    [
        (298123456, "0298123456"),
        (298123456.0, "0298123456"),
        ("298123456", "0298123456"),
        ("02 98 12 34 56", "02 98 12 34 56"),
        ("+33 2 98 12 34 56", "+33 2 98 12 34 56"),
        (33298123456, "33298123456"),
    ],
)
def test_phones_get_their_leading_zero_back(value, read):
    assert read_phone(value) == read


def test_a_row_is_read_once_for_every_stage_and_what_cannot_be_read_is_named():
    patient = read_metadata(
        {"lastname": "KERDRAON", "birthdate": "19610412", "zip": "29350.0", "phone": "298123456", "email": "x"}
    )
    assert (patient.birthdate, patient.zip, patient.phone) == ("1961-04-12", "29350", "0298123456")
    assert unreadable_fields(patient) == ("email",)
    assert unreadable_fields(PatientMetadata(birthdate="12 III 61", zip="29350-9", phone="12")) == (
        "birthdate",
        "zip",
        "phone",
    )
    assert unreadable_fields(PatientMetadata()) == ()


def test_the_weak_labeller_reads_the_same_forms():
    from deid_ds.label.candidate import Candidate
    from deid_ds.label.patient import confirm_with_metadata

    text = "Né en 1961, 29350 Moëlan."
    candidates = [
        Candidate(6, 10, "DATE", "pattern:year", 0.5, needs_context=True),
        Candidate(12, 17, "ZIP", "pattern:zip", 0.5, needs_context=True),
    ]
    for patient in (PatientMetadata(birthdate="12/04/1961", zip="29350.0"), read_metadata({"birthdate": "19610412"})):
        confirmed = confirm_with_metadata(text, candidates, patient)
        assert "metadata:birthdate" in {c.source for c in confirmed}
    assert {c.source for c in confirm_with_metadata(text, candidates, PatientMetadata(zip="29350.0"))} == {
        "metadata:zip"
    }
