"""The patient metadata a clinical data warehouse holds, and how it disagrees with the notes.

The weak labeller matches the CDW's ``firstname``/``lastname``/``address``... against the text; real
metadata is an imperfect key. It holds the birth name where letters use the married name (or the
reverse), every given name where notes use one (``MARIE THERESE`` / ``Thérèse``), capitals without
accents, the occasional typo, the current address where older notes show the previous one, and missing
fields. This module produces that view from a :class:`~deid_ds.synth.world.Patient`.
"""

from __future__ import annotations

import random

from deid_ds.synth.pools import strip_accents
from deid_ds.synth.world import Patient


def typo(text: str, rng: random.Random) -> str:
    """One keyboard slip: a swapped, dropped or doubled letter."""
    letters = [i for i, c in enumerate(text) if c.isalpha()]
    if len(letters) < 3:
        return text
    i = rng.choice(letters[1:-1])
    kind = rng.randrange(3)
    if kind == 0 and i + 1 < len(text) and text[i + 1].isalpha():
        return text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    if kind == 1:
        return text[:i] + text[i + 1 :]
    return text[:i] + text[i] + text[i:]


def _cased(text: str, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.45:
        return strip_accents(text).upper()
    if roll < 0.6:
        return text.upper()
    return text


def cdw_metadata(patient: Patient, rng: random.Random, noise: float) -> dict[str, str | None]:
    """The CDW's record of ``patient`` (all strings; ``birthdate`` is an ISO ``YYYY-MM-DD`` string)."""
    p = patient
    first = p.given_names
    if " " in first and rng.random() < 0.3:
        first = first.replace(" ", ", ")
    if rng.random() < 0.3:
        first = first.replace("-", " ")
    last = p.birth_name if p.married_name and rng.random() < 0.6 else p.usual_last
    first, last = _cased(first, rng), _cased(last, rng)
    if rng.random() < 0.15 * noise:
        first = typo(first, rng)
    if rng.random() < 0.15 * noise:
        last = typo(last, rng)
    birth = p.birthdate
    if birth.day <= 12 and rng.random() < 0.05 * noise:  # day and month swapped at registration
        birth = birth.replace(day=birth.month, month=birth.day)
    a = p.address
    street = ""
    if a.number is not None:
        street = f"{a.number}{' ' + a.rep.upper() if a.rep else ''} "
    street += a.street.name
    street = _cased(street, rng)
    city = a.commune.routing_label if rng.random() < 0.5 else a.commune.name
    phone = p.phone if rng.random() < 0.6 else p.mobile
    if rng.random() < 0.3:
        phone = " ".join(phone[i : i + 2] for i in range(0, 10, 2))
    record: dict[str, str | None] = {
        "firstname": first,
        "lastname": last,
        "birthdate": birth.isoformat(),
        "address": street,
        "zip": a.postcode,
        "city": city,
        "phone": phone,
        "email": p.email if rng.random() < 0.8 else None,
    }
    for name in ("firstname", "birthdate", "address", "zip", "city", "phone", "email"):
        if rng.random() < {"firstname": 0.02, "birthdate": 0.02}.get(name, 0.12) * noise:
            record[name] = None
    return record
