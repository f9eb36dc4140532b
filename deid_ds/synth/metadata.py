"""The patient metadata a clinical data warehouse holds, and how it disagrees with the notes.

The weak labeller matches the CDW's ``firstname``/``lastname``/``address``... against the text; real
metadata is an imperfect key. It holds the birth name where letters use the married name (or the
reverse), every given name where notes use one (``MARIE THERESE`` / ``Thérèse``), capitals without
accents, the occasional typo, the current address where older notes show the previous one, and missing
fields. This module produces that view from a :class:`~deid_ds.synth.world.Patient`.
"""

from __future__ import annotations

import random
import re

from deid_ds.synth.pools import strip_accents
from deid_ds.synth.world import Address, Patient


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


def cdw_metadata(
    patient: Patient, rng: random.Random, noise: float, *, flaws: random.Random | None = None
) -> dict[str, str | None]:
    """The CDW's record of ``patient`` (all strings; ``birthdate`` is an ISO ``YYYY-MM-DD`` string).

    ``flaws`` (``--geography france``) adds, from its own stream, the flaws of real warehouses that people of
    many origins meet: see :func:`add_flaws`. Without it the record is drawn exactly as it always was.
    """
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
    if flaws is not None:
        add_flaws(record, patient, flaws)
    return record


def _address_fields(address: Address, rng: random.Random) -> dict[str, str]:
    street = f"{address.number}{' ' + address.rep.upper() if address.rep else ''} " if address.number else ""
    street = _cased(street + address.street.name, rng)
    city = address.commune.routing_label if rng.random() < 0.5 else address.commune.name
    return {"address": street, "zip": address.postcode, "city": city}


def drop_second_surname(last: str) -> str:
    """``DOS SANTOS FERREIRA`` -> ``DOS SANTOS``, ``Martin-Le Gall`` -> ``Martin``: what a form with one box keeps."""
    if "-" in last:
        return last.split("-")[0]
    words = last.split(" ")
    particles = {"da", "das", "de", "do", "dos", "di", "del", "della", "la", "le", "van", "der", "el", "ben", "ait"}
    if len(words) >= 3 and words[-2].lower() not in particles:
        return " ".join(words[:-1])
    if len(words) == 2 and words[0].lower() not in particles:
        return words[0]
    return last


def glue_particles(last: str) -> str:
    """``N'DIAYE`` -> ``NDIAYE``, ``BEN ALI`` -> ``BENALI``, ``de La Fontaine`` -> ``DeLaFontaine``: particles
    glued by a system that allows no space nor apostrophe."""
    return re.sub(r"[ ']", "", last)


def add_flaws(record: dict[str, str | None], patient: Patient, rng: random.Random) -> None:
    """The flaws of real warehouses, each drawn from ``rng``: the birth name written ``BIRTH EP MARRIED``, a
    dropped second surname, particles glued, accents dropped (capitals or not), compound first names split
    (``Jean Pierre`` for ``Jean-Pierre``), and the previous address still on file."""
    p = patient
    first, last = record["firstname"], record["lastname"]
    if last:
        if p.married_name and rng.random() < 0.2:
            last = f"{p.birth_name} {rng.choice(('EP', 'ép.', 'épouse', 'EPOUSE'))} {p.married_name}"
            last = strip_accents(last).upper() if rng.random() < 0.6 else last
        elif rng.random() < 0.35:
            last = drop_second_surname(last)
        if re.search(r"[ ']", last) and rng.random() < 0.25:
            last = glue_particles(last)
        if rng.random() < 0.25:
            last = strip_accents(last)
    if first:
        if "-" in first and rng.random() < 0.4:
            first = first.replace("-", " ")
        if rng.random() < 0.25:
            first = strip_accents(first)
    record["firstname"], record["lastname"] = first, last
    if p.old_address is not None and record["address"] is not None and rng.random() < 0.5:
        record.update(_address_fields(p.old_address, rng))  # the warehouse never learnt of the move
