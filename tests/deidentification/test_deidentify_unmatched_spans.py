"""Spans that are not about the notes never give "de-identified" notes: refused before anything is written
(exit 2), or, with ``--allow-unmatched-spans``, each note without a span written with the status ``no spans``
and counted; ``--fail-on-leak`` fails a note that got no span and could not be checked."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.deidentification import deidentify
from deid_ds.deidentification.span_coverage import UnmatchedSpansError
from tests.conftest import REPO

N_NOTES = 12


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    """The first sample notes and their gold spans (every note has some)."""
    base = tmp_path_factory.mktemp("unmatched")
    notes = pd.read_parquet(REPO / "data" / "notes.parquet").iloc[:N_NOTES]
    notes.to_parquet(base / "notes.parquet")
    gold = pd.read_parquet(REPO / "data" / "gold.parquet")
    return base / "notes.parquet", gold[gold["id_document"].isin(notes["id_document"])]


def _deidentify(notes: Path, spans: pd.DataFrame, out: Path, *options: str):
    spans.to_parquet(out.parent / f"{out.name}-spans.parquet")
    args = ["deidentify", str(notes), "--spans", str(out.parent / f"{out.name}-spans.parquet"), "--out", str(out)]
    return CliRunner().invoke(main, [*args, "--mode", "mask", "-j", "1", *options])


def _other_run(gold: pd.DataFrame) -> pd.DataFrame:
    """The gold spans of other notes of the sample (another run's spans)."""
    everything = pd.read_parquet(REPO / "data" / "gold.parquet")
    return everything[~everything["id_document"].isin(gold["id_document"])]


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda g: g.assign(id_document=g["id_document"].str.lower()), id="lower-cased ids"),
        pytest.param(lambda g: g.assign(id_document="export-" + g["id_document"]), id="prefixed ids"),
        pytest.param(_other_run, id="another run's spans"),
    ],
)
def test_spans_matching_no_note_are_refused_before_anything_is_written(sample, tmp_path, spoil):
    notes, gold = sample
    spans = spoil(gold)
    for options in ((), ("--fail-on-leak",), ("--allow-unmatched-spans",)):
        result = _deidentify(notes, spans, tmp_path / "out", *options)
        assert result.exit_code == 2, result.output
        n_span_documents = spans["id_document"].nunique()
        assert f"none of its {n_span_documents} span document(s) is among the {N_NOTES} note document(s)" in (
            result.output
        )
        assert len(result.output.strip().splitlines()) == 1 and "N1-" not in result.output.upper()  # no id quoted
        assert not (tmp_path / "out").exists()


def test_an_empty_spans_table_is_refused(sample, tmp_path):
    notes, gold = sample
    result = _deidentify(notes, gold.iloc[:0], tmp_path / "out", "--allow-unmatched-spans")
    assert result.exit_code == 2
    assert f"holds no span: none of the {N_NOTES} note document(s) would be de-identified" in result.output
    assert not (tmp_path / "out").exists()


def test_most_notes_without_a_span_stop_the_run_unless_allowed(sample, tmp_path):
    notes, gold = sample
    first = sorted(gold["id_document"].unique())[:3]
    spans = gold[gold["id_document"].isin(first)]
    result = _deidentify(notes, spans, tmp_path / "out")
    assert result.exit_code == 2
    assert f"{N_NOTES - 3} of the {N_NOTES} note document(s) have no span" in result.output
    assert "--allow-unmatched-spans" in result.output and not (tmp_path / "out").exists()

    result = _deidentify(notes, spans, tmp_path / "out", "--allow-unmatched-spans")
    assert result.exit_code == 0, result.output
    documents = pd.read_parquet(tmp_path / "out" / "documents.parquet").set_index("id_document")
    assert (documents.loc[first, "status"] == "ok").all()
    assert (documents.drop(index=first)["status"] == "no spans").all()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["ok"] == 3 and report["documents_without_spans"] == N_NOTES - 3 and report["allow_unmatched_spans"]
    assert f"{N_NOTES - 3} document(s) got no span" in result.output  # a warning
    assert any(
        "no spans (written, text unchanged)" in line and line.rstrip().endswith(str(N_NOTES - 3))
        for line in result.output.splitlines()
    )
    written = pd.read_parquet(tmp_path / "out" / "notes.parquet")
    assert len(written) == N_NOTES  # written, said so


