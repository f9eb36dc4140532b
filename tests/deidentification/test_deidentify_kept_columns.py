"""``notes.parquet`` keeps the input's id types, and a date column kept with ``--keep-column`` is shifted by each
patient's offset like the notes' dates (surrogate mode) or refused (mask mode), never copied as it was."""

from __future__ import annotations

import datetime as dt
import re

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main

HTML = "<p>Mme <b>Jeanne</b> KERBRAT, vue le 12/03/2021.</p>"
KEEP = ["--keep-column", "admission", "--keep-column", "seen", "--keep-column", "stamp", "--keep-column", "ward"]


@pytest.fixture
def typed(tmp_path):
    """Four notes of two patients with integer ids, and kept columns: dates typed and written, a timestamp, a ward."""
    rows = [
        {
            "id_document": i,
            "id_patient": 100 + i // 2,
            "doc_type": 7,
            "html": HTML,
            "lastname": "Kerbrat",
            "admission": dt.date(2021, 3, 12),
            "seen": ["12/03/2021", "2021-03-12", "12 mars 2021", "2021-03-12T10:30:00"][i],
            "stamp": dt.datetime(2021, 3, 12, 10, 30),
            "ward": "cardio",
        }
        for i in range(4)
    ]
    pd.DataFrame(rows).to_parquet(tmp_path / "notes.parquet")
    name, date = HTML.index("Jeanne"), HTML.index("12/03")
    spans = [
        {"id_document": str(i), "label": label, "html_start": start, "html_end": end}
        for i in range(4)
        for label, start, end in (("PATIENT", name, HTML.index(", vue")), ("DATE", date, date + 10))
    ]
    pd.DataFrame(spans).to_parquet(tmp_path / "spans.parquet")
    return tmp_path / "notes.parquet", tmp_path / "spans.parquet"


def write_dated_notes(notes, spans) -> None:
    """Four notes of two patients, each with one DATE span and the kept columns of :data:`KEEP`, written to the
    Parquet files ``notes`` and ``spans`` (for the tests of other modes and engines)."""
    rows = [
        {
            "id_document": i,
            "id_patient": 100 + i // 2,
            "html": HTML,
            "admission": dt.date(2021, 3, 12),
            "seen": "12/03/2021",
            "stamp": dt.datetime(2021, 3, 12, 10, 30),
            "ward": "cardio",
        }
        for i in range(4)
    ]
    pd.DataFrame(rows).to_parquet(notes)
    date = HTML.index("12/03")
    rows = [{"id_document": str(i), "label": "DATE", "html_start": date, "html_end": date + 10} for i in range(4)]
    pd.DataFrame(rows).to_parquet(spans)


def _deidentify(notes, spans, out, *options):
    args = ["deidentify", str(notes), "--spans", str(spans), "--out", str(out), "-q", "-j", "1"]
    return CliRunner().invoke(main, [*args, "--key", "k-test-key-not-secret", *options])


def test_the_input_id_types_are_kept(typed, tmp_path):
    notes, spans = typed
    result = _deidentify(notes, spans, tmp_path / "out", "--mode", "mask")
    assert result.exit_code == 0, result.output
    schema = pq.read_schema(tmp_path / "out" / "notes.parquet")
    assert [schema.field(n).type for n in ("id_document", "id_patient", "doc_type")] == [pa.int64()] * 3
    written = pd.read_parquet(tmp_path / "out" / "notes.parquet")
    assert list(written["id_document"]) == [0, 1, 2, 3] and list(written["id_patient"]) == [100, 100, 101, 101]
    documents = pd.read_parquet(tmp_path / "out" / "documents.parquet")  # every note's name: strings
    assert list(documents["id_document"]) == ["0", "1", "2", "3"]


def test_a_kept_date_column_is_shifted_like_the_notes_dates(typed, tmp_path):
    notes, spans = typed
    result = _deidentify(notes, spans, tmp_path / "out", *KEEP)
    assert result.exit_code == 0, result.output
    written = pd.read_parquet(tmp_path / "out" / "notes.parquet")
    schema = pq.read_schema(tmp_path / "out" / "notes.parquet")
    assert pa.types.is_date(schema.field("admission").type) and pa.types.is_timestamp(schema.field("stamp").type)
    for _, row in written.iterrows():
        day, month, year = map(int, re.search(r"vue le (\d\d)/(\d\d)/(\d{4})", row["html"]).groups())
        shifted = dt.date(year, month, day)
        assert shifted != dt.date(2021, 3, 12)
        assert row["admission"] == shifted and row["stamp"] == pd.Timestamp(shifted) + pd.Timedelta("10:30:00")
        assert row["ward"] == "cardio"  # not a date: as it was
    written_seen = list(written["seen"])
    assert written_seen[0] == written["html"][0].split("vue le ")[1][:10]  # the format of each value kept
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", written_seen[1]) and written_seen[1] != "2021-03-12"
    assert "mars 2021" not in written_seen[2] and re.fullmatch(r"\d{1,2}(er)? \w+ \d{4}", written_seen[2])
    assert written_seen[3].endswith("T10:30:00") and not written_seen[3].startswith("2021-03-12")
    assert written["admission"][0] == written["admission"][1]  # one patient, one offset


def test_a_kept_date_column_is_refused_in_mask_mode(typed, tmp_path):
    notes, spans = typed
    for column in ("admission", "seen", "stamp"):
        result = _deidentify(notes, spans, tmp_path / "out", "--mode", "mask", "--keep-column", column)
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert result.output.strip() == (
            f"Error: --keep-column {column}: it holds dates, which would be written unshifted beside notes whose "
            "dates are masked; drop it, or use --mode surrogate, where it is shifted by each patient's offset"
        )
        assert not (tmp_path / "out").exists()
    result = _deidentify(notes, spans, tmp_path / "out", "--mode", "mask", "--keep-column", "ward")
    assert result.exit_code == 0, result.output
