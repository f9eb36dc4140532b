"""A note the table gives no id is accounted for, and every command that reads notes says so the same way."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.model import MISSING_ID_WARNING
from tests.conftest import REPO


@pytest.fixture(scope="module")
def notes_without_an_id(tmp_path_factory):
    """Three sample notes, the second with a null id_document."""
    table = pq.read_table(REPO / "data" / "notes.parquet").slice(0, 3)
    ids = table.column("id_document").to_pylist()
    ids[1] = None
    table = table.set_column(table.schema.get_field_index("id_document"), "id_document", pa.array(ids, pa.string()))
    path = tmp_path_factory.mktemp("ids") / "notes.parquet"
    pq.write_table(table, path)
    return path, table.column("html")[1].as_py()


def _run(args: list[str]):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("command", ["segment", "weak-label", "predict"])
def test_a_note_without_an_id_is_kept_named_by_its_row_and_warned_about(
    command, notes_without_an_id, kb_dir, model_dir, tmp_path
):
    notes, html = notes_without_an_id
    out = tmp_path / "out"
    args = {
        "segment": ["segment", str(notes), "--out", str(out)],
        "weak-label": ["weak-label", str(notes), "--out", str(out), "--kb", str(kb_dir), "--workers", "1"],
        "predict": ["predict", str(model_dir), str(notes), "--out", str(out), "--workers", "1", "--device", "cpu"],
    }[command]
    result = _run(args)
    assert "1 document(s) without id_document: named FILE#rowN" in result.output
    documents = pq.read_table(out / "documents.parquet").to_pylist()
    assert [row["id_document"] for row in documents][1] == "notes.parquet#row1"
    warned = [row["id_document"] for row in documents if MISSING_ID_WARNING in json.loads(row["warnings"])]
    assert warned == ["notes.parquet#row1"] and documents[1]["status"] == "ok"
    assert json.loads((out / "report.json").read_text())["documents_without_id"] == 1
    assert all(line not in result.output for line in html.splitlines() if len(line) > 20)


def test_notes_with_their_ids_get_no_such_warning(tmp_path):
    result = _run(["segment", str(REPO / "data" / "notes.parquet"), "--out", str(tmp_path / "out"), "-q"])
    assert "without id_document" not in result.output
    assert json.loads((tmp_path / "out" / "report.json").read_text())["documents_without_id"] == 0