def test_most_span_documents_not_among_the_notes_stop_the_run_unless_allowed(sample, tmp_path):
    notes, gold = sample
    spans = pd.concat([gold, _other_run(gold)])
    n_span_documents = spans["id_document"].nunique()
    result = _deidentify(notes, spans, tmp_path / "out")
    assert result.exit_code == 2
    assert f"{n_span_documents - N_NOTES} of its {n_span_documents} span document(s) are not among" in result.output
    assert not (tmp_path / "out").exists()

    result = _deidentify(notes, spans, tmp_path / "out", "--allow-unmatched-spans")  # a subset of the corpus
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["ok"] == N_NOTES and report["documents_without_spans"] == 0
    assert report["span_documents"] == n_span_documents
    assert report["span_documents_not_in_notes"] == n_span_documents - N_NOTES


def test_a_few_notes_without_a_span_run_with_their_status(sample, tmp_path):
    notes, gold = sample
    last = sorted(gold["id_document"].unique())[-1]
    result = _deidentify(notes, gold[gold["id_document"] != last], tmp_path / "out")
    assert result.exit_code == 0, result.output
    documents = pd.read_parquet(tmp_path / "out" / "documents.parquet").set_index("id_document")
    assert documents.loc[last, "status"] == "no spans" and (documents.drop(index=last)["status"] == "ok").all()
    assert documents.loc[last, "leak_check"] == "checked"  # the sample has metadata: still checked


def test_fail_on_leak_fails_a_note_without_spans_that_could_not_be_checked(sample, tmp_path):
    notes, gold = sample
    frame = pd.read_parquet(notes)
    last = sorted(gold["id_document"].unique())[-1]
    spans = gold[gold["id_document"] != last]
    result = _deidentify(notes, spans, tmp_path / "checked", "--fail-on-leak")
    assert result.exit_code == 3  # checked: its patient's values found in it, leaks
    assert "residual leak(s) found" in result.output and "could not be checked" not in result.output

    patient = frame.loc[frame["id_document"] == last, "id_patient"].iloc[0]
    blind = frame.copy()
    metadata = ["firstname", "lastname", "birthdate", "address", "zip", "city", "phone", "email"]
    blind.loc[blind["id_patient"] == patient, metadata] = None  # nothing to look for in that patient's notes
    blind.to_parquet(tmp_path / "blind.parquet")
    result = _deidentify(tmp_path / "blind.parquet", spans, tmp_path / "out", "--fail-on-leak")
    assert result.exit_code == 3
    assert "1 document(s) got no span and could not be checked (no metadata)" in result.output
    assert not (tmp_path / "out").exists() and (tmp_path / "out.leaks" / "notes.parquet").exists()
    report = json.loads((tmp_path / "out.leaks" / "report.json").read_text())
    assert report["documents_without_spans_not_checked"] == 1 and report["leaks"]["total"] == 0


def test_the_python_api_refuses_and_allows_the_same(sample, tmp_path):
    notes, gold = sample
    spans = gold[gold["id_document"] == gold["id_document"].iloc[0]]
    spans.to_parquet(tmp_path / "one.parquet")
    with pytest.raises(UnmatchedSpansError, match="have no span"):
        deidentify(notes, tmp_path / "out", spans=tmp_path / "one.parquet", mode="mask", progress=False)
    report = deidentify(
        notes, tmp_path / "out", spans=tmp_path / "one.parquet", mode="mask", progress=False, allow_unmatched_spans=True
    )
    assert report.ok == 1 and report.documents_without_spans == N_NOTES - 1
