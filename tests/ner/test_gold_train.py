"""``train --gold-train GOLD``: corrected documents train with their gold instead of their weak labels, the
model card lists them, and ``evaluate`` never scores them (nor the documents ``calibrate`` used)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.ner.gold_train import mix_gold
from tests.conftest import REPO

NOTES = 30


@pytest.fixture(autouse=True)
def no_network(cut_network):
    """Every test here runs with the network cut (see ``conftest.cut_network``)."""


@pytest.fixture(scope="module")
def weak_dir(tmp_path_factory) -> Path:
    """The first sample notes weak-labelled (no knowledge base: the relabelling does not depend on it),
    every sentence kept, so that every gold entity is in some sentence."""
    from deid_ds import weak_label

    base = tmp_path_factory.mktemp("gold-train")
    pq.write_table(pq.read_table(REPO / "data" / "notes.parquet").slice(0, NOTES), base / "notes.parquet")
    weak_label(base / "notes.parquet", base / "weak", workers=1, progress=False, keep_empty=1.0)
    return base / "weak"


def split_documents(weak_dir: Path) -> dict[str, list[str]]:
    rows = pq.read_table(weak_dir / "sentences.parquet", columns=["meta", "split"]).to_pylist()
    found: dict[str, set[str]] = {}
    for row in rows:
        found.setdefault(row["split"], set()).add(str(row["meta"]["id_document"]))
    return {split: sorted(documents) for split, documents in found.items()}


def gold_of(documents: list[str], path: Path) -> Path:
    gold = pd.read_parquet(REPO / "data" / "gold.parquet")
    gold[gold["id_document"].isin(documents)].to_parquet(path)
    return path


def tagged_sentences(weak_dir: Path, split: str, folder: Path) -> dict[str, list[list[str]]]:
    """Per document, the tags of its sentences in ``folder/split.txt`` (read beside weak's sentences.parquet)."""
    rows = pq.read_table(weak_dir / "sentences.parquet", columns=["meta", "split"]).to_pylist()
    ids = [str(r["meta"]["id_document"]) for r in rows if r["split"] == split]
    blocks = [b.splitlines() for b in (folder / f"{split}.txt").read_text(encoding="utf-8").split("\n\n") if b.strip()]
    found: dict[str, list[list[str]]] = {}
    for document, block in zip(ids, blocks):
        found.setdefault(document, []).append([line.rsplit(None, 1)[-1] for line in block])
    return found


def test_gold_documents_take_the_gold_tags_and_leave_test(weak_dir, tmp_path):
    splits = split_documents(weak_dir)
    chosen = splits["train"][:2] + splits["test"][:1]
    gold = gold_of(chosen, tmp_path / "gold.parquet")
    record = mix_gold(weak_dir, tmp_path / "mixed", gold)
    assert record["documents"] == sorted(chosen)
    assert record["moved_from_test_to_train"] == 1 and record["in_no_sentence"] == 0
    weak = tagged_sentences(weak_dir, "train", weak_dir)
    mixed = tagged_sentences(weak_dir, "train", tmp_path / "mixed")  # train's own sentences keep their place
    for document in splits["train"]:
        if document not in chosen:
            assert mixed[document] == weak[document]
    gold_frame = pd.read_parquet(gold)
    for document in chosen[:2]:
        entities = sum(tag.startswith("B-") for tags in mixed[document] for tag in tags)
        assert entities == (gold_frame["id_document"] == document).sum()
    # the test document left test.txt for the end of train.txt, with its gold
    blocks = (tmp_path / "mixed" / "train.txt").read_text(encoding="utf-8").split("\n\n")
    n_weak_train = sum(len(tags) for tags in weak.values())
    moved = [b for b in blocks[n_weak_train:] if b.strip()]
    test_rows = pq.read_table(weak_dir / "sentences.parquet", columns=["meta", "split"]).to_pylist()
    assert len(moved) == sum(1 for r in test_rows if r["split"] == "test" and r["meta"]["id_document"] == chosen[2])
    assert (
        sum(line.rsplit(None, 1)[-1].startswith("B-") for b in moved for line in b.splitlines())
        == (gold_frame["id_document"] == chosen[2]).sum()
    )
    test_text = (tmp_path / "mixed" / "test.txt").read_text(encoding="utf-8")
    assert len([b for b in test_text.split("\n\n") if b.strip()]) == sum(
        1 for r in test_rows if r["split"] == "test" and r["meta"]["id_document"] != chosen[2]
    )


def test_train_refuses_gold_of_other_documents_and_the_synthetic_mix(weak_dir, tmp_path):
    gold = pd.DataFrame({"id_document": ["elsewhere"], "label": ["DATE"], "html_start": [0], "html_end": [4]})
    gold.to_parquet(tmp_path / "gold.parquet")
    args = ["train", str(weak_dir), "--out", str(tmp_path / "m"), "--gold-train", str(tmp_path / "gold.parquet")]
    result = CliRunner().invoke(main, [*args, "--max-epochs", "1", "--device", "cpu"])
    assert result.exit_code == 1 and "none of the gold's documents" in result.output
    result = CliRunner().invoke(main, [*args, "--synthetic", "2"])
    assert result.exit_code == 1 and "one or the other" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "m").exists()


