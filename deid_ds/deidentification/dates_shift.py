"""Date shifting: every date of a patient moves by the same keyed number of days, in its own format.

The offset is drawn per patient (scope) from ±15 to ±364 days, never 0 (nor a whole year, which would leave
every day and month as written: ``26/11`` would stay ``26/11``), so the intervals between a
patient's events — length of stay, time since surgery, age at diagnosis — are kept, while the dates
themselves no longer match the record. Each date is re-rendered as it was written:

* numeric ``03/02/21`` stays numeric, with its separator (``/``, ``.``, ``-``, ``|``, ``_``, `` / ``), zero
  padding and year width; ISO stays ISO; eight glued digits stay glued in their order (``29042019``,
  ``20190429``); digits spaced out one by one stay so (``1 2 / 0 3 / 2 0 2 0``); ``1er/06`` keeps its ``1er``;
  blanks for separators stay blanks (``04 09 1947``: two-digit day and month, a four-digit year, as the labeller
  reads them), and a blank slipped beside one slash stays there (``12/04/ 2019``);
* a month in Roman numerals stays Roman (``12.IV.2019``, ``7-XI-2021``, ``23 VI 2017``, ``1er.XII.20``), with its
  separator, day padding and year width;
* written ``3 février 2021`` stays written (abbreviated ``3 févr. 2021`` or ``29-AVR-2019`` stays abbreviated,
  capitals stay capitals, a month without accents stays without, glued ``12MAR2020`` stays glued), ``1er`` (or
  the ``1°`` of hand-written letters) is written for the first of the month;
* in words stays in words (:mod:`deid_ds.deidentification.date_words`: ``trente juillet deux mille vingt-deux``,
  ``douze mars 2020``, ``mille neuf cent quatre-vingt-cinq``);
* a weekday inside the span is recomputed for the new date; abbreviated (``sam.``, ``lun`` without its period)
  it stays abbreviated, and is read as a weekday only before a full date (``mar. 2020`` is March);
* partial dates move coherently: a day and month (``12/03``, ``3 février``) as a date of a fixed
  reference year, a month and year (``février 2021``, ``02/2021``) from the 15th; a year alone moves one year
  in the direction of the patient's shift (``2014`` → ``2015`` for a shift forward: the year its last day, or
  backward its first, reaches), never staying the same year; a day alone (``du [8] au 10 mars``) moves with the
  date it is paired with (``paired``), in that date's month, and is masked without one; the two years of a
  school year or a season (``2018/2019``, the second the next) both move by that same one year (``2019/2020``),
  two years that do not follow each other are masked.

Scanning noise is read through: digits written with look-alike letters inside a run of figures (``2O17``,
``I5/12``, ``0B``, ``l2/O4/2019``: O or o for 0, I or l for 1, S for 5, B for 8) are read as the digits they stand
for, and the shifted date is written with plain digits; a month a scan misread (``26 jui1let 1979``,
``14 novembrc 2015``, ``06 5EP 1929``, ``7 ocotbre 2019``: figures read as letters, then one letter from a month
as :func:`deid_ds.deidentification.date_words.read_month` reads it, or between a day and a year one edit from it,
two for the long names, as the labeller finds it, the nearest month only) is read as that month, and the shifted
date spells its month correctly.

With ``birthdate_year``, a date equal to the patient's metadata birthdate is written as its (shifted)
year only. A span these forms do not read returns ``None``: a time (``01:15``), a score (``15/15``), a
measurement (``11,6``, ``11.6``), an exam number, or a date the shift would take out of the calendar
(``01/01/0001``); the caller masks it rather than invent digits.

With ``--privacy dp`` only the move changes (:func:`move_date`): each distinct value is perturbed on its own in
its unit (:mod:`.dp_dates`) instead of shifted, and rendered in its form the same way.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace

from deid_ds.deidentification.casing import apply_case, case_style, strip_accents
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.date_words import WordsDate, number_words, read_month, read_words, render_words
from deid_ds.deidentification.dp_dates import date_key, perturb_date
from deid_ds.label import _numbers
from deid_ds.label.dates import (
    FOLDED_MONTHS,
    MAX_YEAR,
    MIN_YEAR,
    MONTH_ABBREVIATIONS,
    MONTHS,
    ROMAN_MONTHS,
    SCANNED_LETTERS,
    WEEKDAYS,
    _fold,
    _full_year,
    _month_number,
    near_months,
)

MIN_SHIFT, MAX_SHIFT = 15, 364
#: How French abbreviates each month (``mars``, ``mai``, ``juin``, ``août`` are not abbreviated).
ABBREVIATED = ("janv", "févr", "mars", "avr", "mai", "juin", "juil", "août", "sept", "oct", "nov", "déc")
_REFERENCE_YEAR = 2001  # a day and month with no year: shifted as a date of this (non-leap) year

_S = r"\s"  # blanks, no-break spaces and line breaks (a date may be cut at a line end)
_MONTH_WORDS = sorted(
    {*MONTHS, *MONTH_ABBREVIATIONS, *(strip_accents(m) for m in (*MONTHS, *MONTH_ABBREVIATIONS))}, key=len, reverse=True
)
#: A weekday before the date, full or abbreviated (``sam.``, or without its period as agendas write ``lun``).
_WEEKDAY = re.compile(
    rf"^(?P<weekday>{'|'.join(WEEKDAYS)}|(?:{'|'.join(w[:3] for w in WEEKDAYS)})\.?)(?P<sep>,?{_S}+)", re.IGNORECASE
)
_FIRST = r"1(?:[eE][rR]|ᵉʳ|°)"  # "1er/06/2020", "1ER" in capitals, "1°" as hand-written letters mark the first
_NUMERIC = re.compile(
    rf"^(?P<d>{_FIRST}|\d{{1,2}})(?P<s> ?[/.\-] ?|[|_])(?P<m>\d{{1,2}})(?P<s2>(?P=s))(?P<y>\d{{4}}|\d{{2}})$"
)
#: A blank slipped beside one slash only (``12/04/ 2019``), a four-digit year: the labeller's reading.
_SLIPPED = re.compile(r"^(?P<d>[0-3]?\d)(?P<s> ?/ ?)(?P<m>[01]?\d)(?P<s2> ?/ ?)(?P<y>\d{4})$")
#: Blanks for separators (``04 09 1947``): two-digit day and month and a four-digit year only, as labelled.
_BLANKS = re.compile(r"^(?P<d>[0-3]\d)(?P<s>[ \u00a0])(?P<m>[01]\d)(?P<s2>(?P=s))(?P<y>\d{4})$")
#: A month in Roman numerals between a day and a year with one separator (blanks before a four-digit year only).
_ROMAN = re.compile(
    rf"^(?P<d>{_FIRST}|[0-3]?\d)(?:(?P<s>[.\-/])(?P<m>[IVX]{{1,4}})(?P=s)(?P<y>\d{{4}}|\d{{2}})"
    r"|(?P<bs> )(?P<bm>[IVX]{1,4}) (?P<by>\d{4}))$"
)
#: The two years of a school year or a season (``2018/2019``); read only when the second is the next.
_YEAR_PAIR = re.compile(r"^(?P<y>(?:1[89]|20)\d\d)(?P<s>/)(?P<y2>(?:1[89]|20)\d\d)$")
_ISO = re.compile(r"^(?P<y>\d{4})(?P<s>[\-/.])(?P<m>\d{2})(?P=s)(?P<d>\d{2})$")
_COMPACT = re.compile(r"^(?P<digits>\d{8})$")
_SPACED = re.compile(r"^\d(?: \d)+ [/.] \d(?: \d)+ [/.] \d(?: \d)+$")  # "1 2 / 0 3 / 2 0 2 0"
_DAY_MONTH = re.compile(rf"^(?P<d>{_FIRST}|\d{{1,2}})(?P<s> ?[/.] ?|[|_])(?P<m>\d{{1,2}})$")
_MONTH_YEAR = re.compile(r"^(?P<m>\d{1,2})(?P<s>[/.\-])(?P<y>\d{4})$")
_YEAR = re.compile(r"^(?P<y>(?:1[89]|20)\d\d)$")
_DAY = re.compile(rf"^(?P<d>{_FIRST}|[0-3]?\d)$")
#: A year in words after a month: "deux mille vingt", "mille neuf cent", "dix-neuf cent cinquante-huit".
_YEAR_WORDS = (
    rf"(?:deux{_S}+mille|mille|mil|dix-neuf{_S}+cents?)(?![^\W\d_])"
    rf"(?:(?:-|{_S}+)(?:et(?:-|{_S}+))?{_numbers.NUMBER_WORD})*"
)
_WRITTEN = re.compile(
    rf"^(?:(?P<d>1{_S}?er|1ᵉʳ|1°|1ier|premier|[0-3]?\d|{_numbers.NUMBER_WORDS})(?P<s1>{_S}+|-|(?<=\d)))?"
    rf"(?P<month>{'|'.join(_MONTH_WORDS)})(?P<period>\.)?"
    rf"(?:(?P<s2>,?{_S}+|-|(?<=[^\W\d_.]))(?P<y>\d{{4}}|{_YEAR_WORDS}))?$",
    re.IGNORECASE,
)
#: A written date whose month a scan misspelled (``14 novcmbre 2015``, ``27 0CT 2016``): read with date_words.
_SCANNED_WRITTEN = re.compile(
    rf"^(?P<d>{_FIRST}|[0-3]?\d)(?P<s1>{_S}+)(?P<month>[^\W_].*?)(?:(?P<s2>,?{_S}+)(?P<y>\d{{4}}))?$", re.DOTALL
)
#: A last word holding a figure after a blank: the year, not part of a month cut in two (``SEPT EMBRE``).
_YEAR_IN_MONTH = re.compile(rf"{_S}\S*\d\S*$")
#: Letters a scan writes for digits, read back inside a run of digits (``2O17``, ``I5/12``, ``0B/10``).
_LOOK_ALIKES = str.maketrans({"O": "0", "o": "0", "I": "1", "l": "1", "S": "5", "B": "8"})
_LOOK_ALIKES_IN = re.compile(r"[OoIlSB]")
_DIGIT_RUN = re.compile(r"(?<![^\W\d_])[\dOoIlSB]*\d[\dOoIlSB]*(?![^\W\d_])")


def date_offset(ctx: Context) -> int:
    """The scope's shift in days: keyed, in ±[15, 364], never 0. Kept in the note's memory (its scope's, as
    drawn): its generator was seeded for each date (the note stage of 1,000 export-style notes 2.96 -> 2.89 s:
    docs/benchmarks.md, *deidentify*)."""
    key = f"date_offset:{ctx.scope}"
    offset = ctx.memory.get(key)
    if offset is None:
        rng = ctx.keyring.rng(ctx.scope, "DATE", "offset")
        days = rng.randint(MIN_SHIFT, MAX_SHIFT)
        offset = ctx.memory[key] = days if rng.random() < 0.5 else -days
    return offset  # type: ignore[return-value]


def _shift(ctx: Context, date: dt.date) -> dt.date:
    return date + dt.timedelta(days=date_offset(ctx))


def move_date(ctx: Context, kind: str, date: dt.date) -> dt.date:
    """The surrogate of a parsed date of ``kind``: shifted by the patient's offset, or, with ``--privacy dp``,
    perturbed on its own in its unit (:mod:`.dp_dates`, its cost recorded once per value). Raises
    :class:`OverflowError` when no date of the calendar can be written."""
    if not ctx.privacy.is_dp:
        return _shift(ctx, date)
    privacy = ctx.privacy
    new = perturb_date(ctx.keyring, ctx.scope, kind, date, privacy.epsilon, privacy.reference)
    ctx.spend(*date_key(kind, date), privacy.epsilon)
    return new


def _padded(*fields: str) -> bool:
    """Whether a numeric date pads its day and month: ``03/2/21`` does, ``3/2/21`` and ``21/3/62`` do not."""
    if any(f.startswith("0") for f in fields):
        return True
    return all(len(f) == 2 for f in fields)


def _number(value: int, pad: bool) -> str:
    return f"{value:02d}" if pad else str(value)


def _year(value: int, like: str) -> str:
    return f"{value % 100:02d}" if len(like) == 2 else str(value)


@dataclass(frozen=True)
class _Parsed:
    date: dt.date
    kind: str  # full, day_month, month_year, year, day (a day alone: moved with the date it is paired with)
    match: re.Match[str] | None  # None for a date read in words only (``words``)
    form: str  # numeric, iso, compact (eight digits; "dmy" or "ymd" in ``order``), roman, year_pair, written, words
    words: WordsDate | None = None
    order: str = ""
    spaced: bool = False  # digits spaced out one by one


def _safe_date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _day_of(text: str) -> int:
    digits = re.match(r"\d+", text)
    if digits:
        return int(digits.group())
    if _is_first(text):
        return 1
    return _numbers.value(text) or 1


def _is_first(text: str) -> bool:
    return bool(re.fullmatch(rf"1{_S}?er|1ᵉʳ|1°|1ier|premier", text, re.IGNORECASE))


def _year_of(text: str) -> int:
    return int(text) if text.isdigit() else _numbers.value(text) or 0


def parse_date(text: str) -> _Parsed | None:
    """Read a DATE span (weekday already removed) in one of the forms of the module docstring; a span that
    reads only once its look-alike letters are taken for digits (``2O17``) is read so."""
    parsed = _parse(text)
    if parsed is None and _LOOK_ALIKES_IN.search(text):
        fixed = digits_read(text)
        if fixed != text:
            parsed = _parse(fixed)
    return parsed


def digits_read(text: str) -> str:
    """``text`` with the look-alike letters of its runs of digits read as digits (``2O17`` → ``2017``)."""
    return _DIGIT_RUN.sub(lambda m: m.group().translate(_LOOK_ALIKES), text)


def _compact(digits: str) -> tuple[dt.date, str] | None:
    """Eight glued digits as the labeller reads them: day first (``29042019``), else year first (``20190429``)."""
    for order, (y, m, d) in (
        ("dmy", (digits[4:], digits[2:4], digits[:2])),
        ("ymd", (digits[:4], digits[4:6], digits[6:])),
    ):
        date = _safe_date(int(y), int(m), int(d)) if MIN_YEAR <= int(y) <= MAX_YEAR else None
        if date:
            return date, order
    return None


def _parse(text: str) -> _Parsed | None:
    if _SPACED.match(text):
        inner = _parse(text.replace(" ", ""))
        return replace(inner, spaced=True) if inner else None
    for form, pattern in (("numeric", _NUMERIC), ("iso", _ISO), ("numeric", _SLIPPED), ("numeric", _BLANKS)):
        m = pattern.match(text)
        if m:
            date = _safe_date(_full_year(m["y"]), int(m["m"]), _day_of(m["d"]))
            return _Parsed(date, "full", m, form) if date else None
    m = _ROMAN.match(text)
    if m:
        return _parse_roman(m)
    m = _YEAR_PAIR.match(text)
    if m:  # "2018/2020" is no school year: two dates, not read here
        return _Parsed(dt.date(int(m["y"]), 7, 2), "year", m, "year_pair") if int(m["y2"]) == int(m["y"]) + 1 else None
    m = _COMPACT.match(text)
    if m:
        found = _compact(m["digits"])
        return _Parsed(found[0], "full", m, "compact", order=found[1]) if found else None
    m = _DAY.match(text)
    if m:
        date = _safe_date(_REFERENCE_YEAR, 1, _day_of(m["d"]))
        return _Parsed(date, "day", m, "numeric") if date else None
    m = _DAY_MONTH.match(text)
    if m and m["s"] == "." and len(m["m"]) < 2:
        return None  # "11.6": a measurement (Hb 11.6) far more often than the 11th of June
    if m:
        date = _safe_date(
            2000 if (m["d"], m["m"]) in (("29", "02"), ("29", "2")) else _REFERENCE_YEAR, int(m["m"]), _day_of(m["d"])
        )
        return _Parsed(date, "day_month", m, "numeric") if date else None
    m = _MONTH_YEAR.match(text)
    if m:
        date = _safe_date(int(m["y"]), int(m["m"]), 15)
        return _Parsed(date, "month_year", m, "numeric") if date else None
    m = _YEAR.match(text)
    if m:
        return _Parsed(dt.date(int(m["y"]), 7, 2), "year", m, "numeric")
    return _parse_written(text) or _parse_scanned(text) or _parse_words(text)


def _parse_roman(m: re.Match[str]) -> _Parsed | None:
    """A date whose month is a Roman numeral (``12.IV.2019``, ``23 VI 2017``); ``IIII`` or ``XIV`` is no month."""
    month = m["m"] or m["bm"]
    if month not in ROMAN_MONTHS:
        return None
    year = _full_year(m["y"] or m["by"])
    date = _safe_date(year, ROMAN_MONTHS.index(month) + 1, _day_of(m["d"])) if MIN_YEAR <= year <= MAX_YEAR else None
    return _Parsed(date, "full", m, "roman") if date else None


def _parse_written(text: str) -> _Parsed | None:
    m = _WRITTEN.match(text)
    if m and (not m["d"] or 1 <= _day_of(m["d"]) <= 31) and (not m["y"] or MIN_YEAR <= _year_of(m["y"]) <= MAX_YEAR):
        month = _month_number(m["month"])
        if m["d"] and m["y"]:
            date, kind = _safe_date(_year_of(m["y"]), month, _day_of(m["d"])), "full"
        elif m["d"]:
            date, kind = (
                _safe_date(2000 if (_day_of(m["d"]), month) == (29, 2) else _REFERENCE_YEAR, month, _day_of(m["d"])),
                "day_month",
            )
        elif m["y"]:
            date, kind = _safe_date(_year_of(m["y"]), month, 15), "month_year"
        else:
            return None  # a month alone is not a date
        return _Parsed(date, kind, m, "written") if date else None
    return None


def _parse_scanned(text: str) -> _Parsed | None:
    """A written date whose month a scan misspelled, read again with the month's clean spelling in its case; the
    month's figures read as the letters a scan took them for first (``5EP``, ``N0V``: the labeller's table)."""
    m = _SCANNED_WRITTEN.match(text)
    if m is None or not re.search(r"[^\W\d_]", m["month"]) or _YEAR_IN_MONTH.search(m["month"]):
        return None  # "SEP 202I": a year with a look-alike letter, read by parse_date's look-alike reading
    word = m["month"].translate(SCANNED_LETTERS)
    month = read_month(word) or (_nearest_month(word) if m["y"] else None)  # a day and a year make it a date
    if month is None:
        return None
    original = m["month"]
    folded_months = [strip_accents(m) for m in MONTHS]
    clean = month if original.isascii() or month not in folded_months else MONTHS[folded_months.index(month)]
    if case_style(original) == "upper":
        clean = clean.upper()
    elif original[:1].isupper():
        clean = clean.capitalize()
    rebuilt = f"{m['d']}{m['s1']}{clean}" + (f"{m['s2']}{m['y']}" if m["y"] else "")
    return _parse_written(rebuilt)


def _nearest_month(word: str) -> str | None:
    """The month (folded) a scanned word is nearest to within the labeller's reach (``novmbre``, ``ocotbre``,
    ``avri``: :func:`deid_ds.label.dates.near_months`, as :func:`deid_ds.label.dates.find_dates` finds such a
    date), or None when two months are as near."""
    folded = _fold(word)
    if not folded.isalpha():
        return None
    near = near_months(folded)
    nearest = [number for number, edits in near.items() if edits == min(near.values())]
    return FOLDED_MONTHS[nearest[0] - 1] if len(nearest) == 1 else None


def _parse_words(text: str) -> _Parsed | None:
    """A date in words the written form does not read (glued, cut, a year or a day alone): date_words."""
    words = read_words(text)
    if words is None:
        return None
    day, month, year = words.day, words.month, words.year
    if month is None:
        kind = "year" if year is not None else "day"
        date = dt.date(year, 7, 2) if year is not None else _safe_date(_REFERENCE_YEAR, 1, day or 0)
    elif day is not None and year is not None:
        kind, date = "full", _safe_date(year, month, day)
    elif day is not None:
        kind, date = "day_month", _safe_date(2000 if (day, month) == (29, 2) else _REFERENCE_YEAR, month, day)
    else:
        kind, date = "month_year", _safe_date(year or 0, month, 15)
    return _Parsed(date, kind, None, "words", words) if date else None


def _month_word(month: int, original: str, period: str | None) -> tuple[str, str]:
    """The new month in the original's style: full or abbreviated, case, accents; and its period."""
    folded = strip_accents(original.lower())
    abbreviated = folded not in {strip_accents(m) for m in MONTHS}
    word = ABBREVIATED[month - 1] if abbreviated else MONTHS[month - 1]
    canonical = MONTHS + tuple(MONTH_ABBREVIATIONS)
    written = next((c for c in canonical if strip_accents(c) == folded.rstrip(".")), folded)
    if original.isascii() and not written.isascii():  # "fevrier": this note writes months without accents
        word = strip_accents(word)
    style = case_style(original)
    if style == "upper":
        word = word.upper()
    elif original[:1].isupper():
        word = word[:1].upper() + word[1:]
    keeps_period = bool(period) and abbreviated and word.lower() not in {strip_accents(m) for m in MONTHS} | set(MONTHS)
    return word, "." if keeps_period else ""


