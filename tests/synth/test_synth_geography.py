"""``deid-ds synth --geography france``: the places of all France and people of many origins, with gold spans
that follow the guidelines (``[Paris] 13e``, ``[Bâtiment C]``, ``[TSA 40031]``), the knowledge-base files that
cover the new départements, and the corpora of the older phrasings left byte for byte what they were."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import random
import re
from collections import Counter
from datetime import date

import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.segmentation.html_text import html_to_text
from deid_ds.synth import SynthConfig, canonical_command, generate_corpus, pools, write_corpus
from deid_ds.synth.context import NoteContext
from deid_ds.synth.corpus import Generation
from deid_ds.synth.formats import Ent, Markup, arrondissement_form, street_line
from deid_ds.synth.html_builder import Encoding, HtmlDoc
from deid_ds.synth.metadata import add_flaws, drop_second_surname, glue_particles
from deid_ds.synth.world import Address, WorldBuilder
from tests.synth import test_synth as family_checks  # a module, not its tests: they would run twice

#: sha256 (first 16 hex digits) of a small corpus of each older phrasing, computed before --geography existed
#: (commit 33a4b26): notes, gold, BAN rows and directory lines must stay byte for byte what they were.
_BEFORE = {
    "train": "0f83df4a9ca03479",
    "heldout": "d9f01b307b42eed2",
    "all": "63c7646bb89c0385",
    "unseen": "4bb63f794c0feecc",
}


def _digest(corpus) -> str:
    payload = json.dumps([corpus.notes, corpus.gold, corpus.ban, corpus.annuaire], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _small(phrasing: str, geography: str | None = None) -> SynthConfig:
    return SynthConfig(
        notes=40,
        seed=5,
        noise=0.8,
        phrasing=phrasing,
        distractor_professionals=30,
        distractor_streets=2,
        geography=geography,
    )


@pytest.mark.parametrize("phrasing", sorted(_BEFORE))
def test_older_phrasings_are_byte_for_byte_what_they_were_before_geography(phrasing):
    assert SynthConfig(phrasing=phrasing).region == "brittany"
    assert _digest(generate_corpus(_small(phrasing))) == _BEFORE[phrasing]


def test_brittany_named_is_the_default_and_france_is_another_corpus():
    assert _digest(generate_corpus(_small("train", "brittany"))) == _BEFORE["train"]
    assert _digest(generate_corpus(_small("train", "france"))) != _BEFORE["train"]


def test_exports_phrasings_default_to_france_and_a_bad_geography_is_refused():
    for phrasing in ("exports", "exports-heldout", "exports-all"):
        assert SynthConfig(phrasing=phrasing).region == "france"
        assert SynthConfig(phrasing=phrasing, geography="brittany").region == "brittany"
    with pytest.raises(ValueError, match="geography must be one of brittany, france"):
        SynthConfig(geography="bretagne")


def test_canonical_command_names_the_geography_only_when_chosen():
    assert "--geography" not in canonical_command(SynthConfig(), "data")
    assert canonical_command(SynthConfig(geography="france"), "d").endswith("--geography france")


# -- the communes of all France ----------------------------------------------------------------------------------


def test_france_communes_are_coherent_and_hold_the_arrondissements_corsica_and_overseas():
    communes = pools.france_communes()
    assert len({c.insee for c in communes}) == len(communes) >= 500
    assert not {c.departement for c in communes} & set(pools.DEPARTEMENTS)
    arrondissements = Counter(c.name for c in communes if c.arrondissement)
    assert arrondissements == {"Paris": 20, "Lyon": 9, "Marseille": 16}
    for commune in communes:
        dep = commune.departement
        prefix = {"2A": "20", "2B": "20"}.get(dep, dep)
        assert all(len(pc) == 5 and pc.startswith(prefix) for pc in commune.postcodes), commune
        if commune.arrondissement:  # 75013, 69008, 13005: the arrondissement's own postcode
            assert f"{commune.arrondissement:02d}" == commune.postcodes[0][-2:] or commune.insee == "75116"
    deps = {c.departement for c in communes}
    assert {"2A", "2B", "971", "972", "973", "974", "975", "976"} <= deps
    # the ambiguities of real gazetteers: one name, several communes
    assert {c.departement for c in communes if c.name == "Saint-Denis"} == {"93", "974"}
    assert {"974", "975"} <= {c.departement for c in communes if c.name == "Saint-Pierre"}


def test_people_of_many_origins_with_particles_and_ordinary_words():
    names = pools.origin_names()
    origins = ("maghrebi", "portuguese", "italian", "west_african", "vietnamese", "turkish", "alsatian", "polish")
    for origin in origins:
        assert len(names[origin]["F"]) >= 10 and len(names[origin]["M"]) >= 10 and len(names[origin]["L"]) >= 15
    surnames = {name for kinds in names.values() for name in kinds["L"]}
    for particle in ("de La ", "Ben ", "N'", "Da ", "Dos Santos", "El ", "Van "):
        assert any(name.startswith(particle) for name in surnames), particle
    assert {"Boulanger", "Petit", "Paris", "Lyon"} <= set(names["words"]["L"])


# -- addresses through the existing helpers ------------------------------------------------------------------


@pytest.fixture(scope="module")
def generation():
    return Generation(SynthConfig(notes=30, seed=23, geography="france", distractor_professionals=0))


def _context(generation, rng: random.Random) -> NoteContext:
    hospital = generation.hospitals[0]
    department = next(iter(hospital.departments.values()))
    patient = next(p for p in generation._patients if p is not None)
    doc = HtmlDoc(rng, Encoding("raw"), 0.0)
    return NoteContext(
        rng, 0, 0.0, patient, hospital, department, department.staff[0], date(2020, 1, 1), {}, doc, patient.address
    )


def _commune(name: str, dep: str):
    return next(c for c in pools.france_communes() if c.name == name and c.departement == dep)


def test_an_arrondissement_follows_its_city_outside_the_ville_span(generation):
    world: WorldBuilder = generation.world
    paris13 = next(c for c in pools.france_communes() if c.insee == "75113")
    address = world.new_address(paris13, home=True)
    assert address.postcode == "75013"
    seen = set()
    for seed in range(200):
        fragments = _context(generation, random.Random(seed)).address_fragments(address)
        cities = [i for i, f in enumerate(fragments) if isinstance(f, Ent) and f.label == "VILLE"]
        assert len(cities) == 1 and fragments[cities[0]].value.upper() in ("PARIS",), fragments
        after = fragments[cities[0] + 1] if cities[0] + 1 < len(fragments) else ""
        if isinstance(after, str) and re.fullmatch(r" 13(e|E|ème|ÈME)?", after):
            seen.add(after.strip().lower())
        assert "13" not in fragments[cities[0]].value
    assert {"13e", "13ème"} <= seen
    assert {arrondissement_form(Address(address.street, 1), random.Random(s)) for s in range(50)} >= {"13e", "13"}


def test_buildings_quartiers_boxes_and_ranges_are_each_their_own_str(generation):
    world: WorldBuilder = generation.world
    abymes = _commune("Les Abymes", "971")
    address = world.new_address(abymes, home=True)
    address.building, address.staircase, address.place, address.bp = (
        "Bâtiment C",
        "Escalier 2",
        "Quartier Bois-Joli",
        "",
    )
    address.number, address.number_to = 47, 83
    for seed in range(40):
        fragments = _context(generation, random.Random(seed)).address_fragments(address)
        values = [f.value for f in fragments if isinstance(f, Ent) and f.label == "STR"]
        assert [v.lower() for v in values if not v[0].isdigit()] == [
            v.lower() for v in ("Bâtiment C", "Escalier 2", "Quartier Bois-Joli")
        ] or [v.lower() for v in values if not v[0].isdigit()] == ["bâtiment c", "escalier 2", "quartier bois-joli"]
        numbered = [v for v in values if v[0].isdigit()]
        assert len(numbered) == 1 and numbered[0].startswith(("47-83 ", "47-83, ")), values
        assert all(isinstance(f, (str, Ent, Markup)) for f in fragments)
    assert street_line(address, random.Random(1)).startswith("47-83")


def test_a_hospital_elsewhere_has_its_cedex_outside_the_city_and_its_box_its_own_str(generation):
    elsewhere = [h for h in generation.hospitals if h.address.commune.region != "brittany"]
    assert {h.address.commune.departement for h in elsewhere} >= {"75", "69", "13", "2B", "971", "972", "974"}
    paris = next(h for h in elsewhere if h.address.commune.name == "Paris")
    assert paris.address.cedex.startswith("CEDEX") and paris.address.cedex_postcode.startswith("75")
    for seed in range(30):
        fragments = _context(generation, random.Random(seed)).address_fragments(paris.address)
        city = next(i for i, f in enumerate(fragments) if isinstance(f, Ent) and f.label == "VILLE")
        assert fragments[city].value.upper() == "PARIS"
        if fragments[city - 1] != " à ":  # "à Paris (75651)" drops the CEDEX, as it always did
            assert fragments[city + 1] == " " + paris.address.cedex
        zips = [f.value for f in fragments if isinstance(f, Ent) and f.label == "ZIP"]
        assert zips == [paris.address.cedex_postcode]
        if paris.address.bp:
            assert Ent("STR", paris.address.bp) in fragments


# -- a France corpus -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def france():
    return generate_corpus(
        SynthConfig(
            notes=160,
            patients=100,  # many homes: buildings and staircases are a city's homes' lines
            seed=21,
            noise=0.6,
            phrasing="all",
            geography="france",
            distractor_professionals=50,
            distractor_streets=2,
        )
    )


def _contexts(corpus):
    """(label, text, the 12 characters after the span) for every gold span."""
    by_doc = family_checks._spans_by_doc(corpus)
    for note in corpus.notes:
        parsed = html_to_text(note["html"])
        for span in by_doc.get(note["id_document"], []):
            _, end = parsed.text_span(span["html_start"], span["html_end"])
            yield span["label"], span["text"], parsed.text[end : end + 12]


def test_france_gold_reads_back_exactly_and_spans_are_clean(france):
    family_checks._assert_gold_reads_back(france)
    family_checks.test_spans_never_start_or_end_on_a_tag_a_space_or_nbsp(france)
    family_checks.test_spans_never_overlap(france)


def test_a_france_corpus_has_arrondissements_corsica_overseas_boxes_buildings_and_ranges(france):
    found = Counter()
    for label, text, after in _contexts(france):
        if label == "VILLE":
            assert not re.search(r"\d|CEDEX", text), text  # arrondissement and CEDEX stay outside the city
            if text.upper() in ("PARIS", "LYON", "MARSEILLE") and re.match(r" \d{1,2}(er|e|ème|E|ER|ÈME)?\b", after):
                found["arrondissement"] += 1
            if after.startswith(" CEDEX"):
                found["cedex"] += 1
        if label == "ZIP":
            assert re.fullmatch(r"\d{5}|2[AB]\d{3}", text) and not text.startswith("2A"), text
            found["corsica"] += text.startswith("20")
            found["overseas"] += text.startswith("97")
            found["arrondissement zip"] += bool(re.fullmatch(r"750[0-2]\d|6900\d|130[01]\d", text))
        if label == "STR":
            for key, pattern in {
                "BP": r"BP \d+",
                "CS": r"CS \d+",
                "TSA": r"TSA \d+",
                "building": r"(?i)(bâtiment|bât\.|immeuble) \w",
                "staircase": r"(?i)(escalier|esc\.) \d",
                "quartier": r"(?i)(quartier|section|cité|lotissement|hameau) .+",
                "range": r"\d+-\d+,? .+",
            }.items():
                if re.fullmatch(pattern, text):
                    found[key] += 1
            assert not re.search(r"(?i)bâtiment.+\d+ (rue|avenue)", text), text  # never glued to the street
    for key in (
        "arrondissement",
        "cedex",
        "corsica",
        "overseas",
        "arrondissement zip",
        "BP",
        "CS",
        "TSA",
        "building",
        "staircase",
        "quartier",
        "range",
    ):
        assert found[key] > 0, (key, found)


def test_a_france_corpus_names_people_of_many_origins(france):
    by_origin = {origin: {name.upper() for name in kinds["L"]} for origin, kinds in pools.origin_names().items()}
    written = " ".join(text.upper() for label, text, _ in _contexts(france) if label in ("PATIENT", "DOCTOR"))
    origins = {origin for origin, names in by_origin.items() if any(name in written for name in names)}
    assert len(origins) >= 7, origins
    assert re.search(r"\b(N'|BEN |DA |DOS |DE LA |EL |VAN )", written)


def test_france_knowledge_bases_cover_the_new_departements_with_streets_missing(france, tmp_path):
    write_corpus(france, tmp_path)
    files = {p.name for p in (tmp_path / "kb").glob("adresses-*.csv.gz")}
    for dep in ("22", "29", "35", "56", "75", "69", "13", "2A", "2B", "971", "972", "973", "974", "975", "976"):
        assert f"adresses-{dep}.csv.gz" in files, dep
    rows = {}
    for dep in ("75", "974", "93"):
        with gzip.open(tmp_path / "kb" / f"adresses-{dep}.csv.gz", "rt", encoding="utf-8", newline="") as f:
            rows[dep] = list(csv.DictReader(f, delimiter=";"))
        assert all(r["code_insee"].startswith(dep) for r in rows[dep])
    paris = rows["75"]
    assert all(r["nom_commune"] == "Paris" and r["libelle_acheminement"] == "PARIS" for r in paris)
    assert all(r["code_postal"][-2:] == r["code_insee"][-2:] or r["code_postal"] == "75116" for r in paris)
    # Réunion's x/y are UTM 40S metres (the BAN's), not Lambert-93
    assert all(7.5e6 < float(r["y"]) < 7.8e6 for r in rows["974"])
    assert {"Saint-Denis"} <= {r["nom_commune"] for r in rows["974"]} & {r["nom_commune"] for r in rows["93"]}
    world = france.world
    mentioned_elsewhere = [
        s for c in world.communes if c.region != "brittany" for s in world.streets[c.insee] if not s.in_ban
    ]
    assert mentioned_elsewhere  # partial coverage, as in Brittany: mentioned streets missing from the BAN
    overseas = []
    for dep in ("971", "972", "973", "974", "976"):
        with gzip.open(tmp_path / "kb" / f"adresses-{dep}.csv.gz", "rt", encoding="utf-8", newline="") as f:
            overseas += [r["nom_voie"] for r in csv.DictReader(f, delimiter=";")]
    assert any(re.match(r"(Quartier|Section) ", name) for name in overseas)  # quartiers are BAN toponyms too


# -- metadata with the flaws of real warehouses --------------------------------------------------------------


def test_flaw_helpers():
    assert drop_second_surname("DOS SANTOS FERREIRA") == "DOS SANTOS"
    assert drop_second_surname("Martin-Le Gall") == "Martin"
    assert drop_second_surname("Da Silva") == "Da Silva"
    assert drop_second_surname("Ben Ali") == "Ben Ali"
    assert glue_particles("N'DIAYE") == "NDIAYE" and glue_particles("BEN ALI") == "BENALI"


def test_france_metadata_has_the_flaws_of_real_warehouses():
    world = WorldBuilder(
        random.Random(3), missing_professionals=0.1, missing_streets=0.1, geography="france", geo_rng=random.Random(4)
    )
    patients = [world.new_patient(k, f"P{k}", date(2023, 12, 31)) for k in range(150)]
    assert any(" " in p.birth_name or "-" in p.birth_name for p in patients)
    seen = Counter()
    for seed in range(10):
        for patient in patients:
            record = {
                "firstname": patient.given_names,
                "lastname": patient.usual_last,
                "address": "x",
                "zip": patient.address.postcode,
                "city": patient.address.commune.name,
            }
            add_flaws(record, patient, random.Random(seed))
            last = record["lastname"]
            seen["married"] += bool(re.search(r" (EP|ép\.|épouse|EPOUSE) ", last))
            seen["split first"] += "-" in patient.given_names and " " in record["firstname"]
            seen["old address"] += patient.old_address is not None and record["zip"] == patient.old_address.postcode
            seen["no accent"] += record["firstname"] != patient.given_names and record["firstname"].isascii()
            seen["second surname dropped"] += len(last) < len(patient.usual_last) and " EP" not in last.upper()
    assert all(seen[k] > 0 for k in ("married", "split first", "old address", "no accent", "second surname dropped")), (
        seen
    )


def test_synth_command_takes_the_geography_and_its_readme_says_french(tmp_path):
    out = tmp_path / "s"
    args = ["synth", "--notes", "12", "--seed", "4", "--out", str(out), "--geography", "france", "-q"]
    result = CliRunner().invoke(main, [*args, "--distractor-professionals", "0", "--distractor-streets", "1"])
    assert result.exit_code == 0, result.output
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "--geography france" in readme and "real French ones" in readme
    assert (out / "kb" / "adresses-974.csv.gz").exists()
    bad = CliRunner().invoke(main, ["synth", "--notes", "5", "--out", str(tmp_path / "b"), "--geography", "mars"])
    assert bad.exit_code != 0 and "Traceback" not in bad.output


def test_address_lines_give_each_named_place_its_own_line_and_span(generation):
    world: WorldBuilder = generation.world
    address = world.new_address(next(c for c in pools.france_communes() if c.insee == "69388"), home=True)
    address.building, address.staircase, address.place = "Bâtiment C", "Escalier 2", ""
    suffixes = set()
    for seed in range(60):
        lines = _context(generation, random.Random(seed)).address_lines(address)
        assert [line[0].value.lower() for line in lines[:2]] == ["bâtiment c", "escalier 2"]
        assert all(len(line) == 1 and line[0].label == "STR" for line in lines[:-1])
        zip_, space, city, *rest = lines[-1]
        assert (zip_.label, zip_.value, space, city.label, city.value.upper()) == ("ZIP", "69008", " ", "VILLE", "LYON")
        suffixes.update(rest)
    assert suffixes and all(re.fullmatch(r" 8(e|E|ème|ÈME)?", s) for s in suffixes), suffixes


def test_the_unseen_house_style_writes_the_france_addresses_with_clean_gold():
    corpus = generate_corpus(
        SynthConfig(notes=80, seed=29, phrasing="unseen", geography="france", distractor_professionals=0)
    )
    family_checks._assert_gold_reads_back(corpus)
    family_checks.test_spans_never_start_or_end_on_a_tag_a_space_or_nbsp(corpus)
    family_checks.test_spans_never_overlap(corpus)
    strs = [text for label, text, _ in _contexts(corpus) if label == "STR"]
    assert any(
        re.match(r"(?i)(bâtiment|bât\.|immeuble|escalier|esc\.|quartier|section|cité|lotissement) ", t) for t in strs
    )
    assert any(re.match(r"\d+-\d+", t) for t in strs)
