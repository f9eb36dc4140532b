"""``deid-ds predict`` and the hybrid mode: tag conversion, the merge policy, and end to end with a tiny
real Flair tagger trained here (characters only, hidden size 8, on weak labels of sample notes).

Every test runs with the network cut (sockets, urllib, requests and Flair's downloader raise).
"""

from __future__ import annotations

import itertools
import json
import random
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.errors import InputError
from deid_ds.model import LABELS
from deid_ds.ner.hybrid import AGREED_SOURCE, merge_spans, rule_wins
from deid_ds.ner.predict import model_file, sentence_entities, tags_to_spans
from deid_ds.segmentation.html_text import html_to_text
from tests.conftest import MODEL_NOTES as N_NOTES
from tests.conftest import REPO


@pytest.fixture(autouse=True)
def no_network(cut_network):
    """Every test here runs with the network cut (see ``conftest.cut_network``)."""


# ------------------------------------------------------------------------------------ tags → spans


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["O", "B-DATE", "I-DATE", "O"], [(1, 2, "DATE")]),
        (["B-PATIENT", "B-PATIENT"], [(0, 0, "PATIENT"), (1, 1, "PATIENT")]),
        (["I-DOCTOR", "I-DOCTOR", "O"], [(0, 1, "DOCTOR")]),  # I- without B- starts an entity
        (["O", "I-DATE"], [(1, 1, "DATE")]),
        (["B-STR", "I-STR", "I-VILLE", "I-VILLE"], [(0, 1, "STR"), (2, 3, "VILLE")]),  # label switch
        (["B-ZIP", "I-VILLE"], [(0, 0, "ZIP"), (1, 1, "VILLE")]),
        (["S-ZIP", "B-VILLE", "E-VILLE", "S-VILLE"], [(0, 0, "ZIP"), (1, 2, "VILLE"), (3, 3, "VILLE")]),  # BIOES
        (["B-DATE", "E-DATE", "E-DATE"], [(0, 1, "DATE"), (2, 2, "DATE")]),
        (["DATE", "DATE", "O", "PHONE"], [(0, 1, "DATE"), (3, 3, "PHONE")]),  # bare labels
        (["B-EMAIL", "<unk>", "I-EMAIL"], [(0, 0, "EMAIL"), (2, 2, "EMAIL")]),
        (["B-DATE", "I-DATE"], [(0, 1, "DATE")]),  # open at the end
        ([], []),
        (["O", "O"], []),
    ],
)
def test_tags_to_spans(tags, expected):
    assert tags_to_spans(tags) == expected


def test_sentence_entities_reads_flair_spans_and_token_tags():
    from flair.data import Sentence

    spans = Sentence(["Vu", "le", "12/03/2020", "par", "Dr", "Yann", "KERBRAT"])
    spans[2:3].add_label("ner", "DATE", 0.75)
    spans[5:7].add_label("ner", "DOCTOR")  # Flair's default score: 1.0
    assert sentence_entities(spans, "ner") == [(2, 2, "DATE", 0.75), (5, 6, "DOCTOR", 1.0)]
    tokens = Sentence(["Dr", "Yann", "KERBRAT", "Brest"])
    for token, tag, score in zip(tokens, ["O", "I-DOCTOR", "I-DOCTOR", "B-VILLE"], [0.9, 0.5, 1.0, 0.25]):
        token.add_label("ner", tag, score)
    # a run of token tags scores the mean of its tokens' scores (Flair's own rule for its spans)
    assert sentence_entities(tokens, "ner") == [(1, 2, "DOCTOR", 0.75), (3, 3, "VILLE", 0.25)]
    assert sentence_entities(Sentence(["rien"]), "ner") == []


# ---------------------------------------------------------------------------------------- hybrid


def test_rule_sources_that_win():
    for source in (
        "metadata:lastname",
        "pattern:email",
        "pattern:phone_fr",
        "pattern:date_written",
        "pattern:zip_city",
        "address:street",
    ):
        assert rule_wins(source), source
    for source in (
        "context:title",
        "gazetteer:commune",
        "propagation:DOCTOR",
        "patient:lastname",
        "pattern:dictation_initials",
        "model",
    ):
        assert not rule_wins(source), source


