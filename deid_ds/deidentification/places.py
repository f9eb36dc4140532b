"""Surrogate places: cities (VILLE), postcodes (ZIP) and street addresses (STR).

**City and postcode together.** A patient's original commune (by its folded name) maps to a surrogate
commune drawn from the pools (:mod:`deid_ds.deidentification.pools`), and a postcode maps to one of *that
commune's* postcodes, so ``35000 RENNES`` becomes e.g. ``29200 BREST``, never a postcode of another
town. Which commune a postcode stands for is found, in order: the city written next to it in the
note (``35000 RENNES``, ``RENNES (35000)``), the knowledge base's postcode table, the patient's
metadata (their ``zip`` with their ``city``); failing all three, the postcode itself is the key
(still consistent for that postcode, but then its surrogate town is not the one a nearby city
became).

**Streets.** ``12 bis, avenue du Général de Gaulle``: the house number becomes a keyed number of the
same number of digits, the repetition index and the punctuation stay, the street type word stays
(``avenue``: it identifies nobody) and the street's name is replaced by another street name (BAN
streets with a knowledge base), in the original's case. A line with no type word (a residence, a
lieu-dit written alone) gets a lieu-dit name; ``BP 123``/``CS 10329`` keep their prefix and get keyed
digits. The number is keyed by the whole folded address and the name by the folded name, so the
metadata address ``16 RUE HENRI LE GUILLOUX`` and the note's ``16 Rue Henri Le Guilloux`` agree.

**Under ``--privacy dp``** (:mod:`deid_ds.deidentification.privacy`), a commune the knowledge base knows is
drawn among its ``k`` most similar communes by the local exponential mechanism
(:mod:`deid_ds.deidentification.similar_communes`), with the ε of one value, recorded by
:meth:`Context.spend` (``commune``); its postcodes follow as above, and a street written with a city (``12 rue
de la Paix, 29200 Brest``, or the patient's address with their city) becomes a street of the surrogate commune,
type word included (a real street of that town). What the mechanism cannot cover is replaced as in the default
mode and recorded with an infinite ε, so that the report never counts it as protected: a city abroad becomes a
city of the same country (:mod:`deid_ds.deidentification.foreign_cities`; ``commune:abroad``), any other commune
the knowledge base does not know (a misspelling, a knowledge base without its communes table, no ``--kb``) a
commune of the pools (``commune:unprotected``).
"""

from __future__ import annotations

import math
import re

from deid_ds.deidentification.casing import apply_case
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.foreign_cities import cities_of, country_of
from deid_ds.deidentification.pools import Commune, SimilarPlaces, load_similar_places, squash, strip_street_type
from deid_ds.deidentification.similar_communes import commune_key, distribution, pick
from deid_ds.kb.normalize import fold_key

#: Kinds of :meth:`Context.spend` for a commune: drawn by the mechanism, or replaced outside it (infinite ε).
SPENT_COMMUNE, SPENT_ABROAD, SPENT_UNPROTECTED = "commune", "commune:abroad", "commune:unprotected"

