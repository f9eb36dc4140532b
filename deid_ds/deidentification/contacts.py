"""Surrogate phone numbers and e-mail addresses, format-preserving.

**Phones.** Every separator, bracket and the international prefix (``+33``, ``0033``, ``(0)``) stay
where they are; the trunk ``0`` and the first digit of the national number (``2`` for the West, ``6``/
``7`` for mobiles) are kept so that the number stays plausible; the other digits are keyed by the
national number, so ``02 99 28 43 21``, ``02.99.28.43.21`` and ``+33 2 99 28 43 21`` map to the same
surrogate digits.

**E-mails.** Nothing of the original is kept but its top-level domain, the domain of a public mail
provider (``gmail.com``, ``orange.fr``...) and service words (``secretariat``, ``contact``, ``chu``,
``cabinet``, ``cardiologi``: :func:`~deid_ds.deidentification.overlap.is_service_word`). Every other piece, in the local
part or the domain, is rebuilt: a name of the note's patient or doctors (``jeanne.legall``) becomes the
surrogate that name gets in the text, a town (``cabinet.plouzane@``, ``mairie-vitre.fr``) the surrogate
town it gets in the text, squashed; a given name or surname of the lists their surrogate; digits keyed
digits; anything else a keyed surname of the pools. ``zeb.quag@example.org`` thus shares only ``.org``
with its surrogate. An e-mail span without ``@`` is not an address (:func:`is_email`): it is masked.
"""

from __future__ import annotations

import re

from deid_ds.deidentification.casing import strip_accents
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.names import NAMES_SEEN, first_name, initial, surname
from deid_ds.deidentification.overlap import EMAIL_GENERIC, PUBLIC_DOMAINS, is_service_word
from deid_ds.deidentification.places import keyed_digits, town_in_address
from deid_ds.deidentification.pools import squash
from deid_ds.kb.normalize import fold_key

__all__ = ["PUBLIC_DOMAINS", "is_email", "is_phone", "surrogate_email", "surrogate_phone"]

_PIECE = re.compile(r"[^\W\d_]+|\d+")


def surrogate_phone(ctx: Context, text: str) -> str:
    digits = "".join(c for c in text if c.isdigit())
    national = digits
    keep = 0
    stripped = text.lstrip()
    if stripped.startswith("+") and digits.startswith("33"):
        national, keep = digits[2:], 2
    elif digits.startswith("0033"):
        national, keep = digits[4:], 4
    if national.startswith("0"):  # the trunk 0, alone or in "(0)"
        national, keep = national[1:], keep + 1
    keep += 1 if national else 0  # the first digit of the national number: region or mobile
    return keyed_digits(ctx, ("PHONE", national), text, keep_first=keep)


def is_phone(text: str) -> bool:
    """A phone number a surrogate can stand for: French (``02 99 28 43 21``, ``+33 2...``), international
    (``+``/``00`` and 8 to 15 digits) or an internal extension of 4 or 5 digits (``poste 4321``)."""
    digits = "".join(c for c in text if c.isdigit())
    if text.lstrip().startswith("+"):
        return 8 <= len(digits) <= 15
    if digits.startswith("00"):
        return 10 <= len(digits) <= 17
    return (len(digits) == 10 and digits.startswith("0")) or len(digits) in (4, 5)


def is_email(text: str) -> bool:
    """An address: something before and after a single ``@``."""
    local, at, domain = text.rpartition("@")
    return bool(at and local.strip() and domain.strip() and "@" not in local)


_Name = tuple[str, str, str]  # label, role ("first"/"last"), original


def _known_names(ctx: Context) -> dict[str, _Name]:
    """Squashed names of the note's patient and doctors (name spans, metadata) → how to rebuild them."""
    out: dict[str, _Name] = dict(ctx.memory.get(NAMES_SEEN, {}))  # type: ignore[arg-type]
    for role, value in (("last", ctx.patient.lastname), ("first", ctx.patient.firstname)):
        if not value:
            continue
        out.setdefault(squash(value), ("PATIENT", role, value))
        for word in re.split(r"[\s\-]+", value):
            if len(squash(word)) >= 2:
                out.setdefault(squash(word), ("PATIENT", role, word))
    return out


def _name_surrogate(ctx: Context, name: _Name) -> str:
    label, role, original = name
    return first_name(ctx, original, label) if role == "first" else surname(ctx, original, label)


def _letters_piece(ctx: Context, piece: str, names: dict[str, _Name]) -> str:
    """The surrogate of one run of letters of an address (module docstring, in this order)."""
    key = squash(piece)
    if not key or is_service_word(key):
        return piece
    if key in names:
        return _ascii_word(_name_surrogate(ctx, names[key]), piece)
    for cut in range(2, len(key) - 1):  # glued first name and surname: "jeannelegall"
        if key[:cut] in names and key[cut:] in names:
            return _ascii_word(_name_surrogate(ctx, names[key[:cut]]) + _name_surrogate(ctx, names[key[cut:]]), piece)
    for cut in range(0, len(key) - 2):  # a town, alone or after a service word: "plouzane", "chlannion"
        town = town_in_address(ctx, key[cut:]) if cut == 0 or key[:cut] in EMAIL_GENERIC else None
        if town:
            return _ascii_word(key[:cut] + town, piece)
    if len(key) == 1:
        return _ascii_word(initial(ctx, key, "PATIENT", None), piece)
    if key in ctx.pools.first_name_keys:
        return _ascii_word(first_name(ctx, piece), piece)
    if key in ctx.pools.surname_keys:
        return _ascii_word(surname(ctx, piece), piece)
    return _ascii_word(ctx.draw(ctx.pools.surnames, ("EMAIL", key), piece), piece)


def _piece(ctx: Context, piece: str, names: dict[str, _Name]) -> str:
    if piece.isdigit():
        return keyed_digits(ctx, ("EMAIL#", piece), piece)
    return _letters_piece(ctx, piece, names)


def _ascii_word(word: str, like: str) -> str:
    out = re.sub(r"[^A-Za-z]", "", strip_accents(word))
    return out.upper() if like.isupper() else out.lower()


def _domain(ctx: Context, domain: str, names: dict[str, _Name]) -> str:
    """Public providers kept; else the top-level domain kept and every other label rebuilt piece by piece."""
    if fold_key(domain) in PUBLIC_DOMAINS:
        return domain
    head, dot, tld = domain.rpartition(".")
    if not dot:
        head, tld = domain, ""
    return _PIECE.sub(lambda m: _piece(ctx, m.group(), names), head) + dot + tld


def surrogate_email(ctx: Context, text: str) -> str:
    """The surrogate of an address (module docstring); ``text`` must pass :func:`is_email`."""
    local, _, domain = text.rpartition("@")
    names = _known_names(ctx)
    return f"{_PIECE.sub(lambda m: _piece(ctx, m.group(), names), local)}@{_domain(ctx, domain, names)}"
