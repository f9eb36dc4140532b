"""``deid-ds synth`` writes the people around the patient (relatives, neighbours, guardians, friends) in many
phrasings and in every export style, with exact gold, labelled as the guidelines say, under names of many origins
that neither the knowledge base nor the labeller's lists hold; the corpora of the older families stay as they were."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.kb.build import build_kb
from deid_ds.kb.normalize import fold
from deid_ds.label.labeller import WeakLabeller
from deid_ds.model import PATIENT_FIELDS, PatientMetadata
from deid_ds.resources import read_word_list
from deid_ds.segmentation.html_text import html_to_text
from deid_ds.segmentation.tokens import tokenize
from deid_ds.synth import SynthConfig, generate_corpus, pools, write_corpus
from deid_ds.synth.third_parties import third_party_names
from tests.synth import test_synth as family_checks  # a module, not its tests: they would run twice
from tests.synth.test_synth_geography import _digest, _small

#: sha256 (16 hex digits) of small export corpora before the passages existed (commit 56d80b6)
_EXPORTS_BEFORE = {"exports": "8c96e509973d3bf5", "exports-heldout": "3b14b9a2e13149f1"}


@pytest.fixture(scope="module")
def exports():
    """The export styles' development family: a passage in 40 % of its notes by default."""
    return generate_corpus(SynthConfig(notes=160, seed=3, noise=0.8, phrasing="exports"))


@pytest.fixture(scope="module")
def prose():
    """The hospital's own templates (family 0) with passages asked for."""
    return generate_corpus(SynthConfig(notes=80, seed=4, noise=0.8, phrasing="train", third_parties=0.6))


def _third_party_spans(corpus):
    """(extracted text, gold row, text start, text end) of the spans of the people around the patients."""
    for text, span, start, end in family_checks._spans_in_text(corpus):
        if (span["id_document"], span["html_start"]) in corpus.third_parties:
            yield text, span, start, end


def _names_known_to_the_lists() -> set[str]:
    """Every word of the generator's other name pools and of the labeller's epicene list, folded."""
    words = set(pools.surnames()) | {n for names in pools.first_names().values() for n in names}
    words |= {n for kinds in pools.origin_names().values() for names in kinds.values() for n in names}
    words |= set(read_word_list("first_names_epicene_fr.txt"))
    return {part for name in words for part in re.split(r"[\s'-]+", fold(name)) if part}


@pytest.mark.parametrize("name", ["exports", "prose"])
def test_third_party_gold_reads_back_exactly_and_never_overlaps(name, request):
    corpus = request.getfixturevalue(name)
    spans = list(_third_party_spans(corpus))
    assert len(spans) > 60
    for text, span, start, end in spans:
        assert text[start:end] == span["text"], span
    family_checks._assert_gold_reads_back(corpus)
    family_checks.test_spans_never_overlap(corpus)
    family_checks.test_spans_never_start_or_end_on_a_tag_a_space_or_nbsp(corpus)


def test_people_of_the_patients_private_life_are_patient_and_social_workers_doctor(exports, prose):
    labels = {"PATIENT": 0, "DOCTOR": 0}
    for corpus in (exports, prose):
        for text, span, start, _ in _third_party_spans(corpus):
            if span["label"] == "PHONE":
                continue
            labels[span["label"]] += 1
            before = fold(text[max(0, start - 40) : start])
            paid = re.search(r"sociale?s? \(|auxiliaire de vie \(", before) is not None
            assert (span["label"] == "DOCTOR") == paid, (span["label"], before)
    assert labels["PATIENT"] > 10 * labels["DOCTOR"] > 0


def test_passages_take_every_phrasing_and_every_export_style(exports, prose):
    texts = [fold(html_to_text(n["html"]).text) for c in (exports, prose) for n in c.notes]
    joined = "\n".join(texts)
    for phrase in (
        "personne de confiance",  # a field
        r"aidante? principale? :",
        r"(entourage|famille|contacts) :",  # a list
        r"sous (tutelle|curatelle)|mesure de protection",
        r"d'apres (son|sa) \w+ \w+, «",  # reported speech
        "passe tous les jours",
        r"les \w+ \(voisins\)",  # the surname alone
        r"ses enfants, \w+ et \w+,",  # given names alone
        "qui a donne l'alerte",
        r"(contacter|joindre|prevenir) (son|sa) ",
        r"vit (avec|seule? depuis le depart de) (son|sa) ",
        r", (fille|fils|epouse|epoux|soeur|frere|niece|neveu|voisine?|amie?|compagne|compagnon|[a-z-]+) d[ue] ",
        "ne pas donner d'informations a",
        r"(sociale?|auxiliaire de vie) \(",  # the paid carers, DOCTOR
    ):
        assert re.search(phrase, joined), phrase
    cases = {"upper": 0, "lower": 0, "mixed": 0}
    for _, span, _, _ in _third_party_spans(exports):
        if span["label"] == "PATIENT" and len(span["text"]) > 3:
            value = span["text"]
            cases["upper" if value.isupper() else "lower" if value.islower() else "mixed"] += 1
    assert min(cases.values()) >= 5, cases  # capital letters and fixed-width lines, dictation, prose and PDFs


