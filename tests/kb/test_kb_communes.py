"""The commune gazetteer of all France: Paris, Lyon and Marseille from their arrondissements, names without article.

The real BAN lists Paris only as ``Paris 13e Arrondissement`` (INSEE 75113, postcode 75013) and so on
(as the BAN publishes it); notes write ``Paris 13e`` or ``75013 PARIS``, and the guidelines
annotate the city alone (``[Paris] 13e``). ``Le Havre`` is written ``au Havre`` (``au [Havre]``). The
fixture ``fixtures/adresses-all-france.csv`` holds rows in the BAN's 23-column format for these cases
and for an overseas and a Corsican commune.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deid_ds.kb.build import build_kb, read_table
from deid_ds.kb.communes import CONTRACTED, whole_city, without_article
from deid_ds.label.labeller import WeakLabeller
from deid_ds.segmentation.tokens import tokenize

FIXTURE = Path(__file__).parent / "fixtures" / "adresses-all-france.csv"


@pytest.mark.parametrize(
    ("name", "code", "expected"),
    [
        ("Paris 13e Arrondissement", "75113", ("Paris", "75056")),
        ("Paris 1er Arrondissement", "75101", ("Paris", "75056")),
        ("Lyon 8e Arrondissement", "69388", ("Lyon", "69123")),
        ("Marseille 16e Arrondissement", "13216", ("Marseille", "13055")),
        ("Saint-Denis", "97411", ("Saint-Denis", "97411")),
        ("Ajaccio", "2A004", ("Ajaccio", "2A004")),
    ],
)
def test_an_arrondissement_commune_is_its_whole_city(name, code, expected):
    assert whole_city(name, code) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [("Le Havre", "Havre"), ("Les Abymes", "Abymes"), ("La Rochelle", None), ("L'Hermitage", None), ("Brest", None)],
)
def test_only_le_and_les_lose_their_article(name, expected):
    assert without_article(name) == expected


@pytest.fixture(scope="module")
def france_kb(tmp_path_factory):
    out = tmp_path_factory.mktemp("kb")
    build_kb(out, ban=[str(FIXTURE)], progress=False)
    return out


def test_the_gazetteer_knows_paris_lyon_and_marseille_not_their_arrondissements(france_kb):
    places = read_table(france_kb, "places").to_pylist()
    communes = {(p["surface"], p["code_insee"]) for p in places if p["kind"] == "commune"}
    assert {("Paris", "75056"), ("Lyon", "69123"), ("Marseille", "13055")} <= communes
    assert not any("Arrondissement" in p["surface"] for p in places)
    assert ("Havre", "76351") in {(p["surface"], p["code_insee"]) for p in places if p["kind"] == CONTRACTED}
    assert ("Saint-Denis", "97411") in communes and ("Ajaccio", "2A004") in communes
    # the postal label PARIS is the commune's own name: not listed again as a routing label
    assert not [p for p in places if p["kind"] == "acheminement" and p["key"] == "paris"]
    postcodes = {(p["code_postal"], p["code_insee"]) for p in read_table(france_kb, "postcodes").to_pylist()}
    assert ("75013", "75113") in postcodes and ("20000", "2A004") in postcodes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Transfert au Havre demain.", [("VILLE", "Havre")]),
        ("Domicile à Lyon 8e", [("VILLE", "Lyon")]),
        ("Née à Marseille le 3 mars.", [("VILLE", "Marseille"), ("DATE", "3 mars")]),
        ("5 rue de Paris\n97400 Saint-Denis", [("STR", "5 rue de Paris"), ("ZIP", "97400"), ("VILLE", "Saint-Denis")]),
        ("Cours Napoléon\n20000 Ajaccio", [("STR", "Cours Napoléon"), ("ZIP", "20000"), ("VILLE", "Ajaccio")]),
    ],
)
def test_the_labeller_over_that_gazetteer_finds_the_cities_as_written(france_kb, text, expected):
    labeller = WeakLabeller.from_kb(france_kb)
    found = labeller.label(text, tokenize(text))
    assert [(c.label, text[c.start : c.end]) for c in found] == expected
