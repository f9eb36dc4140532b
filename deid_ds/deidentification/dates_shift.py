"""Date shifting: every date of a patient moves by the same keyed number of days, in its own format.

The offset is drawn per patient (scope) from ±15 to ±365 days, never 0, so the intervals between a
patient's events — length of stay, time since surgery, age at diagnosis — are kept, while the dates
themselves no longer match the record. Each date is re-rendered as it was written:

* numeric ``03/02/21`` stays numeric, with its separator, zero padding and year width; ISO stays ISO;
* written ``3 février 2021`` stays written (abbreviated ``3 févr. 2021`` stays abbreviated, capitals stay
  capitals, a month without accents stays without), ``1er`` is written for the first of the month;
* a weekday inside the span is recomputed for the new date;
* partial dates move coherently: a day and month (``12/03``, ``3 février``) as a date of a fixed
  reference year, a month and year (``février 2021``, ``02/2021``) from the 15th, a year alone from 2 July.

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
from dataclasses import dataclass

from deid_ds.deidentification.casing import apply_case, case_style, strip_accents
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.dp_dates import date_key, perturb_date
from deid_ds.label.dates import MONTH_ABBREVIATIONS, MONTHS, WEEKDAYS, _full_year, _month_number

MIN_SHIFT, MAX_SHIFT = 15, 365
#: How French abbreviates each month (``mars``, ``mai``, ``juin``, ``août`` are not abbreviated).
ABBREVIATED = ("janv", "févr", "mars", "avr", "mai", "juin", "juil", "août", "sept", "oct", "nov", "déc")
_REFERENCE_YEAR = 2001  # a day and month with no year: shifted as a date of this (non-leap) year

_S = r"[ \t\u00a0\u202f]"
_MONTH_WORDS = sorted(
    {*MONTHS, *MONTH_ABBREVIATIONS, *(strip_accents(m) for m in (*MONTHS, *MONTH_ABBREVIATIONS))}, key=len, reverse=True
)
_WEEKDAY = re.compile(rf"^(?P<weekday>{'|'.join(WEEKDAYS)})(?P<sep>,?{_S}+)", re.IGNORECASE)
_NUMERIC = re.compile(r"^(?P<d>\d{1,2})(?P<s>[/.\-])(?P<m>\d{1,2})(?P=s)(?P<y>\d{4}|\d{2})$")
_ISO = re.compile(r"^(?P<y>\d{4})(?P<s>[\-/.])(?P<m>\d{2})(?P=s)(?P<d>\d{2})$")
_DAY_MONTH = re.compile(r"^(?P<d>\d{1,2})(?P<s>[/.])(?P<m>\d{1,2})$")
_MONTH_YEAR = re.compile(r"^(?P<m>\d{1,2})(?P<s>[/.\-])(?P<y>\d{4})$")
_YEAR = re.compile(r"^(?P<y>(?:1[89]|20)\d\d)$")
_WRITTEN = re.compile(
    rf"^(?:(?P<d>1{_S}?er|1ᵉʳ|1ier|premier|[0-3]?\d)(?P<s1>{_S}+))?(?P<month>{'|'.join(_MONTH_WORDS)})(?P<period>\.)?"
    rf"(?:(?P<s2>,?{_S}+)(?P<y>\d{{4}}))?$",
    re.IGNORECASE,
)


def date_offset(ctx: Context) -> int:
    """The scope's shift in days: keyed, in ±[15, 365], never 0."""
    rng = ctx.keyring.rng(ctx.scope, "DATE", "offset")
    days = rng.randint(MIN_SHIFT, MAX_SHIFT)
    return days if rng.random() < 0.5 else -days


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
    kind: str  # full, day_month, month_year, year
    match: re.Match[str]
    form: str  # numeric, iso, written


def _safe_date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _day_of(text: str) -> int:
    digits = re.match(r"\d+", text)
    return int(digits.group()) if digits else 1


