"""The command line, end to end, and the promises of a light package import."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import COMMANDS, SHORT_HELP, main
from tests.conftest import REPO


def test_help_lists_every_command_and_each_has_its_own_help():
    runner = CliRunner()
    result = runner.invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.output
        sub = runner.invoke(main, [name, "--help"])
        assert sub.exit_code == 0, sub.output
        assert "Usage:" in sub.output


def test_each_short_help_of_the_table_is_its_commands_own():
    assert list(SHORT_HELP) == list(COMMANDS)
    context = click.Context(main)
    for name in COMMANDS:
        assert SHORT_HELP[name] == main.get_command(context, name).get_short_help_str(limit=10**6), name


@pytest.mark.parametrize("width", [40, 80, 200])
def test_help_lists_the_commands_as_if_it_had_imported_them(width):
    context = click.Context(main, terminal_width=width, max_content_width=width)
    listed, imported = context.make_formatter(), context.make_formatter()
    main.format_commands(context, listed)
    click.Group.format_commands(main, context, imported)  # click's own: imports every command
    assert listed.getvalue() == imported.getvalue()


#: Modules a light path must not import: the model stack, NLTK (and the scipy it pulls in), plotting.
HEAVY = ("nltk", "scipy", "sklearn", "matplotlib", "torch", "flair", "gensim", "pyspark", "transformers")


def modules_after(code: str) -> dict:
    """What a fresh interpreter has imported after running ``code`` (and its exit status)."""
    script = (
        "import json, sys\n"
        "status = 0\n"
        "try:\n" + "".join(f"    {line}\n" for line in code.splitlines()) + "except SystemExit as exit:\n"
        "    status = exit.code\n"
        "print(json.dumps({'status': status, 'modules': sorted(sys.modules)}))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_help_imports_no_command_and_nothing_heavy():
    seen = modules_after("from deid_ds.cli import main\nmain(['--help'])")
    assert seen["status"] == 0
    assert [m for m in seen["modules"] if m.split(".")[0] in (*HEAVY, "pandas", "pyarrow", "numpy")] == []
    assert [m for m in seen["modules"] if m.startswith("deid_ds.")] == ["deid_ds.cli", "deid_ds.lazy_api"]


def test_each_commands_help_imports_neither_its_stage_nor_anything_heavy():
    """``deid-ds weak-label --help`` took 0.7 s of CPU when the stage packages imported their whole API.

    ``evaluate`` and ``review`` are left out: their packages export a function named after its own module
    (``deid_ds.evaluation.evaluate.evaluate``), which a lazily loaded package cannot serve reliably, so they
    import it up front (0.3-0.4 s of CPU for their help).
    """
    names = [name for name in COMMANDS if name not in ("evaluate", "review")]
    helps = "\n".join(f"try:\n    main([{name!r}, '--help'])\nexcept SystemExit:\n    pass" for name in names)
    seen = modules_after("from deid_ds.cli import main\n" + helps)
    assert [m for m in seen["modules"] if m.split(".")[0] in (*HEAVY, "pandas", "pyarrow", "numpy")] == []
    assert "deid_ds.weak_labelling.batch" not in seen["modules"]
    assert "deid_ds.deidentification.pipeline" not in seen["modules"]


@pytest.mark.parametrize(
    "module",
    ["deid_ds.weak_labelling", "deid_ds.weak_labelling.batch", "deid_ds.deidentification.batch", "deid_ds.campaign"],
)
def test_the_light_stages_and_their_workers_import_nothing_heavy(module):
    """A worker of the local engine starts with ``spawn``: it imports its stage's module, and pays for it."""
    seen = modules_after(f"import {module}")
    assert [m for m in seen["modules"] if m.split(".")[0] in HEAVY] == []


def test_weak_label_and_deidentify_on_a_note_import_nothing_heavy(tmp_path, kb_dir):
    notes = tmp_path / "one.parquet"
    pq.write_table(pq.read_table(REPO / "data" / "notes.parquet").slice(0, 1), notes)
    weak = tmp_path / "weak"
    run = f"from deid_ds.cli import main\nmain({{}} + ['--kb', {str(kb_dir)!r}, '-q', '--workers', '1'])"
    seen = modules_after(run.format(["weak-label", str(notes), "--out", str(weak)]))
    assert seen["status"] == 0 and (weak / "spans.parquet").is_file()
    assert [m for m in seen["modules"] if m.split(".")[0] in HEAVY] == []
    spans = str(weak / "spans.parquet")
    seen = modules_after(run.format(["deidentify", str(notes), "--spans", spans, "--out", str(tmp_path / "deid")]))
    assert seen["status"] == 0 and (tmp_path / "deid").is_dir()
    assert [m for m in seen["modules"] if m.split(".")[0] in HEAVY] == []


