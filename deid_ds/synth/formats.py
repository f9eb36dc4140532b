"""How dates, phone numbers, names and addresses are written in notes: every format of the guidelines.

Templates ask for a *value* in a *style*; the style is drawn by the caller so that the mix of formats
is a property of the document family (a secretary's template always writes ``03/02/2021``, a
dictated letter writes ``3 février 2021``). Everything here returns plain strings; where a piece is an
entity is decided by the caller, through :class:`Ent` fragments.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import date

from deid_ds.synth.pools import strip_accents
from deid_ds.synth.world import STREET_TYPES, Address

MONTHS = (
    "janvier",
    "février",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
)
MONTHS_ABBR = ("janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc.")
WEEKDAYS = ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")


@dataclass(frozen=True, slots=True)
class Ent:
    """An entity fragment: ``value`` is exactly how it reads in the extracted text."""

    label: str
    value: str
    nbsp: bool = False


@dataclass(frozen=True, slots=True)
class Markup:
    """A markup fragment (tags), copied verbatim into the HTML."""

    html: str


Fragment = str | Ent | Markup


# -- dates ----------------------------------------------------------------------------------------------
#: Full-date styles (day, month and year), all in the guidelines' DATE examples or seen in notes.
FULL_DATE_STYLES = (
    "dmy_slash",
    "dmy_slash",
    "dmy_slash",
    "dmy_slash_short",
    "dmy_dot",
    "dmy_dot_short",
    "dmy_dash",
    "iso",
    "dmy_nopad",
    "long",
    "long",
    "long_pad",
    "long_upper",
    "long_abbr",
    "weekday_long",
    "weekday_slash",
)
PARTIAL_DATE_STYLES = ("daymonth", "weekday_daymonth", "monthyear", "monthyear_num", "daymonth_num")


def _day(d: date) -> str:
    return "1er" if d.day == 1 else str(d.day)


def format_date(d: date, style: str) -> str:
    """Write ``d`` in ``style`` (see :data:`FULL_DATE_STYLES` and :data:`PARTIAL_DATE_STYLES`)."""
    m = MONTHS[d.month - 1]
    match style:
        case "dmy_slash":
            return f"{d.day:02d}/{d.month:02d}/{d.year}"
        case "dmy_slash_short":
            return f"{d.day:02d}/{d.month:02d}/{d.year % 100:02d}"
        case "dmy_dot":
            return f"{d.day:02d}.{d.month:02d}.{d.year}"
        case "dmy_dot_short":
            return f"{d.day:02d}.{d.month:02d}.{d.year % 100:02d}"
        case "dmy_dash":
            return f"{d.day:02d}-{d.month:02d}-{d.year}"
        case "iso":
            return d.isoformat()
        case "dmy_nopad":
            return f"{d.day}/{d.month}/{d.year}"
        case "long":
            return f"{_day(d)} {m} {d.year}"
        case "long_pad":
            return f"{d.day:02d} {m} {d.year}"
        case "long_upper":
            return f"{d.day} {m.upper()} {d.year}"
        case "long_abbr":
            return f"{d.day} {MONTHS_ABBR[d.month - 1]} {d.year}"
        case "weekday_long":
            return f"{WEEKDAYS[d.weekday()]} {_day(d)} {m} {d.year}"
        case "weekday_slash":
            return f"{WEEKDAYS[d.weekday()]} {d.day:02d}/{d.month:02d}/{d.year}"
        case "daymonth":
            return f"{_day(d)} {m}"
        case "weekday_daymonth":
            return f"{WEEKDAYS[d.weekday()]} {_day(d)} {m}"
        case "monthyear":
            return f"{m} {d.year}"
        case "monthyear_num":
            return f"{d.month:02d}/{d.year}"
        case "daymonth_num":
            return f"{d.day:02d}/{d.month:02d}"
        case "year":
            return str(d.year)
    raise ValueError(f"unknown date style {style!r}")


# -- phones ---------------------------------------------------------------------------------------------
PHONE_STYLES = ("spaced", "spaced", "spaced", "dotted", "dotted", "compact", "intl", "intl0", "dashed", "intl_compact")


def format_phone(digits: str, style: str) -> str:
    """Write a ten-digit French number (``0299284321``) in ``style``."""
    pairs = [digits[i : i + 2] for i in range(0, 10, 2)]
    match style:
        case "spaced":
            return " ".join(pairs)
        case "dotted":
            return ".".join(pairs)
        case "dashed":
            return "-".join(pairs)
        case "compact":
            return digits
        case "intl":
            return "+33 " + digits[1] + " " + " ".join(pairs[1:])
        case "intl0":
            return "+33 (0)" + digits[1] + " " + " ".join(pairs[1:])
        case "intl_compact":
            return "+33" + digits[1:]
    raise ValueError(f"unknown phone style {style!r}")


# -- names ----------------------------------------------------------------------------------------------
def initials(first: str) -> str:
    """``Jean-Pierre`` -> ``J.-P.``, ``Yann`` -> ``Y.``, ``Marie Anne`` -> ``M.``."""
    first = first.split(" ")[0]
    return "-".join(part[0].upper() + "." for part in first.split("-") if part)


def upper(text: str) -> str:
    return text.upper()


NAME_STYLES = (
    "First LAST",
    "First LAST",
    "LAST First",
    "First Last",
    "Last First",
    "F. LAST",
    "F. Last",
    "LAST",
    "Last",
    "FIRST LAST",
)


def format_name(first: str, last: str, style: str) -> str:
    """Write a person's name in ``style`` (``First LAST``, ``F. Last``, ``LAST``...)."""
    match style:
        case "First LAST":
            return f"{first} {upper(last)}"
        case "LAST First":
            return f"{upper(last)} {first}"
        case "First Last":
            return f"{first} {last}"
        case "Last First":
            return f"{last} {first}"
        case "F. LAST":
            return f"{initials(first)} {upper(last)}"
        case "F. Last":
            return f"{initials(first)} {last}"
        case "LAST":
            return upper(last)
        case "Last":
            return last
        case "FIRST LAST":
            return f"{upper(first)} {upper(last)}"
        case "First":
            return first
    raise ValueError(f"unknown name style {style!r}")


