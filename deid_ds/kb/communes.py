"""How the BAN's commune names are written in notes: whole cities for arrondissements, names without their article.

Two facts of the real BAN that the commune gazetteer must undo:

* Paris, Lyon and Marseille appear only as their arrondissements (``nom_commune`` ``Paris 13e
  Arrondissement``, ``code_insee`` 75113, postcode 75013). Notes write ``Paris 13e``, ``LYON 8`` or ``75013
  PARIS``, and the guidelines annotate the city alone (``[Paris] 13e``): the gazetteer needs ``Paris``, with
  the whole city's INSEE code, not the arrondissement's long name.
* A commune whose name starts with ``Le`` or ``Les`` loses its article after ``à`` or ``de``: ``au Havre``,
  ``du Mans``, ``aux Abymes``; the guidelines keep the article outside (``au [Havre]``). The name without
  its article is listed under its own kind, which the labeller accepts only after ``au``/``aux``/``du``/``des``.

Pure functions of a name: :mod:`deid_ds.kb.build` applies them while it counts the places.
"""

from __future__ import annotations

import re

#: ``Paris 13e Arrondissement``, ``Lyon 1er Arrondissement`` (the BAN's form, any case).
_ARRONDISSEMENT = re.compile(r"(?P<city>.+?)\s+\d{1,2}\s*(?:e|er|ème|eme)\s+arrondissement", re.IGNORECASE)
#: The INSEE code of the whole commune of each city with arrondissements.
CITY_CODES = {"paris": "75056", "lyon": "69123", "marseille": "13055"}
#: The kind, in ``places.parquet``, of a commune's name without its article (``Havre`` for ``Le Havre``).
CONTRACTED = "commune_sans_article"
_ARTICLE = re.compile(r"(?:le|les)\s+(?P<rest>\S.*)", re.IGNORECASE)
#: The INSEE code ranges of the arrondissements of each city (``75101``..``75120`` for Paris).
ARRONDISSEMENTS = {"75056": ("751", 1, 20), "69123": ("6938", 1, 9), "13055": ("132", 1, 16)}


def whole_city(name: str, code_insee: str | None) -> tuple[str, str | None]:
    """``("Paris", "75056")`` for ``("Paris 13e Arrondissement", "75113")``; other communes unchanged."""
    m = _ARRONDISSEMENT.fullmatch(name.strip())
    if m is None:
        return name, code_insee
    city = m.group("city")
    return city, CITY_CODES.get(city.lower(), code_insee)


def whole_city_code(code: str) -> str:
    """``75056`` for ``75113`` (an arrondissement's INSEE code, whatever name it is written with), any other code
    unchanged: for the tables keyed by code (the communes table, a population file)."""
    for city, (prefix, first, last) in ARRONDISSEMENTS.items():
        rest = code[len(prefix) :]
        if code.startswith(prefix) and rest.isdigit() and first <= int(rest) <= last:
            return city
    return code


def without_article(name: str) -> str | None:
    """``Havre`` for ``Le Havre``, ``Abymes`` for ``Les Abymes``; None for a name without ``Le``/``Les``.

    ``La`` and ``L'`` never contract (``à La Rochelle``), so they are kept.
    """
    m = _ARTICLE.fullmatch(name.strip())
    return m.group("rest") if m else None
