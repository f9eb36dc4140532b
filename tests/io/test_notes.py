"""Reading notes tables: column mapping, batching, and clear errors on bad input."""

from __future__ import annotations

import pytest

from deid_ds.errors import InputError
from deid_ds.io.notes import as_identifier, open_notes, parse_column_map


def test_notes_are_read_in_batches_with_metadata(write_notes):
    path = write_notes(
        [
            {
                "id_document": f"d{i}",
                "id_patient": "p1",
                "html": f"<p>note {i}</p>",
                "firstname": "Jean",
                "zip": "35000",
            }
            for i in range(5)
        ]
    )
    source = open_notes(path)
    assert source.num_notes == 5
    batches = list(source.iter_batches(batch_size=2))
    assert [len(b) for b in batches] == [2, 2, 1]
    note = batches[0][0]
    assert (note.id_document, note.id_patient, note.html) == ("d0", "p1", "<p>note 0</p>")
    assert note.patient.firstname == "Jean" and note.patient.zip == "35000" and note.patient.city is None


def test_a_column_map_reads_warehouse_column_names(write_notes):
    path = write_notes([{"ID_ENTREPOT": 141303567.0, "ID_PAT": 363342, "TEXTE": "<p>x</p>"}])
    source = open_notes(path, parse_column_map(["id_document=ID_ENTREPOT", "id_patient=ID_PAT", "html=TEXTE"]))
    [note] = source.iter_notes()
    assert (note.id_document, note.id_patient) == ("141303567", "363342")


def test_a_directory_of_parquet_files_is_one_table(tmp_path, write_notes):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "parts").mkdir()
    for part in range(3):
        pq.write_table(
            pa.Table.from_pylist([{"id_document": f"{part}-{i}", "html": "x"} for i in range(4)]),
            tmp_path / "parts" / f"part-{part}.parquet",
        )
    source = open_notes(tmp_path / "parts")
    assert source.num_notes == 12
    assert [n.id_document for n in source.iter_notes()][:5] == ["0-0", "0-1", "0-2", "0-3", "1-0"]


def test_a_missing_required_column_is_named_with_a_hint(write_notes):
    path = write_notes([{"id_document": "d", "TEXTE": "<p>x</p>"}])
    with pytest.raises(
        InputError,
        match=r"required column 'html' not found \(columns: id_document, TEXTE\); map it with --column "
        r"html=SOURCE_COLUMN \(in Python: column_map=\{\"html\": \"SOURCE_COLUMN\"\}\)",
    ):
        open_notes(path)
    with pytest.raises(InputError, match=r"check the column mapping \(--column, or column_map= in Python\)"):
        open_notes(path, column_map={"html": "TEXT"})


def test_the_column_hint_speaks_to_the_cli_and_to_python(write_notes, tmp_path):
    """The library cannot tell who called it: the hint gives the option and the argument."""
    from click.testing import CliRunner

    from deid_ds import segment_notes
    from deid_ds.cli import main

    path = write_notes([{"id_document": "d", "TEXTE": "<p>x</p>"}])
    result = CliRunner().invoke(main, ["segment", str(path), "--out", str(tmp_path / "s")])
    assert result.exit_code == 1 and "--column html=SOURCE_COLUMN" in result.output
    assert 'column_map={"html": "SOURCE_COLUMN"}' in result.output
    with pytest.raises(InputError, match=r"column_map="):
        segment_notes(path, tmp_path / "s2")
    segment_notes(path, tmp_path / "s3", column_map={"html": "TEXTE"})  # the mapping the hint names works


def test_a_file_that_is_not_parquet_is_refused_clearly(tmp_path):
    path = tmp_path / "notes.parquet"
    path.write_text("id_document;html\n1;<p>x</p>\n")
    with pytest.raises(InputError, match="not a Parquet file"):
        open_notes(path)


def test_a_truncated_parquet_file_is_refused_clearly(write_notes):
    path = write_notes([{"id_document": str(i), "html": "<p>texte</p>" * 50} for i in range(100)])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="not a Parquet file"):
        open_notes(path)


def test_missing_inputs_and_bad_mappings_are_reported(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        open_notes(tmp_path / "nope.parquet")
    with pytest.raises(InputError, match="not of the form"):
        parse_column_map(["html"])
    with pytest.raises(InputError, match="is not a notes column"):
        parse_column_map(["texte=TEXTE"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no"):
        open_notes(tmp_path / "empty")


def test_identifiers_are_normalised_to_strings():
    assert as_identifier(12.0) == "12"
    assert as_identifier(12) == "12"
    assert as_identifier(float("nan")) is None
    assert as_identifier("A-12") == "A-12"


def test_html_files_are_notes_named_after_the_file(tmp_path):
    (tmp_path / "cr_001.html").write_bytes(b"<p>Compte rendu</p>")
    (tmp_path / "cr_002.txt").write_text("Texte brut", encoding="utf-8")
    notes = list(open_notes(tmp_path).iter_notes())
    assert [n.id_document for n in notes] == ["cr_001", "cr_002"]


def test_identifiers_are_read_alone_and_match_the_notes(write_notes):
    import pyarrow as pa

    schema = pa.schema([("ID", pa.float64()), ("IPP", pa.int64()), ("html", pa.string())])
    path = write_notes([{"ID": 12.0, "IPP": 7, "html": "a"}, {"ID": None, "IPP": None, "html": "b"}], schema=schema)
    source = open_notes(path, {"id_document": "ID", "id_patient": "IPP"})
    ids = list(source.iter_identifiers())
    assert ids == [("12", "7"), ("notes.parquet#row1", None)]
    assert ids == [(n.id_document, n.id_patient) for n in source.iter_notes()]
