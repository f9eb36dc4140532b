"""``deid-ds calibrate`` end to end with the tiny real tagger of test_predict, ``predict`` with its thresholds,
the ``score`` column of ``spans.parquet``, and spans files written before it existed."""

from __future__ import annotations

import itertools
import json

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.ner.calibrate import GRID, merged_frame
from deid_ds.ner.hybrid import AGREED_SOURCE
from tests.conftest import REPO
from tests.ner.test_predict import no_network  # noqa: F401 - the network cut, as in the predict tests


def _run(args) -> str:
    result = CliRunner().invoke(main, [*map(str, args)])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def gold_file(tmp_path_factory, notes_file):
    """The sample's gold spans of the notes of ``notes_file``."""
    notes = pd.read_parquet(notes_file)
    gold = pd.read_parquet(REPO / "data" / "gold.parquet")
    path = tmp_path_factory.mktemp("gold") / "gold.parquet"
    gold[gold["id_document"].isin(notes["id_document"])].to_parquet(path)
    return path


@pytest.mark.slow
def test_calibrate_then_predict_with_its_threshold(model_dir, notes_file, gold_file, kb_dir, tmp_path):
    out = tmp_path / "calibration.json"
    output = _run(["calibrate", model_dir, notes_file, "--gold", gold_file, "--kb", kb_dir, "--out", out])
    assert "chosen threshold" in output
    written = json.loads(out.read_text())
    assert [point["add"] for point in written["curve"]] == list(GRID)
    chosen = written["chosen"]
    assert chosen["add"] in GRID and chosen["override"] == 0.9
    floor = written["rules"]["precision"] - written["tolerance"]
    if chosen["constraint_met"]:
        assert chosen["precision"] >= floor - 1e-9
        eligible = [p for p in written["curve"] if p["precision"] >= floor - 1e-9]
        assert chosen["redacted_recall"] == max(p["redacted_recall"] for p in eligible)
    # a lower threshold never redacts less
    recalls = [point["redacted_recall"] for point in written["curve"]]
    assert all(a >= b for a, b in itertools.pairwise(recalls))
    assert not (model_dir / "calibration.json").exists()  # the model directory is left as it is
    args = ["calibrate", model_dir, notes_file, "--gold", tmp_path / "none.parquet", "--kb", kb_dir, "--out", out]
    again = CliRunner().invoke(main, [str(arg) for arg in args])
    assert again.exit_code == 1 and json.loads(out.read_text()) == written  # a bad gold: one line, nothing replaced

    # predict with the calibration: the thresholds and where they came from, in report.json
    _run(
        ["predict", model_dir, notes_file, "--out", tmp_path / "hybrid", "--with-rules", kb_dir, "--quiet"]
        + ["--device", "cpu", "--workers", "1", "--calibration", out]
    )
    report = json.loads((tmp_path / "hybrid" / "report.json").read_text())
    assert report["thresholds"]["add"] == chosen["add"] and str(out) in report["thresholds"]["source"]
    spans = pd.read_parquet(tmp_path / "hybrid" / "spans.parquet")
    from_model = spans["source"].isin(["model", AGREED_SOURCE])
    assert spans.loc[~from_model, "score"].isna().all()
    assert ((spans.loc[from_model, "score"] > 0) & (spans.loc[from_model, "score"] <= 1)).all()
    assert (spans.loc[spans["source"] == "model", "score"] >= chosen["add"]).all()

    # the curve's point at the chosen threshold is what predict wrote
    from deid_ds.evaluation.scoring import score_spans

    gold = pd.read_parquet(gold_file)
    scores = score_spans(gold, spans, documents=sorted(set(gold["id_document"])))
    assert round(scores.redacted_recall, 6) == chosen["redacted_recall"]
    assert round(scores.micro.precision, 6) == chosen["precision"]

    # --threshold moves toward recall, and says so
    _run(
        ["predict", model_dir, notes_file, "--out", tmp_path / "recall", "--with-rules", kb_dir, "--quiet"]
        + ["--device", "cpu", "--workers", "1", "--calibration", out, "--threshold", "0"]
    )
    report = json.loads((tmp_path / "recall" / "report.json").read_text())
    assert report["thresholds"]["add"] == 0 and report["thresholds"]["source"].startswith("--threshold")
    assert (
        len(pd.read_parquet(tmp_path / "recall" / "spans.parquet"))
        >= len(spans) - (spans["source"] == AGREED_SOURCE).sum()
    )


@pytest.mark.slow
def test_model_spans_carry_a_score(model_dir, notes_file, tmp_path):
    _run(["predict", model_dir, notes_file, "--out", tmp_path / "out", "--quiet", "--device", "cpu", "--workers", "1"])
    spans = pd.read_parquet(tmp_path / "out" / "spans.parquet")
    assert len(spans) and ((spans["score"] > 0) & (spans["score"] <= 1)).all()
    assert json.loads((tmp_path / "out" / "report.json").read_text())["thresholds"] is None  # not a hybrid


def test_merged_frame_looks_up_the_html_offsets_of_the_spans_kept():
    model = {"d1": {(0, 5, "DOCTOR"): (10, 15, 0.95), (20, 25, "VILLE"): (30, 35, 0.2)}}
    rules = {"d1": {(0, 8, "PATIENT", "context:civility"): (10, 18)}}
    frame = merged_frame(model, rules, add=0.5, override=0.9)
    assert frame[["id_document", "label", "html_start", "html_end", "source", "score"]].values.tolist() == [
        ["d1", "DOCTOR", 10, 15, "model", 0.95]
    ]


def test_calibrate_never_replaces_a_file_it_did_not_write(tmp_path):
    card = tmp_path / "model_card.json"
    card.write_text('{"note": "a model card"}')
    args = ["calibrate", tmp_path, tmp_path, "--gold", tmp_path, "--kb", tmp_path, "--out", card]
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exit_code == 1 and "not written by deid-ds calibrate" in result.output
    assert card.read_text() == '{"note": "a model card"}'


def test_a_spans_file_without_the_score_column_still_reads(tmp_path):
    """Spans files written before the score column: evaluate and deidentify read them as before."""
    from deid_ds.deidentification.batch import read_spans_by_document
    from deid_ds.evaluation.evaluate import read_spans

    old = pd.DataFrame(
        {
            "id_document": ["1"],
            "id_patient": ["p"],
            "label": ["DATE"],
            "html_start": [3],
            "html_end": [13],
            "text_start": [0],
            "text_end": [10],
            "text": ["12/03/2020"],
            "source": ["pattern:date_numeric"],
        }
    )
    old.to_parquet(tmp_path / "spans.parquet")
    assert "score" not in pq.read_schema(tmp_path / "spans.parquet").names
    assert read_spans(tmp_path)["label"].tolist() == ["DATE"]
    assert list(read_spans_by_document(tmp_path / "spans.parquet")) == ["1"]
