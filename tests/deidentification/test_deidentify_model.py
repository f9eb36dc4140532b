"""``deid-ds deidentify --model``: the entities predicted by a (tiny, locally trained) tagger are replaced."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from tests.ner.test_predict import no_network  # noqa: F401 - the network cut, as in the predict tests


@pytest.mark.slow
def test_deidentify_with_a_model(model_dir, notes_file, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "deidentify",
            str(notes_file),
            "--model",
            str(model_dir),
            "--out",
            str(out),
            "--mode",
            "mask",
            "--device",
            "cpu",
            "--workers",
            "1",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    documents = pd.read_parquet(out / "documents.parquet")
    assert len(documents) == len(pd.read_parquet(notes_file))  # every note accounted for
    status = dict(zip(documents["id_document"], documents["status"]))
    assert status["no-html"] == "failed" and status["blank"] == "ok"
    assert report["replacements"] > 0
    html = " ".join(pd.read_parquet(out / "notes.parquet")["html"])
    assert "[" in html and "predict" not in " ".join(p.name for p in out.iterdir())  # predictions are not kept