def dictation_initials(first: str, last: str) -> str:
    """``Yann KERBRAT`` -> ``YK`` (the ``YK/CL`` line at the foot of typed letters)."""
    letters = [p[0] for p in re.split(r"[- ]", first) if p][:2] + [
        p[0] for p in re.split(r"[- ']", last) if p and p[0].isupper()
    ][:1]
    return strip_accents("".join(letters)).upper() or "X"


def civility(sex: str, style: str = "short") -> str:
    if style == "long":
        return "Madame" if sex == "F" else "Monsieur"
    return "Mme" if sex == "F" else "M."


# -- addresses ------------------------------------------------------------------------------------------
def street_line(address: Address, rng: random.Random, *, caps: bool = False, comma: bool | None = None) -> str:
    """The numbered street line, as one STR value: ``12 bis, avenue du Général de Gaulle``."""
    street = address.street
    if street.is_lieu_dit:
        prefix = rng.choice(("Lieu-dit ", "lieu-dit ", "", "")) if address.number is None else ""
        line = f"{prefix}{street.label}"
    else:
        forms = STREET_TYPES[street.type_word][1]
        type_word = rng.choice((street.type_word,) + forms)
        line = f"{type_word} {street.label}"
    if address.number is not None:
        number = str(address.number) + (f"-{address.number_to}" if address.number_to else "")  # 47-83: one STR
        number = f"{number}{' ' + address.rep if address.rep else ''}"
        sep = ", " if (comma if comma is not None else rng.random() < 0.2) else " "
        line = f"{number}{sep}{line}"
    return upper(line) if caps else line


def city_form(address_or_name: Address | str, rng: random.Random, *, caps: bool | None = None) -> str:
    """A commune as written: ``Saint-Brieuc``, ``SAINT-BRIEUC`` or La Poste's ``ST BRIEUC``."""
    if isinstance(address_or_name, Address):
        commune = address_or_name.commune
        if address_or_name.street.former and rng.random() < 0.3:  # people keep their former commune's name
            name = address_or_name.street.former
            return upper(name) if caps or (caps is None and rng.random() < 0.5) else name
        if caps is not False and rng.random() < 0.15:
            return commune.routing_label
        name = commune.name
    else:
        name = address_or_name
    if caps or (caps is None and rng.random() < 0.45):
        return upper(name)
    return name


def arrondissement_form(address: Address, rng: random.Random, *, caps: bool = False) -> str:
    """How an arrondissement follows its city: ``13e``, ``13ème``, ``1er``, ``8`` (``LYON 8``); never in the VILLE
    span (guidelines: ``[Paris] 13e``). ``""`` for a commune that has none, with no draw."""
    n = address.commune.arrondissement
    if not n:
        return ""
    forms = (f"{n}er" if n == 1 else f"{n}e", "1er" if n == 1 else f"{n}ème", str(n))
    form = rng.choice(forms if address.commune.name != "Lyon" or caps else forms + (str(n),))
    return form.upper() if caps else form


def place_lines(address: Address) -> list[str]:
    """The named places of an address line, each its own STR value: ``Bâtiment C``, ``Escalier 2``,
    ``Quartier Bois-Joli`` (empty for an address that has none)."""
    return [part for part in (address.building, address.staircase, address.place) if part]
