"""Places under ``--privacy dp``: a commune drawn among its similar ones, its postcode and streets following it,
the same surrogate in every note of the patient, what falls outside the mechanism (a city abroad, a commune the
knowledge base does not know, no knowledge base) and the default mode left as it was. On the knowledge base built
from ``kb/sources`` (the ``kb_dir`` fixture)."""

from __future__ import annotations

import math
import re

import pytest

from deid_ds.deidentification.context import Context
from deid_ds.deidentification.document import SpanIn, deidentify_document
from deid_ds.deidentification.foreign_cities import cities_of, country_of
from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.metadata import surrogate_metadata
from deid_ds.deidentification.places import (
    SPENT_ABROAD,
    SPENT_COMMUNE,
    SPENT_UNPROTECTED,
    commune_for,
    dp_places_warning,
    similar_places,
    surrogate_city,
    surrogate_street,
    surrogate_zip,
)
from deid_ds.deidentification.pools import load_pools
from deid_ds.deidentification.privacy import Privacy
from deid_ds.deidentification.similar_communes import nearest
from deid_ds.kb.normalize import fold_key
from deid_ds.model import PatientMetadata
from deid_ds.segmentation.html_text import html_to_text

KEY = b"dp-places-test-key-0123456789"
DP = Privacy("dp", epsilon=2.0, k=6)
PATIENT = PatientMetadata(
    firstname="Anne", lastname="KERBRAT", address="4 Allée Du Guesclin", zip="29200", city="Brest"
)


def context(kb_dir, scope="patient:P1", patient=PATIENT, privacy=DP, key=KEY) -> Context:
    return Context(Keyring(key), load_pools(str(kb_dir) if kb_dir else None), scope, patient, privacy=privacy)


def spent(ctx: Context) -> dict:
    return dict(ctx.memory.get("dp_spent", {}))


def test_a_commune_becomes_one_of_its_k_most_similar_and_its_epsilon_is_recorded(kb_dir):
    ctx = context(kb_dir)
    index = similar_places(ctx).index
    candidates = {index.names[j] for j, _ in nearest(index, index.find("quimper"), DP.k)}
    surrogate = surrogate_city(ctx, "QUIMPER")
    assert surrogate.isupper() and fold_key(surrogate) in {fold_key(c) for c in candidates}  # in the note's case
    assert spent(ctx) == {(SPENT_COMMUNE, "quimper"): DP.epsilon}


def test_the_same_commune_gets_the_same_surrogate_in_every_note_of_the_patient_and_with_the_key(kb_dir):
    first = surrogate_city(context(kb_dir), "Quimper")
    for spelling in ("QUIMPER", "quimper"):
        assert fold_key(surrogate_city(context(kb_dir), spelling)) == fold_key(first)  # another note, same draw
    others = {surrogate_city(context(kb_dir, scope=f"patient:P{i}"), "Quimper") for i in range(40)}
    assert len(others) > 1  # another patient, another draw
    keys = {
        surrogate_city(context(kb_dir, key=f"another-key-{i:02d}-0123456789".encode()), "Quimper") for i in range(40)
    }
    assert len(keys) > 1


def test_the_postcode_and_the_street_follow_the_surrogate_commune(kb_dir):
    ctx = context(kb_dir)
    similar = similar_places(ctx)
    commune = commune_for(ctx, "quimper")
    assert surrogate_zip(ctx, "29000", "Quimper") in commune.postcodes
    street = surrogate_street(ctx, "12 rue de Kerfeunteun", "Quimper")
    number, name = re.fullmatch(r"(\d+) (.+)", street).groups()
    assert len(number) == 2 and number != "12"
    assert name in similar.streets_of(commune.code)  # a real street of the surrogate town, type word included
    assert surrogate_street(ctx, "12 rue de Kerfeunteun", "QUIMPER") == street  # the same street again


def test_the_patients_address_follows_their_surrogate_city_in_the_metadata_and_in_the_note(kb_dir):
    ctx = context(kb_dir)
    similar = similar_places(ctx)
    fake = surrogate_metadata(ctx)
    commune = commune_for(ctx, "brest")
    assert fake["city"] == commune.name and fake["zip"] in commune.postcodes
    assert re.sub(r"^\d+ ", "", fake["address"]) in similar.streets_of(commune.code)
    assert surrogate_street(context(kb_dir), "4 Allée Du Guesclin") == fake["address"]  # written without a city


def test_in_a_note_the_street_city_and_postcode_of_one_address_stay_together(kb_dir):
    html = "<p>Adresse : 7 rue de Siam, 29000 Quimper. Née à Porto.</p>"
    spans = [
        SpanIn(label, html.index(text), html.index(text) + len(text))
        for label, text in (("STR", "7 rue de Siam"), ("ZIP", "29000"), ("VILLE", "Quimper"), ("VILLE", "Porto"))
    ]
    ctx = context(kb_dir, patient=PatientMetadata())
    outcome = deidentify_document(html_to_text(html), spans, ctx, "surrogate")
    match = re.search(r"Adresse : (\d+) ([^,]+), (\d{5}) ([^.]+)\. Née à ([^.<]+)", outcome.html)
    assert match, outcome.html
    _, street, postcode, town, abroad = match.groups()
    similar = similar_places(ctx)
    code = similar.index.codes[similar.index.find(fold_key(town))]
    assert (
        street in similar.streets_of(code) and postcode in similar.index.postcodes[similar.index.find(fold_key(town))]
    )
    assert country_of(fold_key(abroad)) == "portugal" and abroad != "Porto"