def test_names_are_of_many_origins_and_mostly_unknown_to_the_lists_and_the_kb(exports, tmp_path):
    write_corpus(exports, tmp_path)
    directory = fold((tmp_path / "kb" / next(p.name for p in (tmp_path / "kb").glob("PS_*"))).read_text("utf-8"))
    known = _names_known_to_the_lists()
    origin_of = {
        fold(name): origin
        for origin, kinds in third_party_names().items()
        for names in kinds.values()
        for name in names
    }
    names = [s["text"] for _, s, _, _ in _third_party_spans(exports) if s["label"] == "PATIENT"]
    words = [w for name in names for w in re.split(r"[\s'.-]+", fold(name)) if len(w) > 2]
    unknown = [w for w in words if w not in known]
    assert len(unknown) > 0.3 * len(words)  # 0.42 measured: kin share the patient's surname, a quarter from the pools
    assert sum(f"|{w}|" not in directory for w in unknown) > 0.9 * len(unknown)  # the Annuaire lists professionals
    origins = {origin_of[fold(n)] for n in names if fold(n) in origin_of}
    assert len(origins) >= 8, origins


def test_the_labeller_finds_third_parties_less_often_than_the_patient(exports, tmp_path):
    """What the passages are for: no metadata and no list names these people, only the context does. Measured
    (docs/synth.md): the patient's own names 0.98, the people around them 0.70 on 500 export notes."""
    write_corpus(exports, tmp_path / "s")
    sources = sorted(str(p) for p in (tmp_path / "s" / "kb").iterdir())
    build_kb(
        tmp_path / "kb",
        ban=[s for s in sources if "adresses" in s],
        health_directory=[s for s in sources if "PS_" in s],
        offline=True,
        progress=False,
    )
    labeller = WeakLabeller.from_kb(tmp_path / "kb")
    gold_of: dict[str, list[dict]] = {}
    for row in exports.gold:
        gold_of.setdefault(row["id_document"], []).append(row)
    found = {"third": [0, 0], "patient": [0, 0]}
    for note in exports.notes:
        parsed = html_to_text(note["html"])
        patient = PatientMetadata(**{field: note[field] for field in PATIENT_FIELDS})
        spans = [(c.start, c.end) for c in labeller.label(parsed.text, tokenize(parsed.text), patient)]
        for row in gold_of.get(note["id_document"], []):
            if row["label"] == "PATIENT":
                start, end = parsed.text_span(row["html_start"], row["html_end"])
                key = "third" if (row["id_document"], row["html_start"]) in exports.third_parties else "patient"
                found[key][0] += any(a <= start and end <= b for a, b in spans)
                found[key][1] += 1
    recall = {key: hit / total for key, (hit, total) in found.items()}
    assert recall["patient"] > 0.95 and recall["third"] < recall["patient"] - 0.1, recall


def test_older_families_and_the_held_out_exports_get_no_passage_unless_asked():
    for phrasing in ("train", "heldout", "unseen", "exports-heldout"):
        assert not generate_corpus(
            SynthConfig(notes=12, seed=2, phrasing=phrasing, distractor_professionals=0)
        ).third_parties
    assert SynthConfig().third_party_share(0) == 0 and SynthConfig().third_party_share(3) > 0
    assert SynthConfig(third_parties=0).third_party_share(3) == 0


def test_export_corpora_are_what_they_were_without_passages():
    """A passage draws from a stream of its own: the held-out family is unchanged, and the development family
    with ``--third-parties 0`` too (notes, gold and knowledge-base files)."""
    assert _digest(generate_corpus(_small("exports-heldout"))) == _EXPORTS_BEFORE["exports-heldout"]
    config = _small("exports")
    assert _digest(generate_corpus(config)) != _EXPORTS_BEFORE["exports"]
    assert _digest(generate_corpus(replace(config, third_parties=0.0))) == _EXPORTS_BEFORE["exports"]


def test_synth_command_writes_passages_when_asked_and_says_so_in_the_readme(tmp_path):
    runner = CliRunner()
    common = ["synth", "--notes", "30", "--seed", "5", "--distractor-professionals", "0"]
    plain = runner.invoke(main, [*common, "--out", str(tmp_path / "plain")])
    asked = runner.invoke(main, [*common, "--third-parties", "1", "--out", str(tmp_path / "asked")])
    assert plain.exit_code == 0 and asked.exit_code == 0, asked.output
    html = [pq.read_table(tmp_path / d / "notes.parquet").column("html").to_pylist() for d in ("plain", "asked")]
    assert sum(a != b for a, b in zip(*html, strict=True)) > 20  # a passage in (nearly) every note
    assert "--third-parties 1" in Path(tmp_path / "asked" / "README.md").read_text("utf-8")
    bad = runner.invoke(main, [*common, "--third-parties", "1.5", "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "--third-parties" in bad.output and "Traceback" not in bad.output
