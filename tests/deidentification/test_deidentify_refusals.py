"""``deidentify`` on inputs that used to change the output silently or stop the run with a traceback: a key
with a newline, a blank mask, spans without a label or with fractional offsets, notes without an id or
with invalid UTF-8, a date the shift cannot move. One line and a non-zero exit, or the note failed (or
masked) with its reason; never a traceback."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main

KEY = "k7-test-key-not-secret"
HTML = "<p>Mme <b>Jeanne</b> LE GALL, vue le 12/08/2021 à Brest.</p>"


def span(text: str, label: str, id_document: str = "d1", html: str = HTML) -> dict:
    start = html.index(text)
    return {"id_document": id_document, "label": label, "html_start": start, "html_end": start + len(text)}


@pytest.fixture
def inputs(write_notes, tmp_path):
    notes = write_notes([{"id_document": "d1", "id_patient": "P1", "html": HTML}])
    spans = tmp_path / "spans.parquet"
    pd.DataFrame([span("Jeanne</b> LE GALL", "PATIENT"), span("12/08/2021", "DATE")]).to_parquet(spans)
    return notes, spans


def run(notes, spans, out, *extra, env=None):
    args = ["deidentify", str(notes), "--spans", str(spans), "--out", str(out), "-q", *extra]
    return CliRunner().invoke(main, args, env=env)


def one_line_error(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output
    return result.output


def written(out) -> str:
    return pd.read_parquet(out / "notes.parquet")["html"].iloc[0]


def test_a_key_with_a_final_newline_is_the_same_key_said_on_stderr_and_a_blank_key_is_refused(inputs, tmp_path):
    notes, spans = inputs
    assert run(notes, spans, tmp_path / "typed", "--key", KEY).exit_code == 0
    from_file = run(notes, spans, tmp_path / "file", env={"DEID_DS_KEY": KEY + "\n"})
    assert from_file.exit_code == 0, from_file.output
    assert "whitespace or a newline: ignored" in from_file.stderr and KEY not in from_file.output
    assert written(tmp_path / "file") == written(tmp_path / "typed")
    assert run(notes, spans, tmp_path / "option", "--key", f" {KEY}\r\n").exit_code == 0
    assert written(tmp_path / "option") == written(tmp_path / "typed")
    assert "only whitespace" in one_line_error(run(notes, spans, tmp_path / "blank", "--key", " " * 20))
    assert not (tmp_path / "blank").exists()


@pytest.mark.parametrize("blank", ["", "   ", "\t"])
def test_a_mask_format_that_writes_nothing_visible_is_refused(inputs, tmp_path, blank):
    notes, spans = inputs
    result = run(notes, spans, tmp_path / "out", "--mode", "mask", "--mask-format", blank)
    assert "deleted without a trace" in one_line_error(result) and not (tmp_path / "out").exists()
    assert run(notes, spans, tmp_path / "out", "--mode", "mask", "--mask-format", "XXXX").exit_code == 0
    assert "XXXX" in written(tmp_path / "out") and "Jeanne" not in written(tmp_path / "out")


def test_spans_without_a_label_or_an_id_or_with_fractional_offsets_are_refused(inputs, tmp_path):
    notes, spans = inputs
    good = pd.read_parquet(spans)
    no_label = good.astype({"label": object})
    no_label.loc[1, "label"] = None
    no_id = good.astype({"id_document": object})
    no_id.loc[0, "id_document"] = None
    fractional = good.astype({"html_end": float})
    fractional.loc[0, "html_end"] += 0.5
    for frame, message in (
        (no_label, "1 span(s) without a label (first at row 1)"),
        (no_id, "1 span(s) without an id_document (first at row 0)"),
        (fractional, "column html_end holds offsets that are not integers"),
    ):
        frame.to_parquet(tmp_path / "bad.parquet")
        result = run(notes, tmp_path / "bad.parquet", tmp_path / "out", "--key", KEY)
        assert message in one_line_error(result) and "Jeanne" not in result.output
        assert not (tmp_path / "out").exists()
    good.astype({"html_start": float, "html_end": float}).to_parquet(tmp_path / "floats.parquet")  # 12.0: fine
    assert run(notes, tmp_path / "floats.parquet", tmp_path / "out", "--key", KEY).exit_code == 0


def test_a_note_without_id_is_failed_not_written_unchanged(write_notes, inputs, tmp_path):
    _, spans = inputs
    notes = write_notes(
        [
            {"id_document": "d1", "id_patient": "P1", "html": HTML},
            {"id_document": None, "id_patient": "P1", "html": HTML},
        ],
        name="two.parquet",
    )
    result = run(notes, spans, tmp_path / "out", "--key", KEY)
    assert result.exit_code == 0, result.output
    assert "id_document is null" in result.output
    documents = pd.read_parquet(tmp_path / "out" / "documents.parquet")
    assert list(documents["status"]) == ["ok", "failed"] and documents["error"].iloc[1].startswith(
        "id_document is null"
    )
    assert len(pd.read_parquet(tmp_path / "out" / "notes.parquet")) == 1  # the raw note is not published


def test_a_date_the_shift_takes_out_of_the_calendar_is_masked(write_notes, tmp_path):
    html = "<p>Mme Jeanne LE GALL, date inconnue 01/01/0001, revue le 31/12/9999.</p>"
    notes = write_notes([{"id_document": "d1", "id_patient": "P1", "html": html}])
    spans = tmp_path / "spans.parquet"
    pd.DataFrame([span("01/01/0001", "DATE", html=html), span("31/12/9999", "DATE", html=html)]).to_parquet(spans)
    for key in (KEY, KEY + "-other"):  # one key shifts back, the other forward: one of the two overflows each way
        result = run(notes, spans, tmp_path / key, "--key", key)
        assert result.exit_code == 0, result.output
        documents = pd.read_parquet(tmp_path / key / "documents.parquet")
        assert list(documents["status"]) == ["ok"] and documents["n_fallbacks"].iloc[0] >= 1
        assert "[DATE]" in written(tmp_path / key)


def _with_invalid_utf8(source, target, row: int) -> None:
    """``source`` with the html of ``row`` holding bytes that are not UTF-8, in a column still typed string."""
    table = pq.read_table(source)
    raw = [h.encode() for h in table.column("html").to_pylist()]
    raw[row] = raw[row][:10] + b"\xff\xfe" + raw[row][10:]
    binary = pa.array(raw, pa.binary())
    broken = pa.Array.from_buffers(pa.string(), len(binary), binary.buffers())  # pyarrow does not check it here
    pq.write_table(table.set_column(table.schema.get_field_index("html"), "html", broken), target)


@pytest.mark.parametrize("command", ["deidentify", "weak-label"])
def test_invalid_utf8_in_the_html_column_fails_that_note_and_the_run_goes_on(write_notes, tmp_path, command):
    rows = [{"id_document": f"d{i}", "id_patient": "P1", "html": HTML} for i in range(3)]
    _with_invalid_utf8(write_notes(rows), tmp_path / "broken.parquet", 1)
    out = tmp_path / "out"
    args = [command, str(tmp_path / "broken.parquet"), "--out", str(out), "-q"]
    if command == "deidentify":
        spans = tmp_path / "spans.parquet"
        pd.DataFrame([span("Jeanne</b> LE GALL", "PATIENT", f"d{i}") for i in range(3)]).to_parquet(spans)
        args += ["--spans", str(spans), "--key", KEY]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert "html is not valid UTF-8" in result.output
    documents = pd.read_parquet(out / "documents.parquet").set_index("id_document")
    assert list(documents["status"]) == ["ok", "failed", "ok"]
    assert documents.loc["d1", "error"] == "html is not valid UTF-8 (a damaged export?)"