def test_a_city_abroad_becomes_a_city_of_the_same_country_outside_the_guarantee(kb_dir):
    ctx = context(kb_dir)
    for city, country in (("Casablanca", "maroc"), ("Genève", "suisse"), ("Varsovie", "pologne")):
        surrogate = surrogate_city(ctx, city)
        assert surrogate in cities_of(country) and surrogate != city
        assert spent(ctx)[(SPENT_ABROAD, fold_key(city))] == math.inf
    assert surrogate_zip(ctx, "20000", "Casablanca") != "20000"  # no French postcode for it: keyed digits


def test_a_commune_the_knowledge_base_does_not_know_is_drawn_as_before_and_counted_unprotected(kb_dir):
    ctx = context(kb_dir)
    shift = context(kb_dir, privacy=Privacy())
    assert surrogate_city(ctx, "Quimperr") == surrogate_city(shift, "Quimperr")  # a misspelling: today's draw
    assert spent(ctx) == {(SPENT_UNPROTECTED, "quimperr"): math.inf}


def test_without_a_knowledge_base_dp_falls_back_visibly(kb_dir):
    ctx = context(None)
    assert similar_places(ctx) is None
    assert surrogate_city(ctx, "Quimper") == surrogate_city(context(None, privacy=Privacy()), "Quimper")
    assert spent(ctx) == {(SPENT_UNPROTECTED, "quimper"): math.inf}
    warning = dp_places_warning(None, DP)
    assert "no --kb" in warning and "without the ε·d guarantee" in warning and "Quimper" not in warning
    assert dp_places_warning(None, Privacy()) is None and dp_places_warning(str(kb_dir), DP) is None


def test_a_knowledge_base_built_before_the_communes_table_falls_back_with_a_warning(kb_dir, tmp_path):
    import shutil

    old = tmp_path / "old-kb"
    shutil.copytree(kb_dir, old)
    (old / "communes.parquet").unlink()
    ctx = context(old)
    assert similar_places(ctx) is None and "rebuild it with build-kb" in dp_places_warning(str(old), DP)
    surrogate_city(ctx, "Quimper")
    assert spent(ctx) == {(SPENT_UNPROTECTED, "quimper"): math.inf}


@pytest.mark.parametrize("text", ["12 rue de Kerfeunteun", "Lieu-dit Kerléan", "Kerléan", "BP 123"])
def test_the_default_mode_is_unchanged_by_the_city_a_street_is_written_with(kb_dir, text):
    shift = context(kb_dir, privacy=Privacy())
    assert surrogate_street(shift, text, "Quimper") == surrogate_street(shift, text)
    assert surrogate_city(shift, "Quimper") and spent(shift) == {}


def test_the_surrogate_is_never_the_patients_own_commune(kb_dir):
    """Brest is the patient's city: Quimper, whose candidates include Brest, never becomes Brest for them."""
    index = similar_places(context(kb_dir)).index
    assert "Brest" in {index.names[j] for j, _ in nearest(index, index.find("quimper"), DP.k)}
    candidates = {fold_key(index.names[j]) for j, _ in nearest(index, index.find("quimper"), DP.k)}
    for i in range(60):
        ctx = context(kb_dir, scope=f"patient:Q{i}")
        surrogate = fold_key(surrogate_city(ctx, "Quimper"))
        assert surrogate != "brest" and surrogate in candidates  # drawn again among the others, not given up
        assert spent(ctx) == {(SPENT_COMMUNE, "quimper"): DP.epsilon}


def test_with_groups_a_commune_becomes_another_of_its_group(kb_dir):
    from deid_ds.deidentification.similar_communes import groups

    privacy = Privacy("dp", epsilon=2.0, k=6, neighbourhood="groups")
    index = similar_places(context(kb_dir)).index
    group = groups(index, 6)
    quimper = index.find("quimper")
    members = {fold_key(index.names[j]) for j in range(len(index)) if group[j] == group[quimper] and j != quimper}
    for i in range(30):
        ctx = context(kb_dir, scope=f"patient:G{i}", patient=PatientMetadata(), privacy=privacy)
        assert fold_key(surrogate_city(ctx, "Quimper")) in members


def test_an_unknown_neighbourhood_is_refused():
    from deid_ds.errors import InputError

    with pytest.raises(InputError, match="nearest, groups"):
        Privacy("dp", neighbourhood="circles")


