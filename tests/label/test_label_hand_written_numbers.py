"""Dates, phones and e-mails as hand-written letters and notes write them, beyond the examples of
``cases/``: every date with its month in Roman numerals is one date, and none is read in a Roman numeral that
is a stage or a class; a year in words keeps the word a scan or a transcription cut in two; an e-mail or a
phone broken over two lines of a PDF export is one span over the markup."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.label import _numbers
from deid_ds.label.dates import find_dates
from deid_ds.label.labeller import WeakLabeller
from deid_ds.label.phones import find_phones
from deid_ds.segmentation.html_text import html_to_text
from deid_ds.segmentation.tokens import tokenize

_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")


@settings(max_examples=300, deadline=None)
@given(st.dates(min_value=date(1900, 1, 1), max_value=date(2099, 12, 31)), st.sampled_from(". -/"), st.booleans())
def test_every_date_with_a_roman_month_is_one_date(day: date, sep: str, short_year: bool) -> None:
    year = f"{day.year % 100:02d}" if short_year and sep != " " else str(day.year)
    written = f"{day.day}{sep}{_ROMAN[day.month - 1]}{sep}{year}"
    text = f"Patient revu le {written} en consultation."
    found = [text[c.start : c.end] for c in find_dates(text) if not c.needs_context]
    assert found == [written]


@pytest.mark.parametrize(
    "text",
    [
        "stade 2 IV 2019 selon la classification",
        "classe 3 - IV - 2020",
        "NYHA 3 III 2018",
        "tumeur classée 12 II 2021 sans autre précision",
        "EVA 3/10 / 2019",
        "valeurs 21 10 2022 et 14 02 1950",
        "il y a 12 mal 2019 et 3 boites 2019 ou 2 avions 2019",  # near no month, or only near "mai"
    ],
)
def test_a_roman_numeral_a_measure_or_figures_between_numbers_are_no_date(text: str) -> None:
    # the year alone may stay an uncertain candidate; nothing holds the numeral or the slash
    assert all(c.needs_context for c in find_dates(text)), [text[c.start : c.end] for c in find_dates(text)]


@pytest.mark.parametrize(
    ("words", "number"),
    [
        ("deux mille n euf", 2009),
        ("mil neuf cent vin gt-deux", 1922),
        ("deux mil le seize", 2016),
        ("n euf", 9),
        ("deux mille six cent", 2600),
    ],
)
def test_a_number_word_cut_by_a_blank_reads_whole(words: str, number: int) -> None:
    assert _numbers.value(words) == number


@pytest.mark.parametrize(
    ("text", "year"),
    [
        ("opérée en deux mille n euf puis revue", "deux mille n euf"),
        ("né en mil neuf cent vin gt-deux à Brest", "mil neuf cent vin gt-deux"),
        ("opérée en deux mille c est tout", "deux mille"),
    ],
)
def test_a_year_in_words_runs_over_a_word_cut_by_a_blank_and_no_further(text: str, year: str) -> None:
    assert [text[c.start : c.end] for c in find_dates(text)] == [year]


@pytest.mark.parametrize(
    ("text", "phones"),
    [
        ("lot 0032 4 123 45 67", []),
        ("IPP 0041 21 987 65 43", []),
        ("numéros utiles : le 15, le 112 ou le 18", []),
        ("Tél : (02) 98 44 55 66 12", []),
        ("Tél : 0 800 123 456 78", []),
        ("Tél : +33 (0)2 98 44 55 66", ["+33 (0)2 98 44 55 66"]),
    ],
)
def test_no_phone_in_an_identifier_an_emergency_number_or_a_longer_run(text: str, phones: list[str]) -> None:
    assert [text[c.start : c.end] for c in find_phones(text)] == phones


def test_an_email_and_a_phone_broken_over_two_pdf_lines_are_one_span_each_over_the_markup() -> None:
    html = (
        '<div style="position:absolute;top:10px">Secrétariat : accueil.pneumo@</div>'
        '<div style="position:absolute;top:30px">ch-exemple.fr, joignable au +33</div>'
        '<div style="position:absolute;top:50px">(0)4 76 21 43 65.</div>'
    )
    parsed = html_to_text(html)
    text = parsed.text
    spans = [
        (c.label, html[slice(*parsed.html_span(c.start, c.end))]) for c in WeakLabeller().label(text, tokenize(text))
    ]
    assert spans == [
        ("EMAIL", 'accueil.pneumo@</div><div style="position:absolute;top:30px">ch-exemple.fr'),
        ("PHONE", '+33</div><div style="position:absolute;top:50px">(0)4 76 21 43 65'),
    ]


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("le l2/O4/2O19 à 1Oh", "le 12/04/2019 à 1Oh"),  # a run glued to a letter is a word
        ("Il est venu, SOS, pO2 80, HbA1c, Bilan", "Il est venu, SOS, pO2 80, HbA1c, Bilan"),
        ("poste B833 ou 06 2l 43 6S 87", "poste 8833 ou 06 21 43 65 87"),
    ],
)
def test_figures_a_scan_read_as_letters_are_read_back_inside_runs_of_figures_only(text: str, read: str) -> None:
    assert _numbers.read_look_alikes(text) == read


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789OoIlSBab /.-", max_size=40))
def test_reading_look_alikes_keeps_every_offset_and_every_letter_outside_runs_of_figures(text: str) -> None:
    read = _numbers.read_look_alikes(text)
    assert len(read) == len(text)
    for before, after in zip(text, read):
        assert before == after or (before in "OoIlSB" and after.isdigit())
    assert read.count("a") == text.count("a") and read.count("b") == text.count("b")
