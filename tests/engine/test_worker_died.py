"""A worker process killed by the system (out of memory) stops the command with one line and publishes nothing."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.engine import local
from tests.conftest import REPO
from tests.engine.dying_worker import killed_by_the_system


@pytest.mark.slow  # two worker processes started
def test_a_worker_killed_by_the_system_is_one_line_and_nothing_is_published(tmp_path, monkeypatch):
    notes = tmp_path / "notes.parquet"
    pq.write_table(pq.read_table(REPO / "data" / "notes.parquet").slice(0, 4), notes)
    monkeypatch.setattr(local, "run_job", killed_by_the_system)  # what each worker runs on its batches
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["segment", str(notes), "--out", str(out), "-j", "2", "--batch-size", "2", "-q"])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert "worker process died" in result.output and "fewer --workers or a smaller --batch-size" in result.output
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["notes.parquet"]
