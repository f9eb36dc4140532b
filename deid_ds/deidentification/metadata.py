"""Surrogates for the patient metadata columns (``--keep-metadata surrogate``).

Each column goes through the very function its entities in the notes go through, in the patient's
scope, so the surrogate ``lastname`` column is the surname the notes now use, the ``zip`` is a postcode
of the surrogate ``city``, and the ``birthdate`` is shifted by the patient's offset (its year only with
``--birthdate-year``).
"""

from __future__ import annotations

from deid_ds.deidentification.contacts import surrogate_email, surrogate_phone
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.dates_shift import shift_date_text
from deid_ds.deidentification.names import surrogate_name
from deid_ds.deidentification.places import surrogate_city, surrogate_street, surrogate_zip
from deid_ds.model import PATIENT_FIELDS


def surrogate_metadata(ctx: Context) -> dict[str, str | None]:
    """The patient's metadata as surrogates (``None`` stays ``None``)."""
    patient = ctx.patient
    out: dict[str, str | None] = dict.fromkeys(PATIENT_FIELDS)
    if patient.firstname:
        out["firstname"] = surrogate_name(ctx, patient.firstname, "PATIENT", role="first")
    if patient.lastname:
        out["lastname"] = surrogate_name(ctx, patient.lastname, "PATIENT", role="last")
    if patient.birthdate:
        birthdate = patient.birthdate.strip()[:10]
        shifted = shift_date_text(ctx, birthdate)
        out["birthdate"] = shifted if shifted is not None else None  # unreadable: dropped rather than kept
    if patient.address:
        out["address"] = surrogate_street(ctx, patient.address)
    if patient.city:
        out["city"] = surrogate_city(ctx, patient.city)
    if patient.zip:
        out["zip"] = surrogate_zip(ctx, patient.zip, patient.city)
    if patient.phone:
        out["phone"] = surrogate_phone(ctx, patient.phone)
    if patient.email:
        out["email"] = surrogate_email(ctx, patient.email)
    return out
