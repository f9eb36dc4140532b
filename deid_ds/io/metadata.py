"""Reading the patient's metadata as warehouses export it: one reader for every stage.

A birthdate, a postcode or a phone number reaches us in whatever type and layout the export gave it:
``1960-03-12``, ``12/03/1960``, ``19600312`` (a string or an integer), a Parquet date or timestamp; a
postcode ``29200``, ``29 200``, ``29200.0`` (a float column) or ``1000`` (the integer of ``01000``); a phone
``02 99 28 43 21``, ``+33 2 99 28 43 21`` or ``299284321`` (the integer of ``0299284321``). The notes
reader (:mod:`deid_ds.io.notes`) writes each value it can read in one form — the birthdate ISO
``YYYY-MM-DD``, the postcode five digits, a phone that lost its leading ``0`` with it back — so that the
weak labeller, the surrogates and the residual-leak check all compare the same thing. A value none of
these forms reads is kept as it was written, and :func:`unreadable_fields` names it: the leak check
reports such a note "metadata unreadable", never "0 left". Pure functions, no I/O.
"""

from __future__ import annotations

import datetime as dt
import re

from deid_ds.model import PatientMetadata

_INTEGRAL = re.compile(r"^([+-]?\d+)(?:\.0*)?$")  # "29200", "29200.0", "19600312.0"
_ISO = re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ][\d:.]*(?:Z|[+-]\d\d:?\d\d)?)?$")
_DMY = re.compile(r"^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})(?:[T ][\d:.]*)?$")
_EIGHT = re.compile(r"^\d{8}$")
_PHONE_DIGITS = re.compile(r"\d")


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        date = dt.date(year, month, day)
    except ValueError:
        return None
    return date if 1850 <= year <= 2100 else None


def read_birthdate(value: object) -> dt.date | None:
    """The date of a birthdate in one of the forms of the module docstring, else ``None``."""
    if value is None:
        return None
    if isinstance(value, dt.date):  # datetime.date and datetime.datetime (pandas' Timestamp too)
        return _date(value.year, value.month, value.day)
    if isinstance(value, float) and not value.is_integer():
        return None
    text = str(int(value) if isinstance(value, (int, float)) else value).strip()
    integral = _INTEGRAL.match(text)
    if integral:
        text = integral.group(1)
    m = _ISO.match(text)
    if m:
        return _date(int(m[1]), int(m[2]), int(m[3]))
    m = _DMY.match(text)
    if m:
        return _date(int(m[3]), int(m[2]), int(m[1]))
    if _EIGHT.match(text):  # YYYYMMDD, else DDMMYYYY
        return _date(int(text[:4]), int(text[4:6]), int(text[6:])) or _date(
            int(text[4:]), int(text[2:4]), int(text[:2])
        )
    return None


def read_zip(value: object) -> str | None:
    """A French postcode as five digits (module docstring), else ``None``."""
    if value is None or (isinstance(value, float) and not value.is_integer()):
        return None
    text = str(int(value) if isinstance(value, (int, float)) else value).strip()
    text = re.sub(r"[\s\u00a0]", "", text)
    integral = _INTEGRAL.match(text)
    if not integral or integral.group(1).startswith(("+", "-")):
        return None
    digits = integral.group(1)
    if len(digits) == 4 and digits[0] != "0":
        digits = "0" + digits  # 1000: the integer of 01000 (Ain)
    return digits if len(digits) == 5 else None


def read_phone(value: object) -> str | None:
    """A phone number with its leading ``0`` (or ``+``/``00`` prefix) as written, else ``None``.

    A string with a prefix or a leading zero is kept as written (its layout is the export's); a number of
    nine digits, the integer of a ten-digit national number, gets its ``0`` back.
    """
    if value is None or (isinstance(value, float) and not value.is_integer()):
        return None
    text = str(int(value) if isinstance(value, (int, float)) else value).strip()
    integral = _INTEGRAL.match(text)
    if integral:
        text = integral.group(1)
    digits = "".join(_PHONE_DIGITS.findall(text))
    if len(digits) == 9 and digits[0] != "0" and not text.startswith("+"):
        return "0" + digits
    if len(digits) < 8:
        return None
    return text


def read_email(value: object) -> str | None:
    text = str(value).strip() if value is not None else ""
    return text if "@" in text else None


_READERS = {"birthdate": read_birthdate, "zip": read_zip, "phone": read_phone, "email": read_email}


def read_metadata(values: dict[str, str | None]) -> PatientMetadata:
    """The patient of a row's metadata (``values``: text, as read): each readable value in its one form,
    an unreadable one kept as written (:func:`unreadable_fields` names it)."""
    out = dict(values)
    birthdate = read_birthdate(values.get("birthdate"))
    if birthdate is not None:
        out["birthdate"] = birthdate.isoformat()
    for name, read in (("zip", read_zip), ("phone", read_phone)):
        value = read(values.get(name))
        if value is not None:
            out[name] = value
    return PatientMetadata(**out)


def unreadable_fields(patient: PatientMetadata) -> tuple[str, ...]:
    """The fields of ``patient`` that hold a value none of the readers reads (birthdate, zip, phone, email)."""
    return tuple(
        name
        for name, read in _READERS.items()
        if (getattr(patient, name) or "").strip() and read(getattr(patient, name)) is None
    )
