"""Surrogate phone numbers and e-mail addresses, format-preserving.

**Phones.** Every separator, bracket and the international prefix (``+33``, ``0033``, ``(0)``) stay
where they are; the trunk ``0`` and the first digit of the national number (``2`` for the West, ``6``/
``7`` for mobiles) are kept so that the number stays plausible; the other digits are keyed by the
national number, so ``02 99 28 43 21``, ``02.99.28.43.21`` and ``+33 2 99 28 43 21`` map to the same
surrogate digits.

**E-mails.** The domain of a public mail provider (``gmail.com``, ``orange.fr``...) is kept; any other
domain keeps its top-level domain and common words (``chu-``, ``hopital``) and has its other labels
replaced (a city by its surrogate city, anything else by keyed letters of the same length). In the local
part, a piece that is one of the patient's names (``jeanne.legall``) becomes the surrogate of that name,
a common French word (``secretariat``, ``cardio``) stays, digits are keyed and anything else becomes a
surname from the pools, so ``secr.medecine@chu-rennes.fr`` still reads as a department's address.
"""

from __future__ import annotations

import re
from deid_ds.deidentification.casing import strip_accents
from deid_ds.deidentification.context import Context, words_of
from deid_ds.deidentification.names import first_name, random_letters, surname
from deid_ds.deidentification.places import commune_for, keyed_digits
from deid_ds.deidentification.pools import squash
from deid_ds.kb.ambiguity import is_common_word
from deid_ds.kb.normalize import fold_key

PUBLIC_DOMAINS = frozenset(
    """gmail.com googlemail.com orange.fr wanadoo.fr free.fr sfr.fr neuf.fr laposte.net hotmail.fr hotmail.com
    outlook.fr outlook.com live.fr live.com yahoo.fr yahoo.com icloud.com me.com aol.com bbox.fr numericable.fr
    club-internet.fr aliceadsl.fr protonmail.com proton.me gmx.fr gmx.com mailo.com""".split()
)
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


def _is_common(key: str) -> bool:
    """Short pieces (``sec``, ``secr``, ``dr``) and French words identify nobody: they stay."""
    return len(key) <= 4 or is_common_word(key, accents_known=False)


def _local_piece(ctx: Context, piece: str, names: dict[str, tuple[str, str]]) -> str:
    key = fold_key(piece)
    if piece.isdigit():
        return keyed_digits(ctx, ("EMAIL#", piece), piece)
    if key in names:
        role, original = names[key]
        new = first_name(ctx, original) if role == "first" else surname(ctx, original)
        return _ascii_word(new, piece)
    if key in ctx.pools.first_name_keys:
        return _ascii_word(first_name(ctx, piece), piece)
    if key in ctx.pools.surname_keys:
        return _ascii_word(surname(ctx, piece), piece)
    if _is_common(key):
        return piece
    drawn = ctx.draw(ctx.pools.surnames, ("EMAIL", key), piece)
    return _ascii_word(drawn, piece)


def _ascii_word(word: str, like: str) -> str:
    out = re.sub(r"[^A-Za-z]", "", strip_accents(word))
    return out.upper() if like.isupper() else out.lower()


def _patient_names(ctx: Context) -> dict[str, tuple[str, str]]:
    """Folded, glued forms of the patient's names (``legall`` for ``LE GALL``) → role and original."""
    out: dict[str, tuple[str, str]] = {}
    for role, value in (("last", ctx.patient.lastname), ("first", ctx.patient.firstname)):
        if not value:
            continue
        out[re.sub(r"[^a-z]", "", fold_key(value))] = (role, value)
        for word in re.split(r"[\s\-]+", value):
            if len(words_of(word) - {""}) and len(word) >= 2:
                out.setdefault(re.sub(r"[^a-z]", "", fold_key(word)), (role, word))
    return out


def _domain_piece(ctx: Context, piece: str) -> str:
    """A town in a domain (``rennes``, ``chlannion``) becomes the surrogate town; other names keyed letters."""
    key = squash(piece)
    communes = ctx.pools.squashed_communes
    for cut in range(len(key) - 3):  # the town may follow a prefix: "ch" + "lannion"
        if key[cut:] in communes:
            city = squash(commune_for(ctx, communes[key[cut:]]).name)
            return _ascii_word(piece[:cut] + city, piece)
    if _is_common(fold_key(piece)):
        return piece
    return random_letters(ctx, ("DOMAIN", key), len(piece))


def _domain(ctx: Context, domain: str) -> str:
    if fold_key(domain) in PUBLIC_DOMAINS:
        return domain
    labels = domain.split(".")
    out = []
    for i, label in enumerate(labels):
        if i == len(labels) - 1 and len(labels) > 1:
            out.append(label)  # the top-level domain
            continue
        out.append("-".join(_domain_piece(ctx, piece) for piece in label.split("-")))
    return ".".join(out)


def surrogate_email(ctx: Context, text: str) -> str:
    local, at, domain = text.rpartition("@")
    if not at:
        return random_letters(ctx, ("EMAIL", fold_key(text)), max(len(text), 1))
    names = _patient_names(ctx)
    new_local = _PIECE.sub(lambda m: _local_piece(ctx, m.group(), names), local)
    return f"{new_local}@{_domain(ctx, domain)}"
