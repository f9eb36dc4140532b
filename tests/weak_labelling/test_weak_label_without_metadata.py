"""``weak-label --no-metadata`` end to end: a generated corpus labelled with and without its metadata columns.

A warehouse may export notes without the patient's metadata, and the setting must be honest
(the metadata is really ignored) and recorded (``report.json``, the resume fingerprint). Without it the
labeller finds the patients and professionals from context and the knowledge base: the scores on the
corpus's gold show how much it keeps.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from tests.conftest import REPO

NOTES = REPO / "data" / "notes.parquet"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """60 generated notes (held-out phrasing) with their gold spans and their own knowledge base."""
    root = tmp_path_factory.mktemp("blind")
    runner = CliRunner()
    made = runner.invoke(
        main,
        ["synth", "--notes", "60", "--seed", "17", "--phrasing", "heldout", "--out", str(root / "data")]
        + ["--kb-dir", str(root / "kbsrc"), "-q"],
    )
    assert made.exit_code == 0, made.output
    sources = root / "kbsrc"
    built = runner.invoke(
        main,
        ["build-kb", "--out", str(root / "kb"), "-q"]
        + [arg for f in sorted(sources.glob("adresses-*.csv.gz")) for arg in ("--ban", str(f))]
        + [
            arg
            for f in sorted(sources.glob("PS_LibreAcces_Personne_activite_*.txt"))
            for arg in ("--health-directory", str(f))
        ],
    )
    assert built.exit_code == 0, built.output
    return root


def _weak_label(corpus: Path, out: Path, *options: str) -> dict:
    data = corpus / "data"
    result = CliRunner().invoke(
        main,
        ["weak-label", str(data / "notes.parquet"), "--kb", str(corpus / "kb"), "-o", str(out), "-q", "-j", "1"]
        + ["--gold", str(data / "gold.parquet"), *options],
    )
    assert result.exit_code == 0, result.output
    return json.loads((out / "report.json").read_text())


@pytest.mark.slow
def test_no_metadata_ignores_the_metadata_still_finds_the_people_and_says_so(corpus, tmp_path):
    full = _weak_label(corpus, tmp_path / "full")
    blind = _weak_label(corpus, tmp_path / "blind", "--no-metadata")
    assert full["use_metadata"] is True and blind["use_metadata"] is False  # the setting is recorded
    sources = pd.read_parquet(tmp_path / "blind" / "spans.parquet")["source"]
    assert not sources.str.startswith("metadata:").any()  # honest: nothing came from the metadata columns
    assert sources.str.startswith("patient:").sum() == 0  # nor from the patient's names read in them
    for label in ("PATIENT", "DOCTOR"):
        scores = blind["gold"]["exact"]["per_label"][label]
        assert scores["f1"] >= 0.9, (label, scores)  # found from context and gazetteers
    assert blind["gold"]["exact"]["micro"]["f1"] >= 0.95


def test_the_resume_fingerprint_covers_the_metadata_setting():
    """A run stopped with its metadata is not resumed without it: the batch parts would mix both settings."""
    import deid_ds.weak_labelling as wl
    from deid_ds.io.notes import open_notes
    from deid_ds.label.labeller import LabelConfig
    from deid_ds.segmentation.notes import SegmentOptions

    source = open_notes(NOTES)
    options = [
        wl.WeakLabelOptions(SegmentOptions(None, 200), LabelConfig(None, use), 0.0, 1.0) for use in (True, False)
    ]
    with_metadata, without = (wl.run_fingerprint(source, o, 8, None) for o in options)
    assert {k for k in with_metadata if with_metadata[k] != without[k]} == {"label"}
    assert (with_metadata["label"]["use_metadata"], without["label"]["use_metadata"]) == (True, False)


def test_the_api_records_the_setting_too(tmp_path):
    from deid_ds.weak_labelling import weak_label

    notes = tmp_path / "notes.parquet"
    pq.write_table(pq.read_table(NOTES).slice(0, 5), notes)
    report = weak_label(notes, tmp_path / "api", use_metadata=False, progress=False)
    assert report.use_metadata is False
    assert json.loads((tmp_path / "api" / "report.json").read_text())["use_metadata"] is False
