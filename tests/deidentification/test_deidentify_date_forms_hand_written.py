"""Hand-written and scanned date forms the labeller finds are shifted too, in their own form, not masked."""

from __future__ import annotations

import datetime as dt
import re

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.cli import main
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.dates_shift import date_offset, parse_date, shift_date_text
from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.pools import load_pools
from deid_ds.label.dates import WEEKDAYS, find_dates
from deid_ds.model import PatientMetadata

CTX = Context(Keyring(b"date-forms-key-0001"), load_pools(None), "patient:P1", PatientMetadata())
OFFSET = dt.timedelta(days=date_offset(CTX))
ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")


def _ctx(patient: str) -> Context:
    return Context(Keyring(b"date-forms-key-0001"), load_pools(None), f"patient:{patient}", PatientMetadata())


@pytest.mark.parametrize(
    ("original", "form", "date"),
    [
        ("12.IV.2019", r"\d{1,2}\.[IVX]+\.\d{4}", dt.date(2019, 4, 12)),  # the month stays Roman
        ("7-XI-2021", r"\d{1,2}-[IVX]+-\d{4}", dt.date(2021, 11, 7)),
        ("23 VI 2017", r"\d{1,2} [IVX]+ \d{4}", dt.date(2017, 6, 23)),
        ("1er.XII.20", r"(1er|\d{1,2})\.[IVX]+\.\d\d", dt.date(2020, 12, 1)),  # two-digit year stays two digits
        ("04 09 1947", r"\d\d \d\d \d{4}", dt.date(1947, 9, 4)),  # blanks stay blanks, padding kept
        ("12/04/ 2019", r"\d\d/\d\d/ \d{4}", dt.date(2019, 4, 12)),  # the slipped blank stays where it was
        ("12 /04/2019", r"\d\d /\d\d/\d{4}", dt.date(2019, 4, 12)),
        ("1ER/06/2020", r"(1ER|\d\d)/\d\d/\d{4}", dt.date(2020, 6, 1)),  # the first in capitals
        ("1° mars 2019", r"(1°|\d{1,2}) [a-zéû]+ \d{4}", dt.date(2019, 3, 1)),
        ("l2/O4/2019", r"\d\d/\d\d/\d{4}", dt.date(2019, 4, 12)),  # look-alike letters read, digits written
        ("O3/1O/2O21", r"\d\d/\d\d/\d{4}", dt.date(2021, 10, 3)),
        ("26 jui1let 1979", r"\d{1,2} [a-zéû]+ \d{4}", dt.date(1979, 7, 26)),  # a misread month, spelt right
        ("14 novembrc 2015", r"\d{1,2} [a-zéû]+ \d{4}", dt.date(2015, 11, 14)),
        ("20 SEP 202I", r"\d{1,2} [A-ZÉÛ]+\.? \d{4}", dt.date(2021, 9, 20)),  # the scanned year is kept, read
        ("22 MAR 2O21", r"\d{1,2} [A-ZÉÛ]+\.? \d{4}", dt.date(2021, 3, 22)),
        ("14 novmbre 2015", r"\d{1,2} [a-zéû]+ \d{4}", dt.date(2015, 11, 14)),  # a letter lost
        ("7 ocotbre 2019", r"\d{1,2} [a-zéû]+ \d{4}", dt.date(2019, 10, 7)),  # two letters swapped: two edits
        ("5 avri 2019", r"\d{1,2} [a-zéû]+ \d{4}", dt.date(2019, 4, 5)),
        ("5 necembre 2019", r"\d{1,2} [a-zéû]+ \d{4}", dt.date(2019, 12, 5)),  # nearer décembre than novembre
        ("06 5EP 1929", r"\d\d [A-ZÉÛ]+\.? \d{4}", dt.date(1929, 9, 6)),  # a figure for a letter: 5 for S
    ],
)
def test_a_hand_written_date_is_shifted_in_its_own_form(original, form, date):
    shifted = shift_date_text(CTX, original)
    assert shifted is not None and re.fullmatch(form, shifted), shifted
    assert parse_date(shifted).date == date + OFFSET


def test_a_roman_month_is_written_in_roman_numerals():
    new = dt.date(2019, 4, 15) + OFFSET
    assert shift_date_text(CTX, "15.IV.2019") == f"{new.day}.{ROMAN[new.month - 1]}.{new.year}"


def test_the_first_keeps_the_way_it_was_written():
    # a patient whose shift takes the 1st of March 2019 to the first of another month
    first = dt.date(2019, 3, 1)
    patient = next(p for p in range(500) if (first + dt.timedelta(days=date_offset(_ctx(str(p))))).day == 1)
    assert shift_date_text(_ctx(str(patient)), "1° mars 2019").startswith("1° ")
    assert shift_date_text(_ctx(str(patient)), "1er.III.2019").startswith("1er.")
    assert shift_date_text(_ctx(str(patient)), "01.III.2019").startswith("01.")


def test_a_first_in_capitals_alone_moves_with_the_date_it_is_paired_with():
    # "DU 1ER AU 3 AVRIL": the first of April, moved with the patient's offset (a day and month of a fixed year)
    day = shift_date_text(CTX, "1ER", "3 AVRIL")
    new = dt.date(2001, 4, 1) + OFFSET
    assert day == ("1ER" if new.day == 1 else str(new.day))


def test_the_written_month_of_a_misread_month_is_spelt_correctly():
    new = dt.date(1979, 7, 26) + OFFSET
    months = ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre")
    months += ("novembre", "décembre")
    assert shift_date_text(CTX, "26 jui1let 1979") == f"{new.day} {months[new.month - 1]} {new.year}"
    assert shift_date_text(CTX, "26 JUI1LET 1979") == f"{new.day} {months[new.month - 1].upper()} {new.year}"