def _day_text(day: int, original: str, pad: bool = False) -> str:
    """The new day in the form of ``original``: digits (padded as it was, or ``pad``), ``1er``, or words."""
    if not any(c.isdigit() for c in original):
        written = "premier" if day == 1 else number_words(day, reform="-et-" in original.lower())
        return apply_case(written, original) if case_style(original) != "title" else written.capitalize()
    if day == 1 and _is_first(original):
        return original
    return _number(day, pad or original.startswith("0"))


def _year_text(year: int, original: str) -> str:
    if original.isdigit():
        return str(year)
    folded = strip_accents(original).lower()
    written = number_words(
        year,
        reform=bool(re.search(r"(?:mille|cent|\bet)-", folded)),
        mil=bool(re.search(r"\bmil\b", folded)),
        hundreds=folded.startswith("dix"),
    )
    return apply_case(written, original) if case_style(original) != "title" else written.capitalize()


def _render(parsed: _Parsed, new: dt.date) -> str:
    if parsed.spaced:
        return " ".join(_render(replace(parsed, spaced=False), new))
    if parsed.words is not None:
        return render_words(parsed.words, new.day, new.month, new.year, WEEKDAYS[new.weekday()])
    m = parsed.match
    assert m is not None  # every form but words has its match
    if parsed.form == "written":
        out = []
        if m["d"]:
            # exports pad the day before a dashed or glued month ("03-AOU-2019", "12MAR2020")
            out += [_day_text(new.day, m["d"], pad=len(m["d"]) == 2 and m["s1"] in ("-", "")), m["s1"]]
        word, period = _month_word(new.month, m["month"], m["period"])
        out += [word, period]
        if m["y"]:
            out += [m["s2"], _year_text(new.year, m["y"])]
        return "".join(out)
    if parsed.form == "compact":
        dmy = parsed.order == "dmy"
        return f"{new.day:02d}{new.month:02d}{new.year:04d}" if dmy else f"{new.year:04d}{new.month:02d}{new.day:02d}"
    if parsed.form == "roman":
        sep, year = m["s"] or m["bs"], m["y"] or m["by"]
        return f"{_day_text(new.day, m['d'])}{sep}{ROMAN_MONTHS[new.month - 1]}{sep}{_year(new.year, year)}"
    if parsed.form == "year_pair":
        return f"{new.year}{m['s']}{new.year + 1}"
    if parsed.kind == "day":
        return _day_text(new.day, m["d"])
    if parsed.kind == "year":
        return str(new.year)
    if parsed.kind == "month_year":
        return f"{_number(new.month, _padded(m['m']))}{m['s']}{new.year}"
    if parsed.form == "iso":
        return f"{new.year:04d}{m['s']}{new.month:02d}{m['s']}{new.day:02d}"
    pad = _padded(m["d"], m["m"])
    day = m["d"] if new.day == 1 and _is_first(m["d"]) else _number(new.day, pad)
    if parsed.kind == "day_month":
        return f"{day}{m['s']}{_number(new.month, pad)}"
    return f"{day}{m['s']}{_number(new.month, pad)}{m['s2']}{_year(new.year, m['y'])}"


