"""Surrogates for the patient metadata columns (``--keep-metadata surrogate``).

Each column goes through the very function its entities in the notes go through, in the patient's
scope, so the surrogate ``lastname`` column is the surname the notes now use, the ``zip`` is a postcode
of the surrogate ``city``, and the ``birthdate`` is shifted by the patient's offset (its year only with
``--birthdate-year``). A value with no safe surrogate (unreadable, or whose surrogate would give back
part of it: :func:`deid_ds.deidentification.surrogates.guard`) is written as null, never kept.
"""

from __future__ import annotations

from deid_ds.deidentification.contacts import surrogate_email, surrogate_phone
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.dates_shift import shift_date_text
from deid_ds.deidentification.names import surrogate_name
from deid_ds.deidentification.overlap import keeps_original
from deid_ds.deidentification.places import surrogate_city, surrogate_street, surrogate_zip
from deid_ds.deidentification.surrogates import guard, readable
from deid_ds.model import PATIENT_FIELDS

_LABELS = {
    "firstname": "PATIENT",
    "lastname": "PATIENT",
    "address": "STR",
    "city": "VILLE",
    "zip": "ZIP",
    "phone": "PHONE",
    "email": "EMAIL",
}


def surrogate_metadata(ctx: Context) -> dict[str, str | None]:
    """The patient's metadata as surrogates (``None`` stays ``None``)."""
    patient = ctx.patient
    out: dict[str, str | None] = dict.fromkeys(PATIENT_FIELDS)
    draws = {
        "firstname": lambda c: surrogate_name(c, patient.firstname, "PATIENT", role="first"),
        "lastname": lambda c: surrogate_name(c, patient.lastname, "PATIENT", role="last"),
        "address": lambda c: surrogate_street(c, patient.address, patient.city),
        "city": lambda c: surrogate_city(c, patient.city),
        "zip": lambda c: surrogate_zip(c, patient.zip, patient.city),
        "phone": lambda c: surrogate_phone(c, patient.phone),
        "email": lambda c: surrogate_email(c, patient.email),
    }
    for name, draw in draws.items():
        value = getattr(patient, name)
        if value and readable(_LABELS[name], value):
            out[name] = guard(ctx, _LABELS[name], value, draw)
    if patient.birthdate:
        birthdate = patient.birthdate.strip()[:10]
        shifted = shift_date_text(ctx, birthdate)
        # unreadable, or left as it was by the shift: dropped rather than kept
        out["birthdate"] = shifted if shifted is not None and not keeps_original(birthdate, shifted, "DATE") else None
    return out
