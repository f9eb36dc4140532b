"""``weak-label`` says when it works with less than it seems: no metadata column in the notes (its main source
of distant supervision), some of them only, or a knowledge base built for other départements than the notes'."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.model import PATIENT_FIELDS
from tests.conftest import REPO

N_NOTES = 40


@pytest.fixture(scope="module")
def notes(tmp_path_factory) -> pd.DataFrame:
    return pd.read_parquet(REPO / "data" / "notes.parquet").iloc[:N_NOTES]


def _weak_label(notes: pd.DataFrame, tmp_path: Path, *options: str):
    notes.to_parquet(tmp_path / "notes.parquet")
    args = ["weak-label", str(tmp_path / "notes.parquet"), "-o", str(tmp_path / "out"), "-q", "-j", "1", *options]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result, json.loads((tmp_path / "out" / "report.json").read_text())


def test_no_metadata_column_is_warned_about_and_recorded(notes, tmp_path):
    export = notes.rename(columns={"id_document": "DOC_ID", "html": "TEXTE"})[["DOC_ID", "TEXTE"]]
    result, report = _weak_label(export, tmp_path, "-c", "id_document=DOC_ID", "-c", "html=TEXTE")
    assert "warning: none of the metadata columns (firstname, lastname, birthdate" in result.output  # kept with -q
    assert report["use_metadata"] is False
    assert report["metadata_columns"] == [] and report["metadata_columns_missing"] == list(PATIENT_FIELDS)


def test_the_metadata_columns_used_are_recorded(notes, tmp_path):
    result, report = _weak_label(notes.drop(columns=["address", "email", "phone"]), tmp_path)
    assert "none of the metadata columns" not in result.output
    assert report["use_metadata"] is True
    assert report["metadata_columns"] == ["firstname", "lastname", "birthdate", "zip", "city"]
    assert report["metadata_columns_missing"] == ["address", "phone", "email"]
    _, report = _weak_label(notes, tmp_path, "--no-metadata", "--overwrite")
    assert report["use_metadata"] is False and report["metadata_columns_missing"] == []  # said so: no warning


def test_a_knowledge_base_for_other_departements_is_warned_about(notes, kb_dir, tmp_path):
    built = CliRunner().invoke(
        main, ["build-kb", "--ban", str(REPO / "kb" / "sources" / "adresses-22.csv.gz"), "--out", str(tmp_path / "kb")]
    )
    assert built.exit_code == 0, built.output
    result, report = _weak_label(notes, tmp_path, "--kb", str(tmp_path / "kb"))
    coverage = report["kb_coverage"]
    assert coverage["kb_departements"] == ["22"] and coverage["share"] < 0.5
    assert set(coverage["missing_departements"]) == {"29", "35", "56"}
    assert f"warning: weak-label: the knowledge base covers {coverage['share']:.0%} of the notes' postcodes" in (
        result.output
    )
    assert not any(str(zip_code) in result.output for zip_code in notes["zip"])  # départements only
    result, report = _weak_label(notes, tmp_path, "--kb", str(kb_dir), "--overwrite")  # Brittany's four
    assert report["kb_coverage"]["share"] == 1.0 and "knowledge base covers" not in result.output
