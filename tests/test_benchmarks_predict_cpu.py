"""benchmarks/predict_cpu.py's notes: joined two by two within each patient by default, as they are with
``--unpaired`` (notes of ~3 KB already), copied under new ids up to ``--min-notes``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "predict_cpu.py"
NOTES = ROOT / "data" / "notes.parquet"
sys.path.insert(0, str(SCRIPT.parent))
spec = importlib.util.spec_from_file_location("predict_cpu", SCRIPT)
predict_cpu = importlib.util.module_from_spec(spec)
sys.modules.setdefault("predict_cpu", predict_cpu)
spec.loader.exec_module(predict_cpu)


def test_unpaired_notes_are_the_notes_as_they_are_copied_under_new_ids(tmp_path):
    original = pq.read_table(NOTES).to_pylist()
    table = pq.read_table(predict_cpu.corpus(NOTES, tmp_path, len(original) + 1, unpaired=True)).to_pylist()
    assert len(table) == 2 * len(original)
    assert [row["html"] for row in table] == [row["html"] for row in original] * 2
    assert table[0]["id_document"] == original[0]["id_document"] + "~0"
    assert len({row["id_document"] for row in table}) == len(table)


def test_by_default_the_notes_are_joined_two_by_two_within_each_patient(tmp_path):
    original = pq.read_table(NOTES).to_pylist()
    table = pq.read_table(predict_cpu.corpus(NOTES, tmp_path, 1)).to_pylist()
    assert len(original) / 2 <= len(table) < len(original)
    assert sum(len(row["html"]) for row in table) > sum(len(row["html"]) for row in original)
