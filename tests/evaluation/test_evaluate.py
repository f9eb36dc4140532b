"""``deid-ds evaluate``: hand-computed scores of two systems, inputs, names, JSON layout, figure.

Gold (offsets into the HTML):

    d1  PATIENT 10-20   DATE 30-40   VILLE 50-56
    d2  DOCTOR 0-5

System A finds d1's three entities exactly and nothing in d2: P 3/3, R 3/4, F1 6/7.
System B: PATIENT 10-20 exact, DATE 30-35 (cut short), STR 50-56 (wrong label), DOCTOR 0-5 exact, and a
span in d3, a document the gold does not hold (ignored): P 2/4, R 2/4, F1 0.5; lenient 3/4 (the cut
DATE overlaps its gold); redacted characters 10 + 5 + 6 + 5 = 26 of 31.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.errors import InputError
from deid_ds.evaluation import evaluate, read_spans, system_names
from tests.conftest import REPO


def frame(*rows, source: str | None = None) -> pd.DataFrame:
    data = pd.DataFrame([list(r) for r in rows], columns=["id_document", "label", "html_start", "html_end"])
    if source is not None:
        data["source"] = source
    return data


GOLD = frame(("d1", "PATIENT", 10, 20), ("d1", "DATE", 30, 40), ("d1", "VILLE", 50, 56), ("d2", "DOCTOR", 0, 5))
SYSTEM_A = frame(("d1", "PATIENT", 10, 20), ("d1", "DATE", 30, 40), ("d1", "VILLE", 50, 56), source="rules")
SYSTEM_B = frame(
    ("d1", "PATIENT", 10, 20),
    ("d1", "DATE", 30, 35),
    ("d1", "STR", 50, 56),
    ("d2", "DOCTOR", 0, 5),
    ("d3", "DATE", 0, 9),
    source="model",
)


@pytest.fixture
def inputs(tmp_path):
    """gold.parquet, sysA/spans.parquet (given as the file) and sysB/ (given as the directory)."""
    gold = tmp_path / "gold.parquet"
    GOLD.assign(doc_type=["letter", "letter", "letter", "report"]).to_parquet(gold)
    (tmp_path / "sysA").mkdir()
    (tmp_path / "sysB").mkdir()
    SYSTEM_A.to_parquet(tmp_path / "sysA" / "spans.parquet")
    SYSTEM_B.to_parquet(tmp_path / "sysB" / "spans.parquet")
    return gold, tmp_path / "sysA" / "spans.parquet", tmp_path / "sysB"


def test_two_systems_against_hand_computed_scores(inputs, tmp_path):
    gold, a, b = inputs
    result = evaluate(
        gold, [a, b], json_out=tmp_path / "out.json", figure=tmp_path / "out.png", n_bootstrap=300, seed=1
    )
    scores = result.comparison.scores
    assert list(scores) == ["sysA", "sysB"] and result.documents == 2
    micro_a, micro_b = scores["sysA"].micro, scores["sysB"].micro
    assert (micro_a.tp, micro_a.predicted, micro_a.gold) == (3, 3, 4)
    assert micro_a.precision == 1.0 and micro_a.recall == 0.75 and micro_a.f1 == pytest.approx(6 / 7)
    assert (micro_b.tp, micro_b.predicted, micro_b.gold) == (2, 4, 4)  # d3 is not a gold document
    assert micro_b.precision == micro_b.recall == micro_b.f1 == 0.5
    assert scores["sysB"].lenient_micro.tp == 3 and scores["sysB"].lenient_micro.f1 == 0.75
    assert scores["sysB"].exact["DATE"].f1 == 0.0 and scores["sysB"].exact["DOCTOR"].f1 == 1.0
    assert scores["sysB"].exact["STR"].precision == 0.0
    assert result.redaction_unit == "char"
    assert (scores["sysB"].redacted_gold, scores["sysB"].redacted_covered) == (31, 26)
    assert (scores["sysA"].redacted_gold, scores["sysA"].redacted_covered) == (31, 26)
    assert scores["sysA"].documents_fully_redacted == 1 and scores["sysB"].documents_fully_redacted == 1  # d1, d2
    # document types from the gold's column
    assert result.doc_types_from == "gold"
    assert (
        scores["sysA"].per_doc_type["letter"].counts.f1 == 1.0
        and scores["sysA"].per_doc_type["report"].counts.recall == 0.0
    )
    for name, s in scores.items():
        low, high = result.comparison.ci[name]
        assert low <= s.micro.f1 <= high


def test_json_layout_and_figure(inputs, tmp_path):
    gold, a, b = inputs
    evaluate(
        gold,
        [a, b],
        names=["rules", "model"],
        json_out=tmp_path / "out.json",
        figure=tmp_path / "out.png",
        n_bootstrap=200,
    )
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["documents"] == 2 and data["reference"] == "rules" and data["redaction_unit"] == "char"
    assert "gold's documents" in data["documents_evaluated"]
    assert data["bootstrap"] == {"resamples": 200, "seed": 0, "confidence": 0.95}
    assert list(data["systems"]) == ["rules", "model"]
    model = data["systems"]["model"]
    assert model["spans"].endswith("spans.parquet")
    assert model["exact"]["micro"] == {"gold": 4, "predicted": 4, "tp": 2, "precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert set(model["exact"]["per_label"]) >= {"PATIENT", "DOCTOR", "DATE", "EMAIL", "PHONE", "STR", "ZIP", "VILLE"}
    low, high = model["micro_f1_ci"]
    assert low <= 0.5 <= high
    assert data["systems"]["rules"]["delta_f1_ci"] == [0.0, 0.0]
    assert model["per_doc_type"]["report"]["f1"] == 1.0
    png = (tmp_path / "out.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


def test_same_seed_same_intervals(inputs):
    gold, a, b = inputs
    first = evaluate(gold, [a, b], n_bootstrap=200, seed=3).comparison.ci
    assert evaluate(gold, [a, b], n_bootstrap=200, seed=3).comparison.ci == first


def test_system_names_default_to_directories_and_are_unique(tmp_path):
    (tmp_path / "weak").mkdir()
    assert system_names(
        [tmp_path / "weak", tmp_path / "model" / "spans.parquet", tmp_path / "x" / "weak" / "spans.parquet"]
    ) == ["weak", "model", "weak-2"]
    assert system_names(["a/spans.parquet"], ["rules"]) == ["rules"]
    with pytest.raises(InputError, match="one name per system"):
        system_names(["a/spans.parquet", "b/spans.parquet"], ["rules"])
    with pytest.raises(InputError, match="distinct"):
        system_names(["a/spans.parquet", "b/spans.parquet"], ["x", "x"])


def test_inputs_are_checked(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_spans(tmp_path / "missing.parquet")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"holds no spans\.parquet"):
        read_spans(tmp_path / "empty")
    frame(("d1", "DATE", 0, 4)).drop(columns="label").to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(InputError, match="label"):
        read_spans(tmp_path / "bad.parquet")
    jsonl = tmp_path / "gold.jsonl"
    jsonl.write_text('{"id_document": 12, "label": "DATE", "html_start": 0, "html_end": 4}\n')
    assert read_spans(jsonl)["id_document"].tolist() == ["12"]


def test_cli_prints_the_side_by_side_table(inputs, tmp_path):
    gold, a, b = inputs
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--gold",
            str(gold),
            "--pred",
            str(a),
            "--pred",
            str(b),
            "--name",
            "rules",
            "--name",
            "model",
            "--bootstrap",
            "100",
            "--json",
            str(tmp_path / "e.json"),
            "--figure",
            str(tmp_path / "e.png"),
            "--verbose",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "2 documents evaluated: the gold's" in result.output
    assert "ΔF1 vs rules" in result.output and "F1 per label" in result.output and "per document type" in result.output
    assert (tmp_path / "e.json").is_file() and (tmp_path / "e.png").is_file()
    failed = CliRunner().invoke(main, ["evaluate", "--gold", str(tmp_path / "none.parquet"), "--pred", str(a)])
    assert failed.exit_code == 1 and "no such file" in failed.output and "Traceback" not in failed.output


def test_with_notes_redaction_is_token_level_and_types_come_from_the_notes(tmp_path):
    """On sample notes: the gold itself scores 1.0 everywhere; dropping one entity is seen per type."""
    gold = pd.read_parquet(REPO / "data" / "gold.parquet")
    chosen = sorted(gold["id_document"].unique())[:4]
    gold = gold[gold["id_document"].isin(chosen)].reset_index(drop=True)
    gold.to_parquet(tmp_path / "gold.parquet")
    (tmp_path / "perfect").mkdir()
    (tmp_path / "missing").mkdir()
    gold.to_parquet(tmp_path / "perfect" / "spans.parquet")
    gold.iloc[1:].to_parquet(tmp_path / "missing" / "spans.parquet")
    result = evaluate(
        tmp_path / "gold.parquet",
        [tmp_path / "perfect", tmp_path / "missing"],
        notes=REPO / "data" / "notes.parquet",
        n_bootstrap=100,
    )
    assert result.redaction_unit == "token" and result.doc_types_from == "notes" and result.notes_found == 4
    perfect, missing = result.comparison.scores["perfect"], result.comparison.scores["missing"]
    assert perfect.micro.f1 == 1.0 and perfect.redacted_recall == 1.0 and perfect.fully_redacted_share == 1.0
    assert missing.micro.tp == len(gold) - 1 and missing.redacted_covered < missing.redacted_gold
    assert missing.documents_fully_redacted == 3
    notes = pd.read_parquet(REPO / "data" / "notes.parquet", columns=["id_document", "doc_type"])
    types = set(notes[notes["id_document"].isin(chosen)]["doc_type"])
    assert set(perfect.per_doc_type) == types


def test_predictions_sharing_no_document_with_the_gold_are_refused(inputs, tmp_path):
    gold, a, _ = inputs
    SYSTEM_A.assign(id_document=SYSTEM_A["id_document"].str.upper()).to_parquet(tmp_path / "upper.parquet")
    args = ["evaluate", "--gold", str(gold), "--bootstrap", "10", "--json", str(tmp_path / "e.json")]
    systems = ["--pred", str(a), "--pred", str(tmp_path / "upper.parquet"), "--name", "rules", "--name", "upper"]
    result = CliRunner().invoke(main, [*args, *systems])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "predictions of upper: none of its 1 document(s) is among the 2 gold document(s)" in result.output
    assert "micro F1" not in result.output and not (tmp_path / "e.json").exists()
    SYSTEM_A.iloc[:0].to_parquet(tmp_path / "nothing.parquet")  # found nothing at all: scored, with a warning
    result = CliRunner().invoke(main, [*args, "--pred", str(tmp_path / "nothing.parquet")])
    assert result.exit_code == 0, result.output
    assert "no prediction on 2 of the 2 gold document(s)" in result.output


def test_a_partial_overlap_is_warned_about_with_counts(inputs, tmp_path):
    gold, a, b = inputs
    result = CliRunner().invoke(
        main, ["evaluate", "--gold", str(gold), "--pred", str(a), "--pred", str(b), "--bootstrap", "10", "-q"]
    )
    assert result.exit_code == 0, result.output
    # sysA predicts on d1 only; sysB on both gold documents (and d3, outside the gold: ignored, as documented)
    assert "warning: sysA: no prediction on 1 of the 2 gold document(s)" in result.output
    assert "0 of its 1 document(s) are not in the gold" in result.output
    assert "sysB: no prediction" not in result.output and "d2" not in result.output
