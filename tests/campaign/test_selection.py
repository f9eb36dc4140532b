"""``campaign --select``: the documents where the model and the rules disagree, or where the model is
least sure, come first within each document type; ``random`` stays the default."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.campaign.sampling import sample_documents
from deid_ds.campaign.selection import disagreement_score, uncertainty_score
from deid_ds.cli import main
from tests.conftest import REPO

NOTES = REPO / "data" / "notes.parquet"


@pytest.fixture(scope="module")
def weak_dir(tmp_path_factory) -> Path:
    from deid_ds import weak_label

    base = tmp_path_factory.mktemp("selection")
    notes = base / "notes.parquet"
    pq.write_table(pq.read_table(NOTES).slice(0, 40), notes)
    weak_label(notes, base / "weak", keep_empty=1.0, split=(0.5, 0.1, 0.4), progress=False, workers=1)
    return base / "weak"


def pool_by_type(weak_dir: Path) -> dict[str, list[str]]:
    """Test documents per type, as the campaign sees them."""
    table = pq.read_table(weak_dir / "sentences.parquet", columns=["meta", "split"]).to_pylist()
    by_type: dict[str, set[str]] = {}
    for row in table:
        if row["split"] == "test":
            by_type.setdefault(row["meta"].get("doc_type") or "", set()).add(str(row["meta"]["id_document"]))
    return {t: sorted(d) for t, d in by_type.items()}


def write_predictions(weak_dir: Path, out: Path, hard: set[str], source: str = "model") -> Path:
    """A `deid-ds predict` output on the same notes: the rules' spans, sure of themselves, except for the
    ``hard`` documents, where the model finds two entities of its own, unsure, and none of the rules'."""
    spans = pq.read_table(weak_dir / "spans.parquet").to_pylist()
    rows = []
    for span in spans:
        if span["id_document"] not in hard:
            rows.append({**span, "source": source, "score": 0.99})
    for document in sorted(hard):
        for start in (0, 10):
            rows.append(
                {
                    "id_document": document,
                    "id_patient": None,
                    "label": "PATIENT",
                    "html_start": start,
                    "html_end": start + 5,
                    "text_start": start,
                    "text_end": start + 5,
                    "text": "xxxxx",
                    "source": source,
                    "score": 0.4,
                }
            )
    out.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(weak_dir / "spans.parquet")), out / "spans.parquet")
    documents = pq.read_table(weak_dir / "documents.parquet", columns=["id_document", "status"])
    pq.write_table(documents, out / "documents.parquet")
    return out


def chosen_documents(out: Path) -> set[str]:
    with (out / "assignments.csv").open(encoding="utf-8") as handle:
        return {row["id_document"] for row in csv.DictReader(handle)}


def test_disagreement_counts_the_entities_only_one_side_found():
    rules = [(0, 5, "PATIENT"), (10, 20, "DATE")]
    model = [(0, 5, "PATIENT"), (10, 20, "HOSPITAL"), (30, 35, "CITY")]
    assert disagreement_score(rules, model) == 3  # DATE (rules), HOSPITAL and CITY (model)
    assert disagreement_score(rules, rules) == 0


def test_uncertainty_is_the_expected_number_of_wrong_model_entities():
    assert uncertainty_score([0.5, 0.75]) == pytest.approx(0.75)
    assert uncertainty_score([]) == 0.0


def test_priority_ranks_within_each_type_and_keeps_the_random_order_on_ties():
    documents = {f"d{i}": ("a" if i < 6 else "b") for i in range(12)}
    random = sample_documents(documents, 2, seed=3)
    flat = sample_documents(documents, 2, seed=3, priority=dict.fromkeys(documents, 1.0))
    assert flat.chosen == random.chosen
    ranked = sample_documents(documents, 2, seed=3, priority={"d5": 3.0, "d4": 2.0, "d7": 1.0})
    assert ranked.chosen["a"] == ["d5", "d4"]
    assert ranked.chosen["b"][0] == "d7" and len(ranked.chosen["b"]) == 2


@pytest.mark.parametrize("select", ["disagreement", "uncertainty"])
def test_campaign_select_takes_the_hard_documents_of_each_type(weak_dir, tmp_path, select):
    by_type = pool_by_type(weak_dir)
    runner = CliRunner()
    base = ["campaign", str(weak_dir), "-a", "alice,bob", "--per-type", "1", "--seed", "1", "-q"]
    result = runner.invoke(main, [*base, "-o", str(tmp_path / "random")])
    assert result.exit_code == 0, result.output
    randomly = chosen_documents(tmp_path / "random")
    # per type, a document the random draw did not take
    hard = {next(d for d in docs if d not in randomly) for docs in by_type.values() if len(docs) > 1}
    predictions = write_predictions(weak_dir, tmp_path / "predict", hard)
    result = runner.invoke(
        main, [*base, "-o", str(tmp_path / select), "--select", select, "--predictions", str(predictions)]
    )
    assert result.exit_code == 0, result.output
    chosen = chosen_documents(tmp_path / select)
    assert hard <= chosen and len(chosen) == len(by_type)
    options = json.loads((tmp_path / select / "campaign.json").read_text(encoding="utf-8"))["options"]
    assert options["select"] == select


def test_campaign_select_refuses_what_it_cannot_score(weak_dir, tmp_path):
    runner = CliRunner()
    base = ["campaign", str(weak_dir), "-a", "alice", "--per-type", "1"]
    result = runner.invoke(main, [*base, "-o", str(tmp_path / "a"), "--select", "disagreement"])
    assert result.exit_code == 1 and "--predictions" in result.output
    hybrid = write_predictions(weak_dir, tmp_path / "hybrid", set(), source="model+rules")
    result = runner.invoke(
        main, [*base, "-o", str(tmp_path / "b"), "--select", "uncertainty", "--predictions", str(hybrid)]
    )
    assert result.exit_code == 1 and "without --with-rules" in result.output
    assert "Traceback" not in result.output
