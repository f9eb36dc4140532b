"""Foreign cities by country, for ``deidentify --privacy dp``: a city abroad becomes a city of the same country.

The labeller knows foreign cities without their country (:mod:`deid_ds.label.abroad`: the cities of the
foreign postcode formats) and the generator writes birthplaces abroad by origin
(:data:`deid_ds.synth.pools.BIRTHPLACES_ABROAD`); neither says which country a city is in.
``resources/foreign_cities_fr.tsv`` does, for those cities and a few more of each country, written as
French notes write them. Not the whole world: a foreign city missing from it is replaced as today (a
commune drawn from the pools).
"""

from __future__ import annotations

from functools import cache

from deid_ds.deidentification.similar_communes import commune_key
from deid_ds.kb.normalize import fold_key
from deid_ds.resources import resource_path


@cache
def foreign_cities() -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """``(country of each folded city, the cities of each country sorted)`` from the shipped list."""
    country_of: dict[str, str] = {}
    by_country: dict[str, list[str]] = {}
    for line in resource_path("foreign_cities_fr.tsv").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        country, city = line.split("\t")
        country_of.setdefault(commune_key(fold_key(city)), country)
        by_country.setdefault(country, []).append(city)
    return country_of, {country: tuple(sorted(cities)) for country, cities in by_country.items()}


def country_of(city_key: str) -> str | None:
    """The country of a folded city name, or None for a city the list does not hold."""
    return foreign_cities()[0].get(commune_key(city_key))


def cities_of(country: str) -> tuple[str, ...]:
    return foreign_cities()[1].get(country, ())