@pytest.mark.parametrize("weekday", ["lun", "Lun", "lun.", "lundi"])
def test_a_weekday_before_a_date_is_recomputed_in_its_own_form(weekday):
    shifted = shift_date_text(CTX, f"{weekday} 12/04/2021")
    name, date = shifted.split(" ")
    new = dt.date(2021, 4, 12) + OFFSET
    assert parse_date(date).date == new
    expected = WEEKDAYS[new.weekday()]
    expected = expected if weekday.lower() == "lundi" else expected[:3] + ("." if weekday.endswith(".") else "")
    assert name == (expected.capitalize() if weekday[0].isupper() else expected)


def test_a_school_year_moves_as_a_year_alone_does():
    for patient in ("P1", "P2", "P3", "P4", "P5", "P6"):
        ctx = _ctx(patient)
        step = 1 if date_offset(ctx) > 0 else -1
        assert shift_date_text(ctx, "2018/2019") == f"{2018 + step}/{2019 + step}"
        assert shift_date_text(ctx, "2018") == str(2018 + step)


@pytest.mark.parametrize(
    "span",
    [
        "2018/2020",  # two years that do not follow: not a school year, masked
        "12 IIII 2019",  # no month
        "31.II.2019",  # no 31st of February
        "12.IV/2019",  # two separators: no date read
        "12 IV 19",  # blanks with a two-digit year: the labeller does not read it either
        "12.iv.2019",  # a Roman month is written in capitals
        "5 javrier 2019",  # two edits from both janvier and février: no month chosen
        "5 avri",  # a misread month without a year: the labeller reads it only between a day and a year
        "5 mal 2019",  # four letters or fewer only as written: mai is one letter from mal
        "2° mars 2019",  # the degree sign marks the first only
        "lun 12/04",  # an abbreviated weekday goes with a full date only
        "4 9 1947",  # blanks: two-digit day and month only
        "12/04/ 19",  # a slipped blank before a two-digit year: a score or a ratio as likely
    ],
)
def test_an_ambiguous_form_is_still_masked(span):
    assert shift_date_text(CTX, span) is None


def test_every_hand_written_form_the_labeller_finds_is_shifted():
    note = (
        "Vu le 12.IV.2019, revu le 7-XI-2021.\nle 23 VI 2017 scanner, le 1er.XII.20 contrôle, le 1° mars 2019 bilan, "
        "né le 04 09 1947, le 12/04/ 2019 retour, lun 12/04/2021 consultation, en 2018/2019 en classe, "
        "le l2/O4/2019 revu, le O3/1O/2O21 revu, le 26 jui1let 1979 opéré, le 14 novembrc 2015 opéré."
    )
    spans = [note[c.start : c.end] for c in find_dates(note)]
    assert len(spans) == 13, spans
    for span in spans:
        assert shift_date_text(CTX, span) not in (None, span), span


@settings(max_examples=300, deadline=None)
@given(
    date=st.dates(dt.date(1900, 1, 1), dt.date(2099, 12, 31)),
    sep=st.sampled_from([".", "-", "/", " "]),
    patient=st.integers(0, 10_000),
)
def test_a_roman_date_shifted_reads_back_as_the_date_plus_the_offset(date, sep, patient):
    ctx = _ctx(str(patient))
    shifted = shift_date_text(ctx, f"{date.day}{sep}{ROMAN[date.month - 1]}{sep}{date.year}")
    new = date + dt.timedelta(days=date_offset(ctx))
    assert shifted == f"{new.day}{sep}{ROMAN[new.month - 1]}{sep}{new.year}"
    if 1890 <= new.year <= 2099:  # the years a date is read in
        assert parse_date(shifted).date == new


def test_deidentify_shifts_the_hand_written_dates_weak_label_finds(tmp_path):
    letter = (
        "<p>Vu le 12.IV.2019 en consultation.</p><p>Courrier du 23 VI 2017.</p><p>Né le 04 09 1947.</p>"
        "<p>Scanner du 12/04/ 2019.</p><p>RDV lun 12/04/2021.</p><p>Scolarisé en 2018/2019.</p>"
        "<p>Sortie le O3/1O/2O21.</p><p>Opéré le 26 jui1let 1979.</p>"
    )
    notes = tmp_path / "notes.parquet"
    pd.DataFrame({"id_document": ["D1"], "id_patient": ["P1"], "doc_type": ["courrier"], "html": [letter]}).to_parquet(
        notes
    )
    runner = CliRunner()
    labelled = runner.invoke(main, ["weak-label", str(notes), "--out", str(tmp_path / "weak"), "--no-metadata", "-q"])
    assert labelled.exit_code == 0, labelled.output
    out = tmp_path / "out"
    args = [str(notes), "--spans", str(tmp_path / "weak" / "spans.parquet"), "--out", str(out), "-j", "1", "-q"]
    done = runner.invoke(main, ["deidentify", *args, "--key", "hand-written-dates-test-key"])
    assert done.exit_code == 0, done.output
    audit = pd.read_parquet(out / "audit.parquet")
    dates = audit[(audit["label"] == "DATE") & (audit["view"] == "text")]
    assert len(dates) == 8 and dates["fallback"].isna().all(), dates["fallback"].tolist()
    html = pd.read_parquet(out / "notes.parquet")["html"][0]
    assert re.search(r"Vu le \d{1,2}\.[IVX]+\.\d{4} en", html) and re.search(r"Né le \d\d \d\d \d{4}\.", html)
    assert re.search(r"Scolarisé en (2017/2018|2019/2020)\.", html) and "2018/2019" not in html