@pytest.mark.slow
def test_train_gold_train_through_the_cli_lists_the_documents_in_the_card(weak_dir, tmp_path):
    splits = split_documents(weak_dir)
    chosen = splits["train"][:3]
    gold = gold_of(chosen, tmp_path / "gold.parquet")
    model = tmp_path / "model"
    result = CliRunner().invoke(
        main,
        ["train", str(weak_dir), "--out", str(model), "--gold-train", str(gold)]
        + ["--hidden", "8", "--max-epochs", "1", "--threads", "1", "--device", "cpu", "--no-char"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "gold-train: 3 document(s) relabelled" in result.output
    card = json.loads((model / "model_card.json").read_text(encoding="utf-8"))
    assert card["data"]["gold_train"]["documents"] == chosen


def write_predict_output(folder: Path, model: Path, gold: pd.DataFrame, calibration: Path | None = None) -> Path:
    """A `deid-ds predict` output in its format: the spans, and report.json naming the model (and thresholds)."""
    folder.mkdir()
    gold.assign(source="model", score=0.9).to_parquet(folder / "spans.parquet")
    thresholds = (
        None if calibration is None else {"add": 0.5, "override": 0.9, "source": "x", "calibration": str(calibration)}
    )
    (folder / "report.json").write_text(json.dumps({"model": str(model / "best-model.pt"), "thresholds": thresholds}))
    return folder


def test_evaluate_leaves_out_the_documents_the_model_was_trained_or_calibrated_on(tmp_path):
    gold = pd.read_parquet(REPO / "data" / "gold.parquet")
    documents = sorted(gold["id_document"].unique())[:6]
    gold = gold[gold["id_document"].isin(documents)]
    gold.to_parquet(tmp_path / "gold.parquet")
    model = tmp_path / "model"
    model.mkdir()
    (model / "model_card.json").write_text(json.dumps({"data": {"gold_train": {"documents": documents[:2]}}}))
    (tmp_path / "calibration.json").write_text(json.dumps({"chosen": {}, "documents": documents[2:3]}))
    predictions = write_predict_output(tmp_path / "pred", model, gold, tmp_path / "calibration.json")
    out = tmp_path / "scores.json"
    result = CliRunner().invoke(
        main, ["evaluate", "--gold", str(tmp_path / "gold.parquet"), "--pred", str(predictions), "--json", str(out)]
    )
    assert result.exit_code == 0, result.output + result.stderr
    assert "3 gold document(s) left out" in result.stderr
    scores = json.loads(out.read_text(encoding="utf-8"))
    assert scores["documents"] == 3 and scores["documents_left_out_trained_or_calibrated_on"] == 3
    # trained on every gold document: nothing left to score, refused
    (model / "model_card.json").write_text(json.dumps({"data": {"gold_train": {"documents": documents}}}))
    result = CliRunner().invoke(
        main, ["evaluate", "--gold", str(tmp_path / "gold.parquet"), "--pred", str(predictions)]
    )
    assert result.exit_code == 1 and "nothing left to score" in result.stderr