def test_merge_policy_on_hand_made_spans():
    model = [
        (0, 10, "DATE", "model"),  # identical to a rule span: agreement
        (20, 30, "PATIENT", "model"),  # overlaps a metadata span: the rule wins
        (40, 55, "DOCTOR", "model"),  # overlaps a context-cue span: the model wins
        (60, 65, "VILLE", "model"),  # alone
        (70, 80, "STR", "model"),  # same offsets as a street line, other label: the rule wins
    ]
    rules = [
        (0, 10, "DATE", "pattern:date_numeric"),
        (22, 30, "PATIENT", "metadata:lastname"),
        (44, 60, "PATIENT", "context:civility"),
        (70, 80, "VILLE", "address:city_after_zip"),
        (90, 95, "ZIP", "pattern:zip_city"),  # alone
        (100, 110, "VILLE", "gazetteer:commune"),  # alone
    ]
    assert merge_spans(model, rules) == [
        (0, 10, "DATE", AGREED_SOURCE),
        (22, 30, "PATIENT", "metadata:lastname"),
        (40, 55, "DOCTOR", "model"),
        (60, 65, "VILLE", "model"),
        (70, 80, "VILLE", "address:city_after_zip"),
        (90, 95, "ZIP", "pattern:zip_city"),
        (100, 110, "VILLE", "gazetteer:commune"),
    ]


def test_a_rule_span_holding_the_model_span_of_its_label_keeps_the_whole_identifier():
    # "Patiente : Marine Mireille RENAULT": the model found "Mireille RENAULT", the identity rule all three
    # words; the hybrid redacts the three (policy 3), and the model still wins where it disagrees
    model = [(18, 34, "PATIENT", "model"), (50, 60, "DOCTOR", "model"), (70, 75, "PATIENT", "model")]
    rules = [
        (11, 34, "PATIENT", "context:identity"),
        (48, 60, "PATIENT", "context:civility"),
        (72, 80, "PATIENT", "context:civility"),
    ]
    assert merge_spans(model, rules) == [
        (11, 34, "PATIENT", AGREED_SOURCE),
        (50, 60, "DOCTOR", "model"),  # another label: the model wins (policy 4)
        (70, 75, "PATIENT", "model"),  # the rule span does not hold the model's: the model wins
    ]


def test_merge_keeps_a_weak_rule_span_when_the_model_span_it_overlapped_lost():
    """A model span dropped for a strong rule span no longer blocks a weak one beside it."""
    model = [(0, 20, "DOCTOR", "model")]
    rules = [(0, 8, "PHONE", "pattern:phone_fr"), (10, 20, "DOCTOR", "context:title")]
    assert merge_spans(model, rules) == [(0, 8, "PHONE", "pattern:phone_fr"), (10, 20, "DOCTOR", "context:title")]
    assert merge_spans([], rules) == sorted(rules) and merge_spans(model, []) == model and merge_spans([], []) == []


def _no_overlap(spans):
    ordered = sorted(spans)
    return all(a[1] <= b[0] for a, b in itertools.pairwise(ordered))


def _disjoint_spans(rng, sources, n):
    """Random disjoint spans on [0, 200) with labels and sources drawn from the lists."""
    cuts = sorted(rng.sample(range(200), 2 * n))
    return [(cuts[2 * i], cuts[2 * i + 1], rng.choice(LABELS[:3]), rng.choice(sources)) for i in range(n)]


def test_merge_is_independent_of_input_order_and_never_overlaps():
    rng = random.Random(7)
    rule_sources = ["metadata:name", "pattern:date_numeric", "context:title", "gazetteer:commune", "address:street"]
    for _ in range(200):
        model = _disjoint_spans(rng, ["model"], rng.randint(0, 6))
        rules = _disjoint_spans(rng, rule_sources, rng.randint(0, 6))
        if model and rules and rng.random() < 0.5:  # force some agreements
            s, e, label, _ = rng.choice(model)
            rules = [r for r in rules if r[1] <= s or r[0] >= e] + [(s, e, label, rng.choice(rule_sources))]
        expected = merge_spans(model, rules)
        assert _no_overlap(expected)
        for m, r in itertools.islice(zip(itertools.permutations(model), itertools.permutations(rules)), 6):
            assert merge_spans(list(m), list(r)) == expected
        shuffled_m, shuffled_r = model[:], rules[:]
        rng.shuffle(shuffled_m)
        rng.shuffle(shuffled_r)
        assert merge_spans(shuffled_m, shuffled_r) == expected
        # nothing is invented: every output span comes from an input
        originals = {(s, e, label) for s, e, label, _ in model + rules}
        assert {(s, e, label) for s, e, label, _ in expected} <= originals