def _is_birthdate(ctx: Context, date: dt.date) -> bool:
    if not ctx.patient.birthdate:
        return False
    parsed = parse_date(ctx.patient.birthdate.strip()[:10])
    return parsed is not None and parsed.kind == "full" and parsed.date == date


def _paired_date(parsed: _Parsed, paired: str | None) -> _Parsed | None:
    """A day alone read as a day of the month of the date it is paired with (``du [8] au 10 mars``), or None."""
    if paired is None:
        return None
    weekday = _WEEKDAY.match(paired)
    other = parse_date(paired[weekday.end() :] if weekday else paired)
    if other is None or other.kind not in ("full", "day_month"):
        return None
    date = _safe_date(other.date.year, other.date.month, parsed.date.day)
    return replace(parsed, date=date) if date else None


def _year_moved(ctx: Context, year: int) -> dt.date:
    """A year alone: one year in the direction of the shift (the year its last day reaches forward, its first
    day backward: every shift of 15 to 364 days takes it there), so it never stays the same year."""
    return dt.date(year + (1 if date_offset(ctx) > 0 else -1), 7, 2)


def shift_date_text(ctx: Context, text: str, paired: str | None = None) -> str | None:
    """The shifted rendering of a DATE span, or ``None`` when it is not a form read here (``paired``: the
    date a day alone goes with, such as the end of its range; a day alone without one is ``None``)."""
    weekday = _WEEKDAY.match(text)
    body = text[weekday.end() :] if weekday else text
    parsed = parse_date(body)
    abbreviated = weekday is not None and weekday["weekday"].lower().rstrip(".") not in WEEKDAYS
    if weekday and abbreviated and (parsed is None or parsed.kind != "full"):
        weekday, body = None, text  # "mar. 2020" is March: an abbreviated weekday goes with a full date only
        parsed = parse_date(body)
    if parsed is not None and parsed.kind == "day":
        parsed = _paired_date(parsed, paired)
    if parsed is None:
        return None
    try:
        if parsed.kind == "year" and not ctx.privacy.is_dp:
            new = _year_moved(ctx, parsed.date.year)  # never left in its year (dp perturbs years in years)
        else:
            new = move_date(ctx, parsed.kind, parsed.date)
    except (OverflowError, ValueError):  # 01/01/0001 shifted back, 31/12/9999 forward: no date to write, masked
        return None
    if ctx.birthdate_year and parsed.kind == "full" and _is_birthdate(ctx, parsed.date):
        return str(new.year)
    rendered = _render(parsed, new)
    if weekday:
        name = WEEKDAYS[new.weekday()]
        if abbreviated:  # "sam." stays abbreviated, "lun" without its period too
            name = name[:3] + ("." if weekday["weekday"].endswith(".") else "")
        rendered = apply_case(name, weekday["weekday"]) + weekday["sep"] + rendered
        if weekday["weekday"][:1].isupper() and weekday["weekday"][1:2].islower():
            rendered = rendered[:1].upper() + rendered[1:]
    return rendered