def parse_date(text: str) -> _Parsed | None:
    """Read a DATE span (weekday already removed) in one of the forms of the module docstring."""
    for form, pattern in (("numeric", _NUMERIC), ("iso", _ISO)):
        m = pattern.match(text)
        if m:
            date = _safe_date(_full_year(m["y"]), int(m["m"]), int(m["d"]))
            return _Parsed(date, "full", m, form) if date else None
    m = _DAY_MONTH.match(text)
    if m and m["s"] == "." and len(m["m"]) < 2:
        return None  # "11.6": a measurement (Hb 11.6) far more often than the 11th of June
    if m:
        date = _safe_date(
            2000 if (m["d"], m["m"]) in (("29", "02"), ("29", "2")) else _REFERENCE_YEAR, int(m["m"]), int(m["d"])
        )
        return _Parsed(date, "day_month", m, "numeric") if date else None
    m = _MONTH_YEAR.match(text)
    if m:
        date = _safe_date(int(m["y"]), int(m["m"]), 15)
        return _Parsed(date, "month_year", m, "numeric") if date else None
    m = _YEAR.match(text)
    if m:
        return _Parsed(dt.date(int(m["y"]), 7, 2), "year", m, "numeric")
    m = _WRITTEN.match(text)
    if m:
        month = _month_number(m["month"])
        if m["d"] and m["y"]:
            date, kind = _safe_date(int(m["y"]), month, _day_of(m["d"])), "full"
        elif m["d"]:
            date, kind = (
                _safe_date(2000 if (_day_of(m["d"]), month) == (29, 2) else _REFERENCE_YEAR, month, _day_of(m["d"])),
                "day_month",
            )
        elif m["y"]:
            date, kind = _safe_date(int(m["y"]), month, 15), "month_year"
        else:
            return None  # a month alone is not a date
        return _Parsed(date, kind, m, "written") if date else None
    return None


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


def _render(parsed: _Parsed, new: dt.date) -> str:
    m = parsed.match
    if parsed.form == "written":
        out = []
        if m["d"]:
            if new.day == 1:
                out.append(m["d"] if _day_of(m["d"]) == 1 and not m["d"].isdigit() else "1er")
            else:
                out.append(_number(new.day, m["d"].startswith("0")))
            out.append(m["s1"])
        word, period = _month_word(new.month, m["month"], m["period"])
        out += [word, period]
        if m["y"]:
            out += [m["s2"], str(new.year)]
        return "".join(out)
    if parsed.kind == "year":
        return str(new.year)
    if parsed.kind == "month_year":
        return f"{_number(new.month, _padded(m['m']))}{m['s']}{new.year}"
    if parsed.form == "iso":
        return f"{new.year:04d}{m['s']}{new.month:02d}{m['s']}{new.day:02d}"
    pad = _padded(m["d"], m["m"])
    if parsed.kind == "day_month":
        return f"{_number(new.day, pad)}{m['s']}{_number(new.month, pad)}"
    return f"{_number(new.day, pad)}{m['s']}{_number(new.month, pad)}{m['s']}{_year(new.year, m['y'])}"


def _is_birthdate(ctx: Context, date: dt.date) -> bool:
    if not ctx.patient.birthdate:
        return False
    parsed = parse_date(ctx.patient.birthdate.strip()[:10])
    return parsed is not None and parsed.kind == "full" and parsed.date == date


def shift_date_text(ctx: Context, text: str) -> str | None:
    """The shifted rendering of a DATE span, or ``None`` when it is not a form read here."""
    weekday = _WEEKDAY.match(text)
    body = text[weekday.end() :] if weekday else text
    parsed = parse_date(body)
    if parsed is None:
        return None
    try:
        new = move_date(ctx, parsed.kind, parsed.date)
    except OverflowError:  # 01/01/0001 shifted back, 31/12/9999 forward: no date to write, masked
        return None
    if ctx.birthdate_year and parsed.kind == "full" and _is_birthdate(ctx, parsed.date):
        return str(new.year)
    rendered = _render(parsed, new)
    if weekday:
        rendered = apply_case(WEEKDAYS[new.weekday()], weekday["weekday"]) + weekday["sep"] + rendered
        if weekday["weekday"][:1].isupper() and weekday["weekday"][1:2].islower():
            rendered = rendered[:1].upper() + rendered[1:]
    return rendered