_DIGITS = re.compile(r"\d")
_HOUSE = re.compile(
    r"^(?P<num>\d{1,5}(?:[ \u00a0]?[-/][ \u00a0]?\d{1,5})?)"  # one number, or a range: 13-53 rue ...
    r"(?P<rep>[ \u00a0]?(?:bis|ter|quater|[A-Da-d])(?![^\W\d_]))?(?P<sep>[\s,]+)(?P<rest>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
_BOX = re.compile(
    r"^(?P<prefix>(?:B\.?\s?P|C\.?\s?S|TSA)\.?\s*)(?P<num>\d[\d\s]*)(?P<tail>.*)$", re.IGNORECASE | re.DOTALL
)


def keyed_digits(
    ctx: Context, parts: tuple[str, ...], original: str, keep_first: int = 0, no_leading_zero: bool = False
) -> str:
    """``original`` with its digits replaced by keyed digits (the first ``keep_first`` kept), layout kept.

    The result always differs from the original when it has a digit that may change.
    """
    digits = [c for c in original if c.isdigit()]
    rng = ctx.keyring.rng(ctx.scope, *ctx.parts(*parts))
    new = digits[:keep_first] + [rng.choice("0123456789") for _ in digits[keep_first:]]
    if no_leading_zero and len(new) > keep_first and keep_first == 0 and new[0] == "0":
        new[0] = rng.choice("123456789")
    if new == digits and len(digits) > keep_first:
        last = int(new[-1])
        new[-1] = str((last + 1 + rng.randrange(9)) % 10)
    it = iter(new)
    return _DIGITS.sub(lambda _: next(it), original)


def commune_for(ctx: Context, city_key: str) -> Commune:
    """The surrogate commune of an original commune (folded name, any spelling: :func:`commune_key`),
    never the patient's own."""
    city_key = commune_key(city_key)
    patient_zip = (ctx.patient.zip or "").strip()

    def clashes_label(commune: Commune) -> str:
        # a commune serving the patient's own postcode would print it back: treat it as a clash
        return commune.name if patient_zip not in commune.postcodes else (ctx.patient.city or city_key)

    if ctx.privacy.is_dp:
        similar = _similar_commune(ctx, city_key, clashes_label)
        if similar is not None:
            return similar
        country = country_of(city_key)
        if country is not None and len(cities_of(country)) > 1:
            ctx.spend(SPENT_ABROAD, city_key, math.inf)
            return Commune(ctx.draw(cities_of(country), ("VILLE~abroad", city_key), city_key), ())
        ctx.spend(SPENT_UNPROTECTED, city_key, math.inf)
    return ctx.draw(ctx.pools.communes, ("VILLE", city_key), city_key, text=clashes_label)


def dp_places_warning(kb_dir: str | None, privacy) -> str | None:
    """The warning of a ``--privacy dp`` run whose communes cannot be drawn among similar ones (no knowledge base
    with a communes table): they are replaced as in the default mode, recorded with an infinite ε."""
    if not privacy.is_dp or load_similar_places(kb_dir) is not None:
        return None
    why = "no --kb" if not kb_dir else f"{kb_dir} has no communes table with coordinates (rebuild it with build-kb)"
    return (
        f"deidentify: WARNING --privacy dp: {why}: communes are drawn at random as in --privacy shift, without "
        "the ε·d guarantee (counted as unprotected in the report)"
    )


def similar_places(ctx: Context) -> SimilarPlaces | None:
    """The communes index of the run's knowledge base, or None (no ``--kb``, or none with coordinates)."""
    return load_similar_places(ctx.pools.kb_dir)


def _similar_commune(ctx: Context, city_key: str, clashes_label) -> Commune | None:
    """A commune drawn among the ``k`` most similar to ``city_key`` by the exponential mechanism, or None for a
    commune the knowledge base does not know. The keyed uniform number depends on the key, the patient's scope
    and the commune only: the same commune gets the same surrogate in every note of the patient. A candidate
    that clashes (the patient's own commune, another place of the patient's notes, a commune sharing a word
    with the original: ``Saint-Malo`` never becomes ``Saint-Brieuc``) is drawn again from the mechanism restricted
    to the candidates that do not clash, with a second keyed number; when all clash, None (today's draw)."""
    similar = similar_places(ctx)
    i = similar.index.find(city_key) if similar is not None else None
    if i is None:
        return None
    index, epsilon = similar.index, ctx.privacy.epsilon
    rows, probs = distribution(index, i, epsilon, ctx.privacy.k, ctx.privacy.neighbourhood)
    if not rows:
        return None

    def commune(j: int) -> Commune:
        return Commune(index.names[j], index.postcodes[j], index.codes[j])

    def uniform(attempt: int) -> float:
        return ctx.keyring.integer(ctx.scope, *ctx.parts("VILLE~dp", city_key, str(attempt))) / 2**64

    drawn = commune(rows[pick(probs, uniform(0))])
    if ctx.clashes(clashes_label(drawn), city_key):
        allowed = [n for n, j in enumerate(rows) if not ctx.clashes(clashes_label(commune(j)), city_key)]
        if not allowed:
            return None
        drawn = commune(rows[allowed[pick(probs[allowed] / probs[allowed].sum(), uniform(1))]])
    ctx.spend(SPENT_COMMUNE, city_key, epsilon)
    return drawn


def surrogate_city(ctx: Context, text: str) -> str:
    return apply_case(commune_for(ctx, fold_key(text)).name, text)


def remember_town(ctx: Context, text: str) -> None:
    """A town the note writes (a VILLE span): recognised later where an e-mail address glues it."""
    key = squash(text)
    if len(key) >= 3:
        ctx.memory.setdefault("towns", {}).setdefault(key, fold_key(text))  # type: ignore[union-attr]


def town_in_address(ctx: Context, squashed: str) -> str | None:
    """The surrogate town, squashed, of a town written glued in an e-mail address (``plouzane``), or None.

    The same commune as the town gets in the note's text (:func:`surrogate_city` of the same folded
    name): a town of this note (VILLE spans), the patient's city, or any commune of the pools.
    """
    towns: dict[str, str] = dict(ctx.memory.get("towns", {}))  # type: ignore[arg-type]
    if ctx.patient.city:
        towns.setdefault(squash(ctx.patient.city), fold_key(ctx.patient.city))
    folded = towns.get(squashed) or ctx.pools.squashed_communes.get(squashed)
    if folded is None or len(squashed) < 3:
        return None
    return squash(commune_for(ctx, folded).name)


def is_postcode(text: str) -> bool:
    """A French postcode: five digits (``35000``, ``35 000``, ``F-35000``)."""
    return sum(c.isdigit() for c in text) == 5


def city_of_postcode(ctx: Context, code: str, paired_city: str | None) -> str:
    """The folded commune a postcode stands for (see the module docstring for the order)."""
    if paired_city:
        return fold_key(paired_city)
    known = ctx.pools.commune_of_postcode.get(code)
    if known:
        return known
    patient = ctx.patient
    if patient.zip and patient.city and "".join(patient.zip.split()) == code:
        return fold_key(patient.city)
    return f"zip:{code}"


def surrogate_zip(ctx: Context, text: str, paired_city: str | None = None) -> str:
    """A postcode of the surrogate commune, in the original's layout (``35 000`` stays spaced)."""
    code = "".join(c for c in text if c.isdigit())
    if len(code) != 5:
        return keyed_digits(ctx, ("ZIP", code), text)
    commune = commune_for(ctx, city_of_postcode(ctx, code, paired_city))
    if not commune.postcodes:  # a city abroad (--privacy dp): no French postcode to follow it
        return keyed_digits(ctx, ("ZIP", code), text)
    new = ctx.keyring.choice(commune.postcodes, ctx.scope, *ctx.parts("ZIP", code))
    it = iter(new)
    return _DIGITS.sub(lambda _: next(it), text)


def _street_name(ctx: Context, name: str, lieu_dit: bool) -> str:
    pool = ctx.pools.lieux_dits if lieu_dit else ctx.pools.street_names
    drawn = ctx.draw(pool, ("STR", fold_key(name)), name)
    return apply_case(drawn, name)


def _street_of_commune(ctx: Context, name: str, lieu_dit: bool, city: str | None) -> str | None:
    """``--privacy dp``: a street (a lieu-dit) of the surrogate commune of ``city``, or None when there is no
    city, the knowledge base does not know it or has no street for its surrogate."""
    if not ctx.privacy.is_dp or not city:
        return None
    similar = similar_places(ctx)
    if similar is None or similar.index.find(fold_key(city)) is None:
        return None
    commune = commune_for(ctx, fold_key(city))
    pool = similar.streets_of(commune.code, lieu_dit)
    if not pool:
        return None
    drawn = ctx.draw(pool, ("STR~dp", commune_key(fold_key(city)), fold_key(name)), name)
    return apply_case(drawn, name)


def _house_numbers(keyed: str) -> str:
    """A range of house numbers (``13-53 rue ...``) kept in ascending order once its digits are keyed."""
    numbers = re.findall(r"\d+", keyed)
    if len(numbers) == 2 and int(numbers[0]) > int(numbers[1]):
        it = iter(reversed(numbers))
        return re.sub(r"\d+", lambda _: next(it), keyed)
    return keyed


def surrogate_street(ctx: Context, text: str, city: str | None = None) -> str:
    """The surrogate of a STR span (see the module docstring); ``city``: the town written with it, which the
    street follows under ``--privacy dp``."""
    box = _BOX.match(text)
    if box:
        return box.group("prefix") + keyed_digits(ctx, ("BOX", fold_key(text)), box.group("num")) + box.group("tail")
    house = _HOUSE.match(text)
    prefix, rest = "", text
    if house:
        number = _house_numbers(keyed_digits(ctx, ("STR#", fold_key(text)), house.group("num"), no_leading_zero=True))
        prefix = number + (house.group("rep") or "") + house.group("sep")
        rest = house.group("rest")
    street_type, name = strip_street_type(rest)
    city = city or _patients_city(ctx, text)
    in_commune = _street_of_commune(ctx, rest, lieu_dit=not street_type and not house, city=city)
    if in_commune is not None:
        return prefix + in_commune
    if street_type:
        gap = rest[len(street_type) : len(rest) - len(name)]
        is_lieu_dit = fold_key(street_type).startswith("lieu")
        return prefix + street_type + gap + _street_name(ctx, name, is_lieu_dit)
    return prefix + _street_name(ctx, rest, lieu_dit=not house)


def _patients_city(ctx: Context, text: str) -> str | None:
    """The patient's city for a street written without one that is the patient's own address (``--privacy dp``)."""
    address = ctx.patient.address
    if not ctx.privacy.is_dp or not address or not ctx.patient.city:
        return None
    written, own = fold_key(text), fold_key(address)
    return ctx.patient.city if written and (written in own or own in written) else None
