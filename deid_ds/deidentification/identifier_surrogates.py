"""What replaces a direct identifier (:mod:`deid_ds.deidentification.identifiers`): a mask or a keyed surrogate.

Masked, the identifier becomes the mask format with its kind as the label (``[NIR]``, ``[IPP]``).
Surrogates keep the shape of the original (its length, its letters, its spaces, dots and dashes) and
are keyed like every other surrogate (:mod:`deid_ds.deidentification.keyed`): the same original gets
the same surrogate everywhere in its scope, the patient for a patient's numbers, the whole document set
for a professional's (``RPPS``, ``ADELI``, like doctors' names).

* ``NIR``/``INS``: a valid NIR (its key holds). The sex digit is kept (the surrogate names keep the
  person's sex, so the note stays coherent); the birth year and month are the patient's *shifted* ones
  (their metadata birthdate moved by the patient's date offset when the NIR carries that birthdate, else
  the NIR's own month and year moved by the same offset; with ``--privacy dp`` their ε·d-private surrogates,
  the ones the notes write); the birthplace (département, commune) and the
  order number are keyed draws (Corsica's ``2A``/``2B`` among them). A NIR written without its key gets
  none;
* ``RPPS``: 11 digits starting with ``1`` whose Luhn checksum holds (after an ``8`` when the original had
  one); ``ADELI``: 9 keyed digits, the last a Luhn check digit;
* ``IBAN``: a valid IBAN of the same country and length (its check digits computed, and a French one's RIB
  key too: ``FR``, ``MC``), the original's digits and letters drawn again one for one, its grouping kept; a
  French RIB without its country (``30006 00001 12345678901 89``): keyed digits with a valid RIB key;
* the record numbers (``IPP``, ``NDA``, ``DOSSIER``, ``EXAMEN``), the mutual's numbers (``MUTUELLE``), the
  identity documents' (``PIECE_IDENTITE``) and any value of an unusual shape: keyed digits in place of the
  original's digits, letters and separators kept.

A surrogate is never its original, nor another identifier of the note.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import replace

from deid_ds.deidentification.context import DOCTOR_SCOPE, Context
from deid_ds.deidentification.dates_shift import move_date, parse_date
from deid_ds.deidentification.identifiers import (
    IBAN_LENGTHS,
    NIR_KINDS,
    PROFESSIONAL_KINDS,
    compact,
    iban_check_digits,
    luhn_digit,
    nir_key,
    rib_key,
)
from deid_ds.deidentification.places import keyed_digits
from deid_ds.deidentification.surrogates import DEFAULT_MASK, mask

#: ``ctx.memory`` key of the note's identifiers (compact values) that no surrogate may be.
NOTE_IDENTIFIERS = "identifiers of the note"
_DEPARTMENTS = tuple(f"{d:02d}" for d in range(1, 96) if d != 20) + ("2A", "2B")
_ATTEMPTS = 16
#: Countries whose IBAN holds a French RIB (bank, branch, account, key): its key is computed too.
_RIB_COUNTRIES = frozenset({"FR", "MC"})
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def identifier_replacement(ctx: Context, kind: str, original: str, mode: str, mask_format: str = DEFAULT_MASK) -> str:
    """The text that replaces identifier ``original`` of ``kind`` (module docstring)."""
    if mode == "mask":
        return mask(kind, mask_format).text
    if kind in PROFESSIONAL_KINDS:
        ctx = replace(ctx, scope=DOCTOR_SCOPE)
    taken = ctx.memory.get(NOTE_IDENTIFIERS, frozenset())
    key = compact(original)
    for attempt in range(_ATTEMPTS):
        drawn = _draw(ctx if attempt == 0 else replace(ctx, salt=f"identifier {attempt}"), kind, original, key)
        new = compact(drawn)
        if new != key and new not in taken:  # type: ignore[operator]
            return drawn
    return mask(kind, mask_format).text  # cannot happen: 16 keyed draws of many digits


def _draw(ctx: Context, kind: str, original: str, key: str) -> str:
    if kind in NIR_KINDS and len(key) in (13, 15) and key[:1] in "123478" and key[1:5].isdigit():
        return _written(original, _nir(ctx, key))
    if kind == "RPPS" and (len(key) == 11 or (len(key) == 12 and key.startswith("8"))) and key.isdigit():
        prefix, core = ("8", key[1:]) if len(key) == 12 else ("", key)
        rng = ctx.keyring.rng(ctx.scope, *ctx.parts("RPPS", core))
        body = core[0] + "".join(rng.choice("0123456789") for _ in range(9))
        return _written(original, prefix + body + luhn_digit(body))
    if kind == "ADELI" and len(key) == 9 and key.isdigit():
        rng = ctx.keyring.rng(ctx.scope, *ctx.parts("ADELI", key))
        body = "".join(rng.choice("0123456789") for _ in range(8))
        return _written(original, body + luhn_digit(body))
    if kind == "IBAN" and (iban := _iban(ctx, key)) is not None:
        return _written(original, iban)
    family = "NIR" if kind in NIR_KINDS else kind if kind in PROFESSIONAL_KINDS else "NUMBER"
    return keyed_digits(ctx, ("ID", family, key), original)


def _written(original: str, chars: str) -> str:
    """``chars`` written in the layout of ``original``: its letters and digits replaced one for one."""
    it = iter(chars)
    return "".join(next(it) if c.isalnum() else c for c in original)


def _iban(ctx: Context, key: str) -> str | None:
    """A valid IBAN of the country and length of ``key`` (compact, upper case), or a valid French RIB for a RIB
    (23 characters, the first ten and last two digits); ``None`` for another shape."""
    rng = ctx.keyring.rng(ctx.scope, *ctx.parts("IBAN", key))
    if IBAN_LENGTHS.get(key[:2]) == len(key) and key[2:4].isdigit():
        country, bban = key[:2], _drawn_like(rng, key[4:])
        if country in _RIB_COUNTRIES and _is_rib(bban):
            bban = bban[:21] + rib_key(bban)
        return country + iban_check_digits(country, bban) + bban
    if _is_rib(key):
        body = _drawn_like(rng, key[:21])
        return body + rib_key(body)
    return None


def _is_rib(chars: str) -> bool:
    return len(chars) == 23 and chars[:10].isdigit() and chars[21:].isdigit() and chars[10:21].isalnum()


def _drawn_like(rng: random.Random, chars: str) -> str:
    """A keyed draw in the shape of ``chars``: a digit for a digit, an upper-case letter for a letter."""
    return "".join(rng.choice(_UPPER) if c.isalpha() else rng.choice("0123456789") for c in chars)


def _birth(ctx: Context, yy: str, mm: str) -> tuple[str, str]:
    """The shifted birth year and month of a NIR (module docstring). Only two-digit years come out, so the
    century read is a fixed rule (``30`` and after: the 1900s), never today's date. With ``--privacy dp`` the
    birthdate (or the month, or the year) takes its ε·d-private surrogate, the one the notes write for it."""
    month = int(mm)
    known_month = 1 <= month <= 12
    parsed = parse_date(ctx.patient.birthdate.strip()[:10]) if ctx.patient.birthdate else None
    known = parsed.date if parsed is not None and parsed.kind == "full" else None
    if known is not None and known.year % 100 == int(yy) and (known.month == month or not known_month):
        moved = move_date(ctx, "full", known)
    else:
        year = (1900 if int(yy) >= 30 else 2000) + int(yy)
        moved = (
            move_date(ctx, "month_year", dt.date(year, month, 15))
            if known_month
            else move_date(ctx, "year", dt.date(year, 7, 2))
        )
    # a month of 20 or more (an unknown birth month) is kept as it is
    return f"{moved.year % 100:02d}", f"{moved.month:02d}" if known_month else mm


def _nir(ctx: Context, key: str) -> str:
    """A valid NIR of the same sex, the shifted birth year and month, a keyed birthplace and order number."""
    yy, mm = _birth(ctx, key[1:3], key[3:5])
    rng = ctx.keyring.rng(ctx.scope, *ctx.parts("NIR", key[:13]))
    department = rng.choice(_DEPARTMENTS)
    commune = f"{rng.randrange(1, 990):03d}"
    order = f"{rng.randrange(1, 1000):03d}"
    body = f"{key[0]}{yy}{mm}{department}{commune}{order}"
    return body + nir_key(body) if len(key) == 15 else body