def test_a_batch_under_dp_keeps_one_surrogate_per_commune_across_the_patients_notes_and_leaks_nothing(kb_dir):
    from deid_ds.deidentification.batch import DeidJob, DeidOptions, deidentify_batch
    from deid_ds.model import Note

    patient = PatientMetadata(firstname="Anne", lastname="KERBRAT", zip="29000", city="Quimper")
    htmls = [
        "<p>Mme Anne KERBRAT, domiciliée 29000 Quimper.</p>",
        "<p>Revue à Quimper ce jour. Transfert prévu vers Brest.</p>",
    ]
    notes = [Note(f"d{i}", "P1", html, patient=patient) for i, html in enumerate(htmls)]
    spans = []
    for html in htmls:
        found = [("PATIENT", "Anne KERBRAT"), ("ZIP", "29000"), ("VILLE", "Quimper"), ("VILLE", "Brest")]
        spans.append([SpanIn(label, html.index(t), html.index(t) + len(t)) for label, t in found if t in html])
    options = DeidOptions("surrogate", Keyring(KEY), str(kb_dir), keep_metadata="surrogate", privacy=DP)
    # every span of the patient's notes, as the stage gives them: what no surrogate may be, in each note alike
    entities = {"patient:P1": (("PATIENT", "Anne KERBRAT"), ("ZIP", "29000"), ("VILLE", "Quimper"), ("VILLE", "Brest"))}
    result = deidentify_batch(DeidJob(notes, None, spans, frozenset(), options, entities))
    assert result.ok == [0, 1] and result.leaks.total == 0, result.html
    first = re.search(r"29\d{3} ([^.]+)\.", result.html[0]) or re.search(r"\d{5} ([^.]+)\.", result.html[0])
    town = first.group(1)
    assert re.search(rf"Revue à {re.escape(town)} ce jour", result.html[1]), (town, result.html[1])
    assert result.metadata["city"][0] == result.metadata["city"][1] and fold_key(
        result.metadata["city"][0]
    ) == fold_key(town)
    index = similar_places(context(kb_dir)).index
    candidates = {fold_key(index.names[j]) for j, _ in nearest(index, index.find("quimper"), DP.k)}
    assert fold_key(town) in candidates - {"brest"} and "Quimper" not in " ".join(result.html)


def test_deidentify_privacy_dp_with_a_knowledge_base_through_the_cli(kb_dir, tmp_path):
    """The sample's first 30 notes and their gold spans, ``--privacy dp --kb``: every commune the knowledge base
    knows is ε-protected (counted in the report), the patients' surrogate cities are among the k nearest of their
    own, nothing leaks, and the same run without ``--kb`` warns and counts the communes unprotected."""
    import json

    import pandas as pd
    import pyarrow.parquet as pq
    from click.testing import CliRunner

    from deid_ds.cli import main
    from tests.conftest import REPO

    notes = pq.read_table(REPO / "data" / "notes.parquet").slice(0, 30).to_pandas()
    gold = pd.read_parquet(REPO / "data" / "gold.parquet")
    notes.to_parquet(tmp_path / "notes.parquet")
    gold[gold["id_document"].isin(notes["id_document"])].to_parquet(tmp_path / "gold.parquet")

    def run(out, *options):
        args = ["deidentify", str(tmp_path / "notes.parquet"), "--spans", str(tmp_path / "gold.parquet")]
        args += ["--out", str(tmp_path / out), "-j", "1", "--key", "k-test-key-not-secret", "--privacy", "dp"]
        return CliRunner().invoke(main, [*args, "--k", "5", "--keep-metadata", "surrogate", *options])

    result = run("with-kb", "--kb", str(kb_dir), "-q")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "with-kb" / "report.json").read_text())
    assert report["leaks"]["total"] == 0 and report["privacy"]["values_per_kind"]["commune"] > 0
    assert "commune" not in report["privacy"]["unprotected_values_per_kind"]
    index = similar_places(context(kb_dir)).index
    written = pq.read_table(tmp_path / "with-kb" / "notes.parquet", columns=["id_document", "city"]).to_pylist()
    original = dict(zip(notes["id_document"], notes["city"]))
    checked = 0
    for row in written:
        i = index.find(fold_key(original[row["id_document"]] or ""))
        if i is not None and row["city"]:
            assert fold_key(row["city"]) in {fold_key(index.names[j]) for j, _ in nearest(index, i, 5)}
            checked += 1
    assert checked > 10
    # --dp-neighbourhood groups: each patient's city becomes another commune of its group
    from deid_ds.deidentification.similar_communes import groups

    assert run("groups", "--kb", str(kb_dir), "-q", "--dp-neighbourhood", "groups").exit_code == 0
    group = groups(index, 5)
    written = pq.read_table(tmp_path / "groups" / "notes.parquet", columns=["id_document", "city"]).to_pylist()
    in_group = 0
    for row in written:
        i, j = index.find(fold_key(original[row["id_document"]] or "")), index.find(fold_key(row["city"] or ""))
        if i is not None and j is not None:
            assert group[i] == group[j] and i != j
            in_group += 1
    assert in_group > 10
    plain = run("without-kb")
    assert plain.exit_code == 0 and "WARNING --privacy dp: no --kb" in plain.output
    report = json.loads((tmp_path / "without-kb" / "report.json").read_text())
    assert report["privacy"]["unprotected_values_per_kind"]["commune:unprotected"] > 0
