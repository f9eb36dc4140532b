"""``deid-ds deidentify`` end to end on the embedded sample (gold spans as the entities to replace)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.deidentification import deidentify
from deid_ds.deidentification.dates_shift import parse_date
from deid_ds.deidentification.leaks import LeakCounts, check_leaks, find_leaks
from deid_ds.kb.normalize import fold_key
from deid_ds.model import PATIENT_FIELDS, PatientMetadata
from deid_ds.segmentation.html_text import html_to_text
from tests.conftest import REPO
from tests.deidentification.test_deidentify_html import tag_sequence

N_NOTES = 45


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> tuple[Path, Path]:
    """The first sample notes (patients with several notes) and their gold spans."""
    base = tmp_path_factory.mktemp("sample")
    notes = pq.read_table(REPO / "data" / "notes.parquet").slice(0, N_NOTES).to_pandas()
    notes["extra"] = range(len(notes))  # a column deidentify does not know: kept unchanged when named (--keep-column)
    gold = pd.read_parquet(REPO / "data" / "gold.parquet")
    gold = gold[gold["id_document"].isin(notes["id_document"])]
    notes.to_parquet(base / "notes.parquet")
    gold.to_parquet(base / "gold.parquet")
    return base / "notes.parquet", base / "gold.parquet"


@pytest.fixture(scope="module")
def surrogate_run(sample, tmp_path_factory) -> Path:
    notes, gold = sample
    out = tmp_path_factory.mktemp("deid") / "out"
    deidentify(
        notes,
        out,
        spans=gold,
        key="k1-test-key-not-secret",
        keep_metadata="surrogate",
        audit_originals=True,
        progress=False,
        keep_columns=["extra"],
    )
    return out


def _metadata(row) -> PatientMetadata:
    return PatientMetadata(**{f: row[f] if isinstance(row[f], str) else None for f in PATIENT_FIELDS})


def test_outputs_account_for_every_note_and_replacement(sample, surrogate_run):
    notes, gold = pd.read_parquet(sample[0]), pd.read_parquet(sample[1])
    out = pd.read_parquet(surrogate_run / "notes.parquet")
    documents = pd.read_parquet(surrogate_run / "documents.parquet")
    audit = pd.read_parquet(surrogate_run / "audit.parquet")
    report = json.loads((surrogate_run / "report.json").read_text())
    assert list(out.columns) == ["id_document", "id_patient", "doc_type", "html", *PATIENT_FIELDS, "extra"]
    assert list(out["extra"]) == list(notes["extra"]) and list(out["id_document"]) == list(notes["id_document"])
    assert len(documents) == len(notes) and set(documents["status"]) == {"ok"}
    # the gold spans, and the sample's exam numbers (a direct identifier no span names)
    assert set(report["identifiers_per_kind"]) == {"EXAMEN"} and "original" in audit.columns
    assert len(audit) == len(gold) + report["identifiers_per_kind"]["EXAMEN"] == report["replacements"]
    assert (
        report["documents"] == len(notes)
        and report["key_origin"] == "--key"
        and "k1-test-key" not in json.dumps(report)
    )
    # the patients' own values: hundreds in the input, (almost) none left
    before = LeakCounts()
    for _, row in notes.iterrows():
        before.add(find_leaks(row["html"], _metadata(row)))
    assert before.total > 100 and report["leaks"]["total"] <= before.total / 50
    totals, _ = check_leaks(str(surrogate_run / "notes.parquet"), str(sample[0]))
    assert totals.total == report["leaks"]["total"]  # the check on its own agrees with the run's


def test_html_structure_kept_and_nothing_changes_outside_the_replacements(sample, surrogate_run):
    notes = pd.read_parquet(sample[0]).set_index("id_document")
    out = pd.read_parquet(surrogate_run / "notes.parquet").set_index("id_document")
    audit = pd.read_parquet(surrogate_run / "audit.parquet")
    for id_document, rows in audit.groupby("id_document"):
        before, after = notes.loc[id_document, "html"], out.loc[id_document, "html"]
        assert tag_sequence(after) == tag_sequence(before)
        rows = rows.sort_values("html_start")
        cursor_in = cursor_out = 0
        for row in rows.itertuples():
            assert after[cursor_out : row.out_start] == before[cursor_in : row.html_start]
            cursor_in, cursor_out = row.html_end, row.out_end
        assert after[cursor_out:] == before[cursor_in:]


def test_surrogates_are_consistent_within_a_patient(surrogate_run):
    audit = pd.read_parquet(surrogate_run / "audit.parquet")
    audit["key"] = [fold_key(o) for o in audit["original"]]
    for label in ("PATIENT", "VILLE", "PHONE", "EMAIL", "DATE", "STR"):
        rows = audit[audit["label"] == label]
        distinct = rows.groupby(["id_patient", "key"])["replacement"].agg(lambda r: len({fold_key(x) for x in r}))
        assert (distinct == 1).all(), label
        changed = rows["key"] != rows["replacement"].map(fold_key)
        assert (changed | (rows["key"].str.len() == 4)).all(), label  # a year alone may stay the same year
    doctors = (
        audit[audit["label"] == "DOCTOR"].groupby("key")["replacement"].agg(lambda r: len({fold_key(x) for x in r}))
    )
    assert (doctors == 1).mean() > 0.9  # the same everywhere unless the draw was a patient's own name
    assert audit.groupby("id_patient")["id_document"].nunique().max() > 1


def test_date_intervals_are_kept_per_patient(surrogate_run):
    audit = pd.read_parquet(surrogate_run / "audit.parquet")
    offsets: dict[str, set[int]] = {}
    for row in audit[audit["label"] == "DATE"].itertuples():
        before, after = parse_date(row.original), parse_date(row.replacement)
        if before is not None and after is not None and before.kind == after.kind == "full":
            offsets.setdefault(row.id_patient, set()).add((after.date - before.date).days)
    assert len(offsets) > 5
    assert all(len(days) == 1 and 0 not in days for days in offsets.values())


def test_metadata_surrogates_are_those_of_the_notes(sample, surrogate_run):
    notes = pd.read_parquet(sample[0]).drop_duplicates("id_patient").set_index("id_patient")
    out = pd.read_parquet(surrogate_run / "notes.parquet")
    for id_patient, group in out.groupby("id_patient"):
        original, fake = notes.loc[id_patient], group.iloc[0]
        assert fold_key(fake["lastname"]) != fold_key(original["lastname"])
        assert fold_key(fake["firstname"]) != fold_key(original["firstname"])
        text = fold_key(" ".join(html_to_text(h).text for h in group["html"]))
        assert fold_key(fake["lastname"]) in text  # the notes call the patient by the surrogate surname
        birth = parse_date(fake["birthdate"])
        assert birth is not None and birth.date != dt.date.fromisoformat(original["birthdate"])


def test_same_key_same_bytes_other_key_other_output(sample, surrogate_run, tmp_path):
    notes, gold = sample
    deidentify(
        notes,
        tmp_path / "again",
        spans=gold,
        key="k1-test-key-not-secret",
        keep_metadata="surrogate",
        audit_originals=True,
        progress=False,
        keep_columns=["extra"],
    )
    deidentify(
        notes, tmp_path / "other", spans=gold, key="k2-test-key-not-secret", keep_metadata="surrogate", progress=False
    )
    assert (tmp_path / "again" / "notes.parquet").read_bytes() == (surrogate_run / "notes.parquet").read_bytes()
    assert (tmp_path / "again" / "audit.parquet").read_bytes() == (surrogate_run / "audit.parquet").read_bytes()
    first = pd.read_parquet(surrogate_run / "notes.parquet")["html"]
    other = pd.read_parquet(tmp_path / "other" / "notes.parquet")["html"]
    assert (first != other).all()
    assert "original" not in pq.read_schema(tmp_path / "other" / "audit.parquet").names


def test_mask_mode(sample, tmp_path):
    notes, gold = sample
    report = deidentify(notes, tmp_path / "mask", spans=gold, mode="mask", progress=False)
    out = pd.read_parquet(tmp_path / "mask" / "notes.parquet")
    assert not set(PATIENT_FIELDS) & set(out.columns)  # metadata dropped by default
    text = html_to_text(out["html"].iloc[0]).text
    assert "[PATIENT]" in text and "[DATE]" in text
    assert report.replacements == len(pd.read_parquet(gold)) + sum(report.identifiers_per_kind.values())
    assert report.identifiers_per_kind["EXAMEN"] > 0 and "[EXAMEN]" in "".join(out["html"])
    deidentify(notes, tmp_path / "stars", spans=gold, mode="mask", mask_format="***", progress=False)
    assert "***" in pd.read_parquet(tmp_path / "stars" / "notes.parquet")["html"].iloc[0]


def test_bad_notes_are_failed_and_withheld(write_notes, tmp_path):
    html = "<p>Mme <b>Jeanne</b> LE GALL, née le 12/08/1957.</p>"
    start = html.index("Jeanne")
    rows = [
        {"id_document": "ok", "id_patient": "P", "html": html},
        {"id_document": "bad", "id_patient": "P", "html": html},
        {"id_document": "overlap", "id_patient": "P", "html": html},
        {"id_document": "null", "id_patient": "P", "html": None},
        {"id_document": "ok", "id_patient": "P", "html": html},  # duplicate id
    ]
    notes = write_notes(rows)
    spans = pd.DataFrame(
        [
            {"id_document": "ok", "label": "PATIENT", "html_start": start, "html_end": html.index(",")},
            {
                "id_document": "bad",
                "label": "PATIENT",
                "html_start": start - 3,
                "html_end": html.index(","),
            },  # starts on <b>
            {"id_document": "overlap", "label": "PATIENT", "html_start": start, "html_end": html.index(",")},
            {"id_document": "overlap", "label": "PATIENT", "html_start": html.index("LE"), "html_end": html.index(",")},
            {"id_document": "elsewhere", "label": "DATE", "html_start": 0, "html_end": 2},
        ]
    )
    spans.to_parquet(tmp_path / "spans.parquet")
    report = deidentify(
        notes, tmp_path / "out", spans=tmp_path / "spans.parquet", key="k0-test-key-not-secret", progress=False
    )
    documents = pd.read_parquet(tmp_path / "out" / "documents.parquet")
    assert list(documents["status"]) == ["ok", "failed", "failed", "failed", "failed"]
    assert "Jeanne" not in " ".join(documents["error"].dropna())
    assert list(pd.read_parquet(tmp_path / "out" / "notes.parquet")["id_document"]) == ["ok"]
    assert report.spans_for_unknown_documents == 1 and report.failed == 4


def _planted(write_notes, tmp_path) -> tuple[Path, Path]:
    """A note whose name is replaced but whose birthdate (not in the spans) is left: a leak."""
    html = "<p>Mme <b>Jeanne</b> LE GALL, née le 12/08/1957.</p>"
    notes = write_notes(
        [
            {
                "id_document": "d1",
                "id_patient": "P",
                "html": html,
                "firstname": "Jeanne",
                "lastname": "Le Gall",
                "birthdate": "1957-08-12",
            }
        ]
    )
    spans = pd.DataFrame(
        [{"id_document": "d1", "label": "PATIENT", "html_start": html.index("Jeanne"), "html_end": html.index(",")}]
    )
    spans.to_parquet(tmp_path / "spans.parquet")
    return notes, tmp_path / "spans.parquet"


def test_cli_fail_on_leak(write_notes, tmp_path):
    notes, spans = _planted(write_notes, tmp_path)
    args = [
        "deidentify",
        str(notes),
        "--spans",
        str(spans),
        "--out",
        str(tmp_path / "out"),
        "--key",
        "k0-test-key-not-secret",
        "--verbose",
        "-j",
        "1",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert (
        "residual-leak check: 1 value(s)" in result.output
        and "1957" not in result.output
        and "Jeanne" not in result.output
    )
    result = CliRunner().invoke(main, [*args, "--fail-on-leak"])
    assert result.exit_code == 3
    spans_all = pd.read_parquet(spans)
    html = pd.read_parquet(notes)["html"].iloc[0]
    date = html.index("12/08")
    pd.concat(
        [spans_all, pd.DataFrame([{"id_document": "d1", "label": "DATE", "html_start": date, "html_end": date + 10}])]
    ).to_parquet(spans)
    result = CliRunner().invoke(main, [*args, "--fail-on-leak", "--birthdate-year"])
    assert result.exit_code == 0, result.output
    out = pd.read_parquet(tmp_path / "out" / "notes.parquet")["html"].iloc[0]
    assert "Jeanne" not in out and "12/08/1957" not in out and "née le 19" in out


def test_cli_end_to_end_with_column_mapping_and_workers(sample, surrogate_run, tmp_path):
    notes = pd.read_parquet(sample[0]).rename(columns={"html": "TEXTE", "id_document": "ID"})
    notes.to_parquet(tmp_path / "renamed.parquet")
    gold = pd.read_parquet(sample[1])
    gold.to_parquet(tmp_path / "gold.parquet")
    result = CliRunner().invoke(
        main,
        [
            "deidentify",
            str(tmp_path / "renamed.parquet"),
            "--spans",
            str(tmp_path / "gold.parquet"),
            "--out",
            str(tmp_path / "out"),
            "--column",
            "html=TEXTE",
            "--column",
            "id_document=ID",
            "--keep-metadata",
            "surrogate",
            "--workers",
            "2",
            "--batch-size",
            "20",
            "--verbose",
        ],
        env={"DEID_DS_KEY": "k1-test-key-not-secret"},
    )
    assert result.exit_code == 0, result.output
    assert "deidentify (surrogate; key: environment DEID_DS_KEY" in result.output
    ours = pd.read_parquet(tmp_path / "out" / "notes.parquet")
    reference = pd.read_parquet(surrogate_run / "notes.parquet")
    assert list(ours["html"]) == list(reference["html"])  # batches and workers do not change the output
    for name in ("PATIENT", "LE GALL", "TEIXEIRA"):
        assert name not in result.output or name == "PATIENT"
    result = CliRunner().invoke(main, ["deidentify", str(sample[0]), "--out", str(tmp_path / "x"), "--quiet"])
    assert result.exit_code != 0 and "exactly one of --spans" in result.output
