"""Every date form the labeller reads is shifted and written back in the same form (words in words)."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification.context import Context
from deid_ds.deidentification.date_words import WordsDate, number_words, read_words, render_words
from deid_ds.deidentification.dates_shift import date_offset, parse_date, shift_date_text
from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.pools import load_pools
from deid_ds.label import _numbers
from deid_ds.label.dates import WEEKDAYS, find_dates
from deid_ds.model import PatientMetadata

CTX = Context(Keyring(b"date-forms-key-0001"), load_pools(None), "patient:P1", PatientMetadata())
OFFSET = dt.timedelta(days=date_offset(CTX))
WORDS = r"[a-zàâçéèêëîïôûùüÿ -]+"


@pytest.mark.parametrize(
    ("original", "form", "date"),
    [
        ("20190429", r"(19|20)\d{6}", dt.date(2019, 4, 29)),  # year first stays year first
        ("29042019", r"\d{4}(19|20)\d\d", dt.date(2019, 4, 29)),
        ("29-avr-2019", r"\d\d-[a-zéû]+-\d{4}", dt.date(2019, 4, 29)),
        ("12-MAR-2020", r"\d\d-[A-ZÉÛ]+-\d{4}", dt.date(2020, 3, 12)),
        ("12MAR2020", r"\d\d[A-ZÉÛ]+\d{4}", dt.date(2020, 3, 12)),
        ("14|7|1931", r"\d{1,2}\|\d{1,2}\|\d{4}", dt.date(1931, 7, 14)),
        ("12_03_2020", r"\d\d_\d\d_\d{4}", dt.date(2020, 3, 12)),
        ("21 / 06 / 2020", r"\d\d / \d\d / \d{4}", dt.date(2020, 6, 21)),
        ("09 . 05 . 1952", r"\d\d \. \d\d \. \d{4}", dt.date(1952, 5, 9)),
        ("1 2 / 0 3 / 2 0 2 0", r"\d \d / \d \d / \d \d \d \d", dt.date(2020, 3, 12)),
        ("1er/06/2020", r"(1er|\d\d)/\d\d/\d{4}", dt.date(2020, 6, 1)),
        ("26 septembre\n\n2015", r"(1er|\d{1,2}) [a-zéû]+\n\n\d{4}", dt.date(2015, 9, 26)),
        ("trente juillet deux mille vingt-deux", WORDS, dt.date(2022, 7, 30)),
        ("TRENTE OCTOBRE DEUX MILLE VINGT-TROIS", r"[A-ZÉÛ -]+", dt.date(2023, 10, 30)),
        ("mardi vingt et un mai deux mille dix-neuf", WORDS, dt.date(2019, 5, 21)),
        (
            "vingt-huit novembre dix-neuf cent cinquante-huit",
            r"[a-zéû -]+dix-neuf cents?[a-z -]*",
            dt.date(1958, 11, 28),
        ),
        ("douze mars 2020", r"[a-z -]+ [a-zéû]+ \d{4}", dt.date(2020, 3, 12)),
        ("19/01/2O17", r"\d\d/\d\d/\d{4}", dt.date(2017, 1, 19)),  # a scanned O read as 0, written as 0
        ("vendredi vingt-six décernbre deu x mille quatorze", WORDS, dt.date(2014, 12, 26)),
        ("14 novcmbre 2015", r"\d{1,2} [a-zéû]+ \d{4}", dt.date(2015, 11, 14)),  # a month misread by a scan
        ("27 0CT 2016", r"\d{1,2} [A-ZÉÛ]+\.? \d{4}", dt.date(2016, 10, 27)),
        ("31 octo-\nbre 2023", r"(1er|\d{1,2}) [a-zéû]+ \d{4}", dt.date(2023, 10, 31)),
    ],
)
def test_a_date_is_shifted_in_its_own_form(original, form, date):
    shifted = shift_date_text(CTX, original)
    assert shifted is not None and re.fullmatch(form, shifted), shifted
    weekday = re.match(r"(lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche) ", shifted)
    assert parse_date(shifted[weekday.end() :] if weekday else shifted).date == date + OFFSET


def test_every_date_form_the_labeller_reads_is_shifted():
    note = (
        "Vu le 20190429, né le 17062019, le trente juillet deux mille vingt-deux, du 8 au 10 mars 2020, "
        "le 1er/06/2020, 29-avr-2019, 12MAR2020, le 14|7|1931, 12_03_2020, 09 . 05 . 1952, le 21 / 06 / 2020, "
        "1 2 / 0 3 / 2 0 2 0, en 2014, lundi 3 février 2021, le douze mars deux mille vingt."
    )
    spans = [note[c.start : c.end] for c in find_dates(note)]
    assert len(spans) >= 15
    for i, span in enumerate(spans):
        paired = spans[i + 1] if span == "8" else None
        assert shift_date_text(CTX, span, paired) not in (None, span), span


def test_words_keep_their_spelling_style():
    assert "mil " in shift_date_text(CTX, "trois mars mil neuf cent douze")
    assert len(shift_date_text(CTX, "vingt-et-un mars deux-mille-vingt-et-un").split(" ")) == 3  # 1990: hyphens
    assert shift_date_text(CTX, "Douze mars deux mille vingt")[0].isupper()
    assert not re.search(r"[éû]", shift_date_text(CTX, "DOUZE AOUT DEUX MILLE VINGT"))  # no accents: none written


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (21, "vingt et un"),
        (71, "soixante et onze"),
        (70, "soixante-dix"),
        (80, "quatre-vingts"),
        (81, "quatre-vingt-un"),
        (91, "quatre-vingt-onze"),
        (1980, "mille neuf cent quatre-vingts"),
        (1985, "mille neuf cent quatre-vingt-cinq"),
        (2021, "deux mille vingt et un"),
    ],
)
def test_numbers_are_written_as_french_writes_them(n, words):
    assert number_words(n) == words


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 2099),
    reform=st.booleans(),
    mil=st.booleans(),
    hundreds=st.booleans(),
)
def test_number_words_read_back_as_their_number(n, reform, mil, hundreds):
    assert _numbers.value(number_words(n, reform=reform, mil=mil, hundreds=hundreds)) == n


@settings(max_examples=300, deadline=None)
@given(
    date=st.dates(dt.date(1890, 1, 1), dt.date(2099, 12, 31)),
    fields=st.sampled_from(["dmy", "dm", "my", "y"]),
    style=st.sampled_from(["upper", "title", "lower"]),
    reform=st.booleans(),
    hundreds=st.booleans(),
    weekday=st.booleans(),
)
def test_a_date_in_words_reads_back_as_its_date(date, fields, style, reform, hundreds, weekday):
    day = date.day if "d" in fields else None
    month = date.month if "m" in fields else None
    year = date.year if "y" in fields else None
    weekday = weekday and fields == "dmy"
    parsed = WordsDate(day, month, year, weekday, style, reform, False, hundreds, True)
    written = render_words(parsed, date.day, date.month, date.year, "lundi")
    again = read_words(written)
    assert again is not None and (again.day, again.month, again.year) == (day, month, year), written


def test_an_abbreviated_weekday_is_recomputed_and_stays_abbreviated():
    shifted = shift_date_text(CTX, "sam. 03/06/2023")
    weekday, date = shifted.split(" ")
    new = parse_date(date).date
    assert new == dt.date(2023, 6, 3) + OFFSET and weekday == f"{WEEKDAYS[new.weekday()][:3]}."
    assert re.fullmatch(r"[a-zéû]+\.? 20\d\d", shift_date_text(CTX, "mar. 2020"))  # March, not a Tuesday


def test_no_patient_is_shifted_by_a_whole_year():
    # a whole year would leave every day and month as written ("26/11"), so all of them would be masked
    for i in range(1500):
        ctx = Context(Keyring(b"date-forms-key-0001"), load_pools(None), f"patient:{i}", PatientMetadata())
        assert 15 <= abs(date_offset(ctx)) <= 364
        assert shift_date_text(ctx, "26/11") not in (None, "26/11")
