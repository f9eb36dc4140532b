"""One replacement per entity: a mask, or a surrogate chosen by label.

``mask`` writes the label (``[PATIENT]``) or any fixed text (``--mask-format``, ``{label}`` standing
for the label). ``surrogate`` dispatches to the modules of each kind of entity; an entity those cannot
read (a DATE in no known format, a label outside the eight) is still replaced, with its digits keyed and
its letters masked, and counted as a *fallback* in the report so that nothing is left as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deid_ds.deidentification.contacts import surrogate_email, surrogate_phone
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.dates_shift import shift_date_text
from deid_ds.deidentification.names import surrogate_name
from deid_ds.deidentification.places import keyed_digits, surrogate_city, surrogate_street, surrogate_zip
from deid_ds.kb.normalize import fold_key

DEFAULT_MASK = "[{label}]"
MODES = ("mask", "surrogate")


@dataclass(frozen=True, slots=True)
class Replacement:
    text: str
    fallback: str | None = None  # why the generic replacement was used, when it was


def mask(label: str, mask_format: str = DEFAULT_MASK) -> Replacement:
    return Replacement(mask_format.replace("{label}", label))


def _fallback(ctx: Context, label: str, text: str, reason: str) -> Replacement:
    digits_only = keyed_digits(ctx, ("FALLBACK", label, fold_key(text)), text) if any(c.isdigit() for c in text) else text
    masked = re.sub(r"[^\W\d_]+", lambda m: "X" * len(m.group()), digits_only)
    return Replacement(masked, reason)


def surrogate(ctx: Context, label: str, text: str, paired_city: str | None = None) -> Replacement:
    """The surrogate of ``text`` labelled ``label`` (``paired_city``: the city written next to a ZIP)."""
    if label in ("PATIENT", "DOCTOR"):
        return Replacement(surrogate_name(ctx, text, label))
    if label == "DATE":
        shifted = shift_date_text(ctx, text)
        return Replacement(shifted) if shifted is not None else _fallback(ctx, label, text, "date format not read")
    if label == "PHONE":
        return Replacement(surrogate_phone(ctx, text))
    if label == "EMAIL":
        return Replacement(surrogate_email(ctx, text))
    if label == "ZIP":
        return Replacement(surrogate_zip(ctx, text, paired_city))
    if label == "VILLE":
        return Replacement(surrogate_city(ctx, text))
    if label == "STR":
        return Replacement(surrogate_street(ctx, text))
    return _fallback(ctx, label, text, "label not one of the eight")
