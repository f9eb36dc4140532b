"""build-kb's communes table (centroid, postcodes, address count, size) and ``--population``: what
``deidentify --privacy dp`` draws similar communes from. Checked against the BAN files themselves, read here
independently with the csv module."""

from __future__ import annotations

import csv
import gzip
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.errors import InputError
from deid_ds.kb.build import build_kb, read_table, verify_tables
from deid_ds.kb.fingerprint import kb_fingerprint
from deid_ds.kb.population import read_population
from tests.conftest import REPO

SOURCES = REPO / "kb" / "sources"
FRANCE = Path(__file__).parent / "fixtures" / "adresses-all-france.csv"


def ban_rows(paths) -> list[dict]:
    rows = []
    for path in paths:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", newline="") as handle:
            rows += list(csv.DictReader(handle, delimiter=";"))
    return rows


@pytest.fixture(scope="module")
def france_kb(tmp_path_factory):
    out = tmp_path_factory.mktemp("kb")
    build_kb(out, ban=[str(FRANCE)], progress=False, matcher=False)
    return out


def test_each_commune_of_the_sample_has_its_centroid_address_count_and_postcodes(kb_dir):
    rows = ban_rows(sorted(SOURCES.glob("adresses-*.csv.gz")))
    expected: dict[str, dict] = defaultdict(
        lambda: {"n": 0, "lat": 0.0, "lon": 0.0, "postcodes": set(), "names": set()}
    )
    streets: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        if row["nom_voie"] and not any(c.isdigit() for c in row["nom_voie"]):
            streets[row["code_insee"]][row["nom_voie"]] += 1
        commune = expected[row["code_insee"]]
        commune["n"] += 1
        commune["lat"] += float(row["lat"])
        commune["lon"] += float(row["lon"])
        commune["postcodes"].add(row["code_postal"])
        commune["names"].add(row["nom_commune"])
    table = {row["code_insee"]: row for row in read_table(kb_dir, "communes").to_pylist()}
    assert set(table) == set(expected) and len(table) > 100
    for code, want in expected.items():
        got = table[code]
        assert got["addresses"] == want["n"] == got["size"] and got["size_source"] == "addresses"
        assert got["lat"] == pytest.approx(want["lat"] / want["n"], abs=1e-6)
        assert got["lon"] == pytest.approx(want["lon"] / want["n"], abs=1e-6)
        assert set(got["postcodes"]) == want["postcodes"] and got["commune"] in want["names"]
        assert got["population"] is None
        most = sorted(streets[code].items(), key=lambda item: (-item[1], item[0]))[:16]  # the most addressed
        assert got["streets"] == sorted(name for name, _ in most)
    brest = next(row for row in table.values() if row["commune_key"] == "brest")
    assert 48.0 < brest["lat"] < 48.8 and -5.0 < brest["lon"] < -4.0


def test_paris_lyon_and_marseille_are_whole_cities_with_the_centroid_of_all_their_addresses(france_kb):
    table = {row["code_insee"]: row for row in read_table(france_kb, "communes").to_pylist()}
    assert not any(code.startswith("751") for code in table) and "75113" not in table
    paris = table["75056"]
    assert paris["commune"] == "Paris" and paris["addresses"] == 2 and paris["postcodes"] == ["75013", "75015"]
    assert paris["lat"] == pytest.approx((48.832104 + 48.840815) / 2) and paris["lon"] == pytest.approx(
        (2.344612 + 2.313214) / 2
    )
    assert table["69123"]["commune"] == "Lyon" and table["13055"]["commune"] == "Marseille"
    assert table["97411"]["addresses"] == 2 and table["97411"]["lat"] == pytest.approx(-20.884821)
    assert table["2A004"]["postcodes"] == ["20000"]


def test_the_manifest_lists_the_communes_table_with_the_others(france_kb):
    manifest = verify_tables(france_kb)
    assert "communes" in manifest["tables"] and manifest["tables"]["communes"]["rows"] == 6


# ------------------------------------------------------------------------------------------------ --population


