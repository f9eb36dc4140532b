"""Dates and phones as real exports and dictation write them, beyond the single examples of
``cases/date.txt`` and ``cases/phone.txt``: every date written in words and every number dictated in
words is found whole; a phone broken over two lines of a PDF rendering is one span from its first to its
last digit in the HTML, markup between them included (``docs/guidelines.md``: an entity broken over two lines
of a PDF export is one span)."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.label import _numbers
from deid_ds.label.dates import MONTHS, find_dates
from deid_ds.label.labeller import WeakLabeller
from deid_ds.label.phones import find_phones
from deid_ds.segmentation.html_text import html_to_text
from deid_ds.segmentation.tokens import tokenize

_SMALL = "zéro un deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize".split()
_TENS = {2: "vingt", 3: "trente", 4: "quarante", 5: "cinquante", 6: "soixante", 8: "quatre-vingt"}


def spell(n: int) -> str:
    """``n`` (0 to 99) in French words, as a dictation transcript writes it."""
    if n < 17:
        return _SMALL[n]
    if n < 20:
        return "dix-" + _SMALL[n - 10]
    tens, unit = divmod(n, 10)
    if tens in (7, 9):  # soixante-dix..., quatre-vingt-dix...
        base, rest = ("soixante", n - 60) if tens == 7 else ("quatre-vingt", n - 80)
        return f"{base} et onze" if rest == 11 and tens == 7 else f"{base}-{spell(rest)}"
    word = _TENS[tens]
    if unit == 0:
        return word + ("s" if tens == 8 else "")
    if unit == 1 and tens != 8:
        return f"{word} et un"
    return f"{word}-{spell(unit)}"


def spell_year(year: int) -> str:
    if year >= 2000:
        return "deux mille" + (f" {spell(year - 2000)}" if year > 2000 else "")
    return "mille neuf cent" + (f" {spell(year - 1900)}" if year > 1900 else "")


@pytest.mark.parametrize(
    ("words", "number"),
    [("trente et un", 31), ("dix-sept", 17), ("quatre-vingt-dix-neuf", 99), ("soixante et onze", 71),
     ("quatre-vingts", 80), ("deux mille vingt", 2020), ("mil neuf cent cinquante-deux", 1952),
     ("mille neuf cent quatre-vingt-dix-neuf", 1999), ("Zéro", 0), ("DOUZE", 12), ("douze mars", None)],
)  # fmt: skip
def test_a_number_in_words_reads_as_its_value(words: str, number: int | None) -> None:
    assert _numbers.value(words) == number


@settings(max_examples=300, deadline=None)
@given(st.dates(min_value=date(1900, 1, 1), max_value=date(2099, 12, 31)), st.booleans())
def test_every_date_written_in_words_is_one_date(day: date, capitals: bool) -> None:
    words = f"{'premier' if day.day == 1 else spell(day.day)} {MONTHS[day.month - 1]} {spell_year(day.year)}"
    if capitals:
        words = words.upper()
    text = f"Patient né le {words}, adressé par son médecin."
    assert [text[c.start : c.end] for c in find_dates(text)] == [words]


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 9), st.lists(st.integers(0, 99), min_size=4, max_size=4))
def test_every_number_dictated_in_words_is_one_phone(first: int, pairs: list[int]) -> None:
    spoken = " ".join([f"zéro {spell(first)}", *(f"zéro {spell(p)}" if p < 10 else spell(p) for p in pairs)])
    text = f"joignable au {spoken} le matin"
    assert [text[c.start : c.end] for c in find_phones(text)] == [spoken]


def test_a_date_in_words_keeps_its_weekday_and_leaves_its_time_out() -> None:
    text = "vu le lundi douze mars deux mille vingt à 9h41, relu le 2020-03-12T09:41:00"
    assert [text[c.start : c.end] for c in find_dates(text)] == ["lundi douze mars deux mille vingt", "2020-03-12"]


def test_a_phone_broken_over_two_pdf_lines_is_one_span_over_the_markup() -> None:
    html = (
        '<div style="position:absolute;top:10px">Secrétariat : Tél : 02 99 28</div>'
        '<div style="position:absolute;top:30px">43 21 poste 4567</div>'
        "<p>Né le 1 2 / 0 3 / 2 0 2 0, hospitalisé du 8 au 10 mars.</p>"
    )
    parsed = html_to_text(html)
    text = parsed.text
    spans = [
        (c.label, html[slice(*parsed.html_span(c.start, c.end))]) for c in WeakLabeller().label(text, tokenize(text))
    ]
    assert spans == [
        ("PHONE", '02 99 28</div><div style="position:absolute;top:30px">43 21'),
        ("PHONE", "4567"),
        ("DATE", "1 2 / 0 3 / 2 0 2 0"),
        ("DATE", "8"),
        ("DATE", "10 mars"),
    ]


def test_a_range_start_needs_its_second_end_to_be_a_date() -> None:
    text = "du 8 au 10 comprimés, du 8 au 10 mars"
    assert [(text[c.start : c.end], c.source) for c in find_dates(text)] == [
        ("8", "pattern:date_range"),
        ("10 mars", "pattern:date_written"),
    ]
