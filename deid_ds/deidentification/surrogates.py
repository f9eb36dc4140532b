"""One replacement per entity: a mask, or a surrogate chosen by label.

``mask`` writes the label (``[PATIENT]``) or any fixed text (``--mask-format``, ``{label}`` standing
for the label). ``surrogate`` dispatches to the modules of each kind of entity.

**Never invent, never leak.** A surrogate stands for a value of its label; when the span does not read
as one (a DATE ``15/15``, ``11,6`` or ``01:15`` predicted by mistake, a PHONE of three digits, an EMAIL
without ``@``, a name without a letter, a label outside the eight), inventing one would write random
digits into the clinical content, so the span is *masked* (with the mask format) and the reason is kept
as a *fallback* (audit row, per-document count, report). Every surrogate then passes one final guard,
:func:`guard`: if it equals its original or carries one of the original's words
(:func:`deid_ds.deidentification.overlap.keeps_original`), or is another entity of the note or carries
one of its words (:class:`deid_ds.deidentification.overlap.NoteOriginals`), it is drawn again with another keyed
salt, at most :data:`ATTEMPTS` times, and masked if none passes. A date is never drawn again (another offset
would break the intervals between the patient's dates): a date the shift leaves as it was (a day alone
moved by a whole month) is masked, and so is a day alone that no date goes with (``paired_date``: a bare
``22`` is a date only as the first end of a range, ``du [22] au 25 mars``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache, partial

from deid_ds.deidentification.contacts import is_email, is_phone, surrogate_email, surrogate_phone
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.dates_shift import digits_read, shift_date_text
from deid_ds.deidentification.names import name_units, surrogate_name
from deid_ds.deidentification.overlap import holds_phrase, keeps_original
from deid_ds.deidentification.phone_words import phone_digits, rewrite_phone_words
from deid_ds.deidentification.places import is_postcode, surrogate_city, surrogate_street, surrogate_zip
from deid_ds.errors import InputError

DEFAULT_MASK = "[{label}]"
MODES = ("mask", "surrogate")
#: Draws of a surrogate (the first, then salted ones) before it is masked instead.
ATTEMPTS = 8
_LETTER = re.compile(r"[^\W\d_]")

#: Fallback reasons (audit ``fallback`` column, report): what could not be replaced, and that it was masked.
UNPARSED_DATE = "unparsed_date->mask"
UNCHANGED_DATE = "unchanged_date->mask"
UNREADABLE = "unreadable_{label}->mask"
UNKNOWN_LABEL = "unknown_label->mask"
KEPT_ORIGINAL = "kept_original->mask"


@dataclass(frozen=True, slots=True)
class Replacement:
    text: str
    fallback: str | None = None  # why the span was masked instead of given a surrogate, when it was


def check_mask_format(mask_format: str) -> None:
    """Refuse a ``--mask-format`` that renders to nothing visible: masked entities would vanish without a trace."""
    if "{label}" not in mask_format and not mask_format.strip():
        raise InputError(
            f"--mask-format {mask_format!r}: renders to an empty or blank text, so masked entities would be deleted "
            "without a trace; give a visible text such as '[{label}]' or 'XXXX'"
        )


def mask(label: str, mask_format: str = DEFAULT_MASK) -> Replacement:
    return Replacement(mask_format.replace("{label}", label))


def _masked(label: str, mask_format: str, reason: str) -> Replacement:
    return Replacement(mask(label, mask_format).text, reason)


def readable(label: str, text: str) -> bool:
    """Whether ``text`` reads as a value of ``label`` that a surrogate can stand for (dates: see below)."""
    if label in ("PATIENT", "DOCTOR", "VILLE"):
        return bool(_LETTER.search(text))
    if label == "PHONE":
        return is_phone(text) or is_phone(phone_digits(text) or "")
    if label == "EMAIL":
        return is_email(text)
    if label == "ZIP":
        return is_postcode(text)
    return True


def _draw(ctx: Context, label: str, text: str, paired_city: str | None, initials: bool = False) -> str:
    role = "initials" if initials else None
    draws: dict[str, Callable[[], str]] = {
        "PATIENT": lambda: surrogate_name(ctx, text, label, role),
        "DOCTOR": lambda: surrogate_name(ctx, text, label, role),
        "PHONE": lambda: (
            surrogate_phone(ctx, text) if is_phone(text) else rewrite_phone_words(text, partial(surrogate_phone, ctx))
        ),
        "EMAIL": lambda: surrogate_email(ctx, text),
        "ZIP": lambda: surrogate_zip(ctx, text, paired_city),
        "VILLE": lambda: surrogate_city(ctx, text),
        "STR": lambda: surrogate_street(ctx, text, paired_city),
    }
    return draws[label]()


def guard(ctx: Context, label: str, original: str, draw: Callable[[Context], str]) -> str | None:
    """``draw(ctx)`` if it gives nothing of ``original`` back, else a salted redraw; ``None`` if none passes.

    A name is compared word by word (:func:`keeps_original`) and whole: none of its multi-word parts
    (``LE DU``, whose two-letter words the word test ignores) nor the patient's own whole last or given
    name written in it may come back in the surrogate."""
    patient = ctx.patient if label == "PATIENT" else None
    wholes = _whole_names(
        label, original, patient.lastname if patient else None, patient.firstname if patient else None
    )
    for attempt in range(ATTEMPTS):
        candidate = draw(ctx if attempt == 0 else replace(ctx, salt=f"redraw {attempt}"))
        if (
            not keeps_original(original, candidate, label)
            and not ctx.note_originals.given_back(_compared_part(label, candidate))
            and not (wholes and holds_phrase(candidate, wholes))
        ):
            return candidate
    return None


def _compared_part(label: str, candidate: str) -> str:
    """What of a surrogate is compared with the note's other entities: an address without its top-level domain,
    which it keeps from its original (``.fr`` is nobody's, even where another entity writes ``fr``)."""
    if label == "EMAIL" and "@" in candidate and "." in candidate.rpartition("@")[2]:
        return candidate.rsplit(".", 1)[0]
    return candidate


@lru_cache(maxsize=1 << 14)
def _whole_names(label: str, original: str, lastname: str | None, firstname: str | None) -> tuple[str, ...]:
    """The phrases a name's surrogate may not hold (:func:`guard`): the original's parts of several words,
    and the patient's whole names (``lastname``, ``firstname``; PATIENT only) written in it."""
    if label not in ("PATIENT", "DOCTOR"):
        return ()
    own = tuple(n for n in (lastname, firstname) if n and holds_phrase(original, [n]))
    return name_units(original) + own


def surrogate(
    ctx: Context,
    label: str,
    text: str,
    paired_city: str | None = None,
    mask_format: str = DEFAULT_MASK,
    initials: bool = False,
    paired_date: str | None = None,
) -> Replacement:
    """The surrogate of ``text`` labelled ``label`` (``paired_city``: the city written next to a ZIP or after a STR;
    ``initials``: a name span that is dictation initials, replaced by initials; ``paired_date``: the date a
    DATE span that is a day alone goes with, the other end of its range).

    A span that cannot be given a surrogate safely is masked with ``mask_format`` (module docstring).
    """
    text = unicodedata.normalize("NFC", text)  # decomposed accents (NFD) are read as the letters they make
    if label == "DATE":
        shifted = shift_date_text(ctx, text, paired_date)
        if shifted is None:
            return _masked(label, mask_format, UNPARSED_DATE)
        if keeps_original(text, shifted, label):
            return _masked(label, mask_format, UNCHANGED_DATE)
        return Replacement(shifted)
    if label not in ("PATIENT", "DOCTOR", "PHONE", "EMAIL", "ZIP", "VILLE", "STR"):
        return _masked(label, mask_format, UNKNOWN_LABEL)
    if not readable(label, text) and label in ("PHONE", "ZIP") and readable(label, digits_read(text)):
        text = digits_read(text)  # "O2.96.17.55.64", "2908O": a scan's look-alike letters, read as digits
    if not readable(label, text):
        return _masked(label, mask_format, UNREADABLE.format(label=label.lower()))
    new = guard(ctx, label, text, lambda c: _draw(c, label, text, paired_city, initials))
    return Replacement(new) if new is not None else _masked(label, mask_format, KEPT_ORIGINAL)