def write(tmp_path, name: str, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_a_population_file_gives_the_size_where_known_and_the_addresses_elsewhere(tmp_path):
    population = write(
        tmp_path,
        "populations.csv",
        "COM;PMUN;PTOT\n75113;181 552;183 000\n75115;230 981;233 000\n76351;166 462;170 000\n2A004;73 000;74 000\n"
        "99999;12;12\n;5;5\n",
    )
    out = tmp_path / "kb"
    build_kb(out, ban=[str(FRANCE)], progress=False, matcher=False, population=population)
    table = {row["code_insee"]: row for row in read_table(out, "communes").to_pylist()}
    paris = table["75056"]
    assert paris["population"] == 181_552 + 230_981 == paris["size"] and paris["size_source"] == "population"
    assert table["76351"]["size"] == 166_462 and table["2A004"]["size"] == 73_000
    lyon = table["69123"]
    assert lyon["population"] is None and lyon["size"] == lyon["addresses"] == 1 and lyon["size_source"] == "addresses"
    source = verify_tables(out)["sources"][-1]
    assert source["base"] == "population" and source["rows_read"] == 6 and source["rows_kept"] == 5
    assert source["rejected"] == {"no INSEE code": 1} and source["joined_on"] == ["com", "pmun"]
    # the size changes the table: the fingerprint of the knowledge base says so
    plain = tmp_path / "plain"
    build_kb(plain, ban=[str(FRANCE)], progress=False, matcher=False)
    assert kb_fingerprint(out) != kb_fingerprint(plain)


@pytest.mark.parametrize(
    ("text", "encoding", "expected"),
    [
        ("CODGEO,LIBGEO,P21_POP\n29019,Brest,139456.0\n75056,Paris,2133111\n", "utf-8", {"29019": 139_456}),
        # "populations légales" donnees_communes.csv: COM holds the name, the code is DEP + CODCOM
        (
            "REG;Région;DEP;CODARR;CODCAN;CODCOM;COM;PMUN;PCAP;PTOT\n53;Bretagne;29;1;1;019;Brest;139 456;1;140 000\n"
            "01;Guadeloupe;971;1;1;05;Basse-Terre;9 800;1;10 000\n",
            "latin-1",
            {"29019": 139_456, "97105": 9_800},
        ),
        ("\ufeffcode_insee;population\n2A004;73000\n", "utf-8", {"2A004": 73_000}),
    ],
)
def test_the_accepted_population_files(tmp_path, text, encoding, expected):
    people = read_population(write(tmp_path, "p.csv", text, encoding))
    assert {code: people.by_code[code] for code in expected} == expected


def test_a_city_row_wins_over_the_sum_of_its_arrondissements(tmp_path):
    people = read_population(write(tmp_path, "p.csv", "CODGEO;PMUN\n75056;2100000\n75101;15000\n75102;20000\n"))
    assert people.by_code == {"75056": 2_100_000}
    people = read_population(write(tmp_path, "q.csv", "CODGEO;PMUN\n69381;30000\n69382;28000\n"))
    assert people.by_code == {"69123": 58_000}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty file"),
        ("nom;habitants\nBrest;139456\n", "expected an INSEE code column"),
        ("COM;PMUN\nBrest;139456\n", "expected an INSEE code column"),  # a COM column of names
        ("CODGEO;PMUN\n29019;beaucoup\n", "no row with an INSEE code and a population number"),
        ("<html><body>Not found</body></html>\n", "expected an INSEE code column"),
    ],
)
def test_a_bad_population_file_is_refused_with_one_line_before_anything_is_built(tmp_path, text, message):
    path = write(tmp_path, "bad.csv", text)
    with pytest.raises(InputError, match=message) as refused:
        build_kb(tmp_path / "kb", ban=[str(FRANCE)], progress=False, matcher=False, population=path)
    assert "\n" not in str(refused.value) and "139456" not in str(refused.value)
    assert not (tmp_path / "kb" / "manifest.json").exists()


def test_build_kb_population_through_the_cli(tmp_path):
    good = write(tmp_path, "pop.csv", "CODGEO;PMUN\n75113;181552\n")
    result = CliRunner().invoke(
        main, ["build-kb", "--out", str(tmp_path / "kb"), "--ban", str(FRANCE), "--population", str(good), "-q"]
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "kb" / "manifest.json").read_text(encoding="utf-8"))
    assert [s["base"] for s in manifest["sources"]] == ["ban", "population"]
    bad = write(tmp_path, "bad.csv", "a;b\n1;2\n")
    result = CliRunner().invoke(
        main, ["build-kb", "--out", str(tmp_path / "kb2"), "--ban", str(FRANCE), "--population", str(bad)]
    )
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "--population" in result.output and "expected an INSEE code column" in result.output


def test_an_arrondissement_written_with_the_citys_name_joins_the_whole_city(tmp_path):
    """A BAN that writes ``Paris`` with the arrondissements' codes (as the generator does) gives one Paris too."""
    header = FRANCE.read_text(encoding="utf-8").splitlines()[0]
    lines = [header]
    for code, postcode, lon, lat in (("75101", "75001", "2.34", "48.86"), ("75102", "75002", "2.35", "48.87")):
        fields = dict.fromkeys(header.split(";"), "")
        fields.update(
            nom_voie="Rue de Rivoli", code_postal=postcode, code_insee=code, nom_commune="Paris", lon=lon, lat=lat
        )
        lines.append(";".join(fields.values()))
    ban = write(tmp_path, "adresses-75.csv", "\n".join(lines) + "\n")
    build_kb(tmp_path / "kb", ban=[str(ban)], progress=False, matcher=False)
    (paris,) = read_table(tmp_path / "kb", "communes").to_pylist()
    assert paris["code_insee"] == "75056" and paris["addresses"] == 2 and paris["postcodes"] == ["75001", "75002"]
    assert paris["lat"] == pytest.approx(48.865) and paris["lon"] == pytest.approx(2.345)
    assert paris["streets"] == ["Rue de Rivoli"]  # one street of both arrondissements