def test_python_dash_m_works_and_import_is_light():
    code = (
        "import sys, deid_ds, deid_ds.cli;"
        "heavy = [m for m in ('torch', 'flair', 'prodigy', 'nltk', 'pandas', 'pyarrow') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    version = subprocess.run([sys.executable, "-m", "deid_ds", "--version"], capture_output=True, text=True, check=True)
    assert "deid-ds" in version.stdout


def test_segment_accounts_for_every_note_and_never_prints_note_text(tmp_path, write_notes):
    rows = [
        {
            "id_document": "d1",
            "id_patient": "p1",
            "html": "<p>Mme <b>Jeanne</b> LE GALL, née le 12/08/1957.</p><p>Dr KERBRAT</p>",
        },
        {"id_document": "d2", "id_patient": "p1", "html": None},
        {"id_document": "d3", "id_patient": "p2", "html": "<p>&nbsp;</p>"},
        {"id_document": "d4", "id_patient": "p2", "html": "<style>jamais fermé Jeanne"},
    ]
    notes = write_notes(
        rows, schema=pa.schema([("id_document", pa.string()), ("id_patient", pa.string()), ("html", pa.string())])
    )
    out = tmp_path / "seg"
    result = CliRunner().invoke(main, ["segment", str(notes), "--out", str(out), "--quiet", "--batch-size", "2"])
    assert result.exit_code == 0, result.output
    assert "Jeanne" not in result.output and "KERBRAT" not in result.output
    documents = pd.read_parquet(out / "documents.parquet")
    assert documents["id_document"].tolist() == ["d1", "d2", "d3", "d4"]
    assert documents["status"].tolist() == ["ok", "failed", "empty", "ok"]
    assert documents.loc[1, "error"] == "html is null"
    assert json.loads(documents.loc[3, "warnings"]) == {"unclosed_hidden_element": 1}
    sentences = pd.read_parquet(out / "sentences.parquet")
    first = sentences.iloc[0]
    assert first["text"] == "Mme Jeanne LE GALL, née le 12/08/1957."
    token = next(t for t in first["tokens"] if t["text"] == "Jeanne")
    assert rows[0]["html"][token["html_start"] : token["html_end"]] == "Jeanne"
    report = json.loads((out / "report.json").read_text())
    assert (report["documents"], report["ok"], report["failed"], report["empty"]) == (4, 2, 1, 1)


def test_segment_with_two_workers_gives_the_same_output(tmp_path, write_notes):
    rows = [
        {
            "id_document": f"d{i}",
            "id_patient": "p",
            "html": f"<p>Note {i}. Vu par le Dr. Martin le 0{i % 9 + 1}/02/2021.</p>",
        }
        for i in range(30)
    ]
    notes = write_notes(rows)
    runner = CliRunner()
    for workers in ("1", "2"):
        result = runner.invoke(
            main, ["segment", str(notes), "-o", str(tmp_path / workers), "-q", "--batch-size", "4", "-j", workers]
        )
        assert result.exit_code == 0, result.output
    one = pd.read_parquet(tmp_path / "1" / "sentences.parquet")
    two = pd.read_parquet(tmp_path / "2" / "sentences.parquet")
    pd.testing.assert_frame_equal(one, two)


def test_bad_input_gives_one_clear_line_and_leaves_no_output(tmp_path):
    bad = tmp_path / "notes.parquet"
    bad.write_text("not parquet")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["segment", str(bad), "--out", str(out)])
    assert result.exit_code == 1
    assert "not a Parquet file" in result.output and "Traceback" not in result.output
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".deid-ds-tmp-")]


def test_punkt_train_then_segment_with_the_trained_parameters(tmp_path, write_notes):
    rows = [
        {
            "id_document": f"d{i}",
            "html": "<p>Traitement par amox. et clav. depuis hier. Revu par le Pr. Martin. Sortie.</p>",
        }
        for i in range(40)
    ]
    notes = write_notes(rows)
    params = tmp_path / "punkt.json"
    runner = CliRunner()
    result = runner.invoke(main, ["punkt-train", str(notes), "--out", str(params), "-v"])
    assert result.exit_code == 0, result.output
    assert "notes_used" in result.output
    result = runner.invoke(main, ["segment", str(notes), "--out", str(tmp_path / "seg"), "--punkt", str(params), "-q"])
    assert result.exit_code == 0, result.output


def test_every_public_name_of_the_api_resolves():
    import deid_ds

    for name in deid_ds.__all__:
        assert getattr(deid_ds, name) is not None, name