# ----------------------------------------------------------------------------- the tiny model


def _predict(args) -> str:
    result = CliRunner().invoke(main, ["predict", *map(str, args), "--verbose", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def predicted(tmp_path_factory, model_dir, notes_file) -> Path:
    out = tmp_path_factory.mktemp("predicted") / "out"
    _predict([model_dir, notes_file, "--out", out, "--workers", "1", "--batch-size", "5"])
    return out


@pytest.mark.slow
def test_predict_end_to_end(predicted, notes_file):
    from deid_ds.weak_labelling.schemas import spans_schema

    spans = pq.read_table(predicted / "spans.parquet")
    assert spans.schema.equals(spans_schema())
    frame = spans.to_pandas()
    assert len(frame) > 0, "the tiny model should find something"
    assert set(frame["source"]) == {"model"} and set(frame["label"]) <= set(LABELS)
    notes = pd.read_parquet(notes_file)
    documents = pd.read_parquet(predicted / "documents.parquet")
    assert len(documents) == len(notes)  # every note accounted for
    status = dict(zip(documents["id_document"].iloc[N_NOTES:], documents["status"].iloc[N_NOTES:]))
    assert status["no-html"] == "failed" and status["blank"] == "empty"
    assert documents["error"].iloc[-1].startswith("duplicate id_document")
    assert (documents["status"].iloc[:N_NOTES] == "ok").all()
    assert documents.groupby("id_document")["n_entities"].sum().sum() == len(frame)
    html = dict(zip(notes["id_document"].iloc[:N_NOTES], notes["html"].iloc[:N_NOTES]))
    for row in frame.itertuples():
        fragment = html_to_text(html[row.id_document][row.html_start : row.html_end]).text
        assert " ".join(fragment.split()) == " ".join(row.text.split())  # a fragment alone keeps its line breaks
        assert row.text_start < row.text_end
    for _, group in frame.groupby("id_document"):
        assert _no_overlap(list(zip(group["text_start"], group["text_end"])))
    report = json.loads((predicted / "report.json").read_text())
    assert report["documents"] == len(notes) and report["ok"] == N_NOTES and report["entities"] == len(frame)
    assert report["sentences"] > 0 and report["sentences_per_second"] > 0 and report["device"] == "cpu"
    assert sum(report["entities_per_label"].values()) == len(frame)


@pytest.mark.slow
def test_predict_tokens_are_the_labellers(predicted, model_dir, notes_file):
    """Sentences and tokens are those of weak-label: same counts per note as its documents table."""
    weak = (
        pd.read_parquet(model_dir.parent / "weak" / "documents.parquet")
        .drop_duplicates("id_document")
        .set_index("id_document")
    )
    ours = pd.read_parquet(predicted / "documents.parquet").iloc[:N_NOTES].set_index("id_document")
    assert (ours["n_sentences"] == weak.loc[ours.index, "n_sentences"]).all()
    assert (ours["n_tokens"] == weak.loc[ours.index, "n_tokens"]).all()


@pytest.mark.slow
def test_workers_do_not_change_the_output(predicted, model_dir, notes_file, tmp_path):
    _predict([model_dir, notes_file, "--out", tmp_path / "two", "--workers", "2", "--batch-size", "5"])
    for name in ("spans.parquet", "documents.parquet"):
        assert pq.read_table(tmp_path / "two" / name).equals(pq.read_table(predicted / name)), name


@pytest.mark.slow
def test_hybrid_is_the_merge_of_model_and_rules(predicted, model_dir, notes_file, kb_dir, tmp_path):
    from deid_ds import weak_label

    output = _predict([model_dir, notes_file, "--out", tmp_path / "hybrid", "--with-rules", kb_dir, "--workers", "1"])
    assert "hybrid" in output and "source" in output
    weak_label(notes_file, tmp_path / "rules", kb=kb_dir, progress=False, workers=1)
    hybrid = pd.read_parquet(tmp_path / "hybrid" / "spans.parquet")
    model = pd.read_parquet(predicted / "spans.parquet")
    rules = pd.read_parquet(tmp_path / "rules" / "spans.parquet")
    columns = ["text_start", "text_end", "label", "source"]
    assert set(hybrid["source"]) - {"model", AGREED_SOURCE}, "rule sources expected"
    for document in sorted(set(hybrid["id_document"]) | set(model["id_document"]) | set(rules["id_document"])):

        def of(frame, document=document):
            return [tuple(r) for r in frame.loc[frame["id_document"] == document, columns].itertuples(index=False)]

        assert [tuple(r) for r in of(hybrid)] == merge_spans(of(model), of(rules)), document
    documents = pd.read_parquet(tmp_path / "hybrid" / "documents.parquet")
    assert len(documents) == len(pd.read_parquet(notes_file))


@pytest.mark.slow
def test_with_rules_warns_about_a_knowledge_base_of_other_departements(model_dir, notes_file, kb_dir, tmp_path):
    built = CliRunner().invoke(
        main, ["build-kb", "--ban", str(REPO / "kb" / "sources" / "adresses-22.csv.gz"), "--out", str(tmp_path / "kb")]
    )
    assert built.exit_code == 0, built.output
    args = [model_dir, notes_file, "--with-rules", tmp_path / "kb", "--kb", kb_dir, "--workers", "1"]
    output = _predict([*args, "--out", tmp_path / "other"])
    coverage = json.loads((tmp_path / "other" / "report.json").read_text())["kb_coverage"]
    assert coverage["kb_departements"] == ["22"] and coverage["share"] < 0.8
    assert f"warning: predict --with-rules: the knowledge base covers {coverage['share']:.0%}" in output
    output = _predict([*args[:3], kb_dir, *args[4:], "--out", tmp_path / "breton"])
    assert json.loads((tmp_path / "breton" / "report.json").read_text())["kb_coverage"]["share"] == 1.0
    assert "knowledge base covers" not in output


@pytest.mark.slow
def test_with_rules_refuses_a_knowledge_base_table_that_does_not_match_its_manifest(
    model_dir, notes_file, kb_dir, tmp_path
):
    kb = tmp_path / "kb"
    shutil.copytree(kb_dir, kb)
    from deid_ds.kb.matcher import ensure_matcher_cache

    ensure_matcher_cache(kb)  # a current matcher cache, which alone would not notice the change below
    pq.write_table(pq.read_table(kb / "places.parquet").slice(1), kb / "places.parquet")
    out = tmp_path / "hybrid"
    result = CliRunner().invoke(
        main,
        [
            "predict",
            str(model_dir),
            str(notes_file),
            "--out",
            str(out),
            "--with-rules",
            str(kb),
            "--quiet",
            "--device",
            "cpu",
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 1, result.output
    assert (
        f"{kb / 'places.parquet'}: does not match manifest.json" in result.output and "Traceback" not in result.output
    )
    assert not out.exists()


@pytest.mark.slow
def test_predict_then_evaluate(predicted, model_dir, notes_file, tmp_path):
    gold = pd.read_parquet(REPO / "data" / "gold.parquet")
    ids = set(pd.read_parquet(notes_file)["id_document"].iloc[:N_NOTES])
    gold[gold["id_document"].isin(ids)].to_parquet(tmp_path / "gold.parquet")
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--gold",
            str(tmp_path / "gold.parquet"),
            "--pred",
            str(model_dir.parent / "weak"),
            "--pred",
            str(predicted),
            "--name",
            "rules",
            "--name",
            "model",
            "--bootstrap",
            "50",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"{N_NOTES} documents evaluated" in result.output


def test_model_file_and_bad_models(tmp_path, notes_file):
    with pytest.raises(InputError, match="not found"):
        model_file(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no best-model\.pt or final-model\.pt"):
        model_file(tmp_path / "empty")
    (tmp_path / "final").mkdir()
    (tmp_path / "final" / "final-model.pt").write_bytes(b"")
    assert model_file(tmp_path / "final").name == "final-model.pt"
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "best-model.pt").write_bytes(b"not a model")
    result = CliRunner().invoke(
        main,
        [
            "predict",
            str(tmp_path / "bad"),
            str(notes_file),
            "--out",
            str(tmp_path / "out"),
            "--quiet",
            "--device",
            "cpu",
        ],
    )
    assert result.exit_code == 1 and "not a Flair SequenceTagger" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()
