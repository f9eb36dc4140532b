"""tools/compare_revisions.py's comparison: what counts as identical, and how a difference is reported.

Fast: small Parquet and JSON files written here; the script's CLI runs (two whole pipelines) are not run.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

TOOL = Path(__file__).resolve().parents[1] / "tools" / "compare_revisions.py"
spec = importlib.util.spec_from_file_location("compare_revisions", TOOL)
compare_revisions = importlib.util.module_from_spec(spec)
sys.modules["compare_revisions"] = compare_revisions
spec.loader.exec_module(compare_revisions)


def write_output(directory: Path, rows: list[dict], report: dict, marker: str = "{}") -> Path:
    """An output directory as the commands write it: a Parquet table, a JSON report, a text file, a marker."""
    directory.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), directory / "spans.parquet")
    (directory / "report.json").write_text(json.dumps(report))
    (directory / "train.txt").write_text("Jean B-PER\nDupont I-PER\n")
    (directory / ".deid-ds.json").write_text(marker)
    return directory


ROWS = [{"id_document": "d1", "label": "PER", "start": 3}, {"id_document": "d2", "label": "DATE", "start": 7}]


def test_two_runs_differing_only_in_markers_and_timings_are_identical(tmp_path):
    a = write_output(tmp_path / "a", ROWS, {"notes": 2, "seconds": 1.5, "notes_per_second": 1.3}, '{"t": 1}')
    b = write_output(tmp_path / "b", ROWS, {"notes": 2, "seconds": 9.1, "notes_per_second": 0.2}, '{"t": 2}')
    assert compare_revisions.compare_dirs(a, b) is None


def test_a_changed_parquet_cell_names_the_file_column_and_row(tmp_path):
    changed = [ROWS[0], dict(ROWS[1], start=8)]
    a = write_output(tmp_path / "a", ROWS, {"notes": 2})
    b = write_output(tmp_path / "b", changed, {"notes": 2})
    assert compare_revisions.compare_dirs(a, b) == "spans.parquet: column start, row 1: 7 != 8"


def test_a_changed_report_value_names_its_key_path(tmp_path):
    a = write_output(tmp_path / "a", ROWS, {"entities": {"PER": 1, "DATE": 1}, "seconds": 1})
    b = write_output(tmp_path / "b", ROWS, {"entities": {"PER": 2, "DATE": 1}, "seconds": 2})
    assert compare_revisions.compare_dirs(a, b) == "report.json: $.entities.PER: 1 != 2"


def test_a_changed_text_file_names_the_byte_and_line(tmp_path):
    a = write_output(tmp_path / "a", ROWS, {})
    b = write_output(tmp_path / "b", ROWS, {})
    (b / "train.txt").write_text("Jean B-PER\nDupond I-PER\n")
    assert compare_revisions.compare_dirs(a, b) == "train.txt: byte 16 (line 2): b't I-PER\\n' != b'd I-PER\\n'"


def test_a_missing_or_extra_file_is_a_difference(tmp_path):
    a = write_output(tmp_path / "a", ROWS, {})
    b = write_output(tmp_path / "b", ROWS, {})
    (b / "extra.txt").write_text("")
    assert compare_revisions.compare_dirs(a, b) == "files differ: only before [], only after ['extra.txt']"
    assert compare_revisions.compare_dirs(a, tmp_path / "none").startswith("missing output")


def test_a_parquet_schema_change_is_reported_before_the_rows(tmp_path):
    a = write_output(tmp_path / "a", ROWS, {})
    b = write_output(tmp_path / "b", [dict(r, extra=1) for r in ROWS], {})
    assert compare_revisions.compare_dirs(a, b) == (
        "spans.parquet: columns ['id_document', 'label', 'start'] != ['id_document', 'label', 'start', 'extra']"
    )


def test_volatile_keys_are_dropped_at_any_depth_and_nothing_else():
    report = {"seconds": 1, "gold": {"seconds": 2, "f1": 0.5}, "runs": [{"built_at": "x", "n": 1}]}
    assert compare_revisions.strip_volatile(report) == {"gold": {"f1": 0.5}, "runs": [{"n": 1}]}
