"""``evaluate --html``: the report's content, its escaping and warnings, error examples; the figure's axis
and the per-label intervals behind its error bars. (The page in a real browser: tests/browser.)"""

from __future__ import annotations

import base64
import re
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.errors import InputError
from deid_ds.evaluation import evaluate
from deid_ds.evaluation.examples import FALSE_NEGATIVE, FALSE_POSITIVE, error_examples
from deid_ds.evaluation.figure import axis_floor
from deid_ds.evaluation.scoring import compare_systems
from tests.conftest import REPO
from tests.review.pages import HOSTILE_ID, write_inputs


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The report of the sample system against the gold, with the notes (so with context)."""
    base = tmp_path_factory.mktemp("report")
    notes, gold, system = write_inputs(base)
    result = evaluate(
        gold,
        [system, gold],
        names=["model", "gold-copy"],
        notes=notes,
        html=base / "r.html",
        n_bootstrap=50,
        examples_per_label=2,
    )
    return result, (base / "r.html").read_text(encoding="utf-8")


def test_the_report_holds_the_tables_the_figure_and_a_banner(report):
    result, page = report
    assert page.startswith("<!DOCTYPE html>") and "<title>deid-ds evaluation report</title>" in page
    assert "This page holds note text." in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    for heading in ("Systems side by side", "F1 per label", "Figure", "Per document type", "Error examples"):
        assert f"<h2>{heading}</h2>" in page
    assert '<th scope="col">model</th>' in page and '<th scope="col">gold-copy</th>' in page  # systems as columns
    micro = result.comparison.scores["model"].micro
    assert f"{micro.f1:.3f}" in page
    low, high = result.comparison.label_ci["model"]["PATIENT"]
    assert f"[{low:.3f}, {high:.3f}]" in page
    png = base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', page).group(1))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "consultation" in page  # per document type, from the notes


def test_note_text_is_escaped_and_nothing_external_is_referenced(report):
    _, page = report
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page or HOSTILE_ID not in page
    assert "<script" not in page.lower()
    assert not re.search(r'(src|href)="(?!data:|#)', page)  # no URL but data: images and in-page anchors
    assert "127.0.0.1" not in page


def test_error_examples_are_the_system_errors_with_their_context(report):
    _, page = report
    # the relabelled city of the hostile note: a false positive STR and a false negative VILLE, overlapping
    assert "gold VILLE" in page and "predicted STR" in page
    assert "Rennes" in page  # its context
    assert "gold-copy: 0 false positive(s), 0 false negative(s) shown" in page


def test_examples_are_bounded_per_system_label_and_kind():
    gold = pd.DataFrame(
        [(f"d{i}", "DATE", 0, 5) for i in range(20)], columns=["id_document", "label", "html_start", "html_end"]
    )
    shifted = gold.assign(html_end=4)
    examples = error_examples(gold, {"s": shifted}, [f"d{i}" for i in range(20)], per_label=3, seed=0)["s"]
    assert sum(e.kind == FALSE_POSITIVE for e in examples) == 3 and sum(e.kind == FALSE_NEGATIVE for e in examples) == 3
    assert error_examples(gold, {"s": shifted}, [f"d{i}" for i in range(20)], per_label=3, seed=0)["s"] == examples
    assert all(e.overlaps.startswith(("gold DATE 0-5", "predicted DATE 0-4")) for e in examples)


@pytest.mark.slow  # a process that imports pandas and matplotlib: seconds on a busy machine
def test_the_command_warns_on_stderr_when_the_page_holds_note_text(tmp_path):
    notes, gold, system = write_inputs(tmp_path, n_notes=2)
    command = [sys.executable, "-m", "deid_ds", "evaluate", "--gold", str(gold), "--pred", str(system)]
    done = subprocess.run(
        [*command, "--bootstrap", "20", "--notes", str(notes), "--html", str(tmp_path / "a.html"), "--quiet"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "holds note text" in done.stderr and "report written to" in done.stdout
    assert "DUPONT" not in done.stdout + done.stderr  # the page has the text, the terminal does not
    assert not list(tmp_path.glob(".deid-ds-tmp-*"))  # written atomically, nothing left behind


def test_without_the_notes_the_page_has_no_note_text_and_the_command_no_warning(tmp_path):
    _, gold, system = write_inputs(tmp_path, n_notes=2)
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--gold",
            str(gold),
            "--pred",
            str(system),
            "--bootstrap",
            "20",
            "--html",
            str(tmp_path / "b.html"),
        ],
    )
    assert result.exit_code == 0 and "holds note text" not in result.stderr
    page = (tmp_path / "b.html").read_text(encoding="utf-8")
    assert "no note text" in page and "(no context: give --notes)" in page and "DUPONT" not in page


def test_axis_starts_a_little_below_the_lowest_value():
    assert axis_floor([0.634, 0.99]) == 0.5
    assert axis_floor([0.97, 1.0]) == 0.9
    assert axis_floor([0.02, 0.5]) == 0.0
    assert axis_floor([1.0, 1.0]) == 0.9  # never a flat axis


def test_per_label_intervals_contain_the_label_f1_and_are_paired():
    gold = pd.DataFrame(
        [(f"d{i}", label, 0, 5) for i in range(40) for label in ("DATE", "VILLE")],
        columns=["id_document", "label", "html_start", "html_end"],
    )
    model = gold[~((gold["label"] == "VILLE") & (gold["id_document"].isin([f"d{i}" for i in range(10)])))]
    comparison = compare_systems({"gold": gold, "model": model}, gold, n_bootstrap=200, seed=0)
    assert comparison.label_ci["gold"]["VILLE"] == (1.0, 1.0) and comparison.label_ci["model"]["DATE"] == (1.0, 1.0)
    low, high = comparison.label_ci["model"]["VILLE"]
    assert low < comparison.scores["model"].exact["VILLE"].f1 < high < 1.0
    assert comparison.label_ci["model"]["EMAIL"] == (1.0, 1.0)  # no data: the convention's 1.0, no spread
    data = comparison.to_dict()["systems"]["model"]["per_label_f1_ci"]
    assert data["VILLE"] == [low, high]
    again = compare_systems({"gold": gold, "model": model}, gold, n_bootstrap=200, seed=0)
    assert again.label_ci == comparison.label_ci


def test_a_file_deid_ds_did_not_write_is_not_replaced(tmp_path):
    gold = pd.DataFrame([("d1", "DATE", 0, 5)], columns=["id_document", "label", "html_start", "html_end"])
    gold.to_parquet(tmp_path / "gold.parquet")
    theirs = tmp_path / "notes.html"
    theirs.write_text("someone's page")
    with pytest.raises(InputError, match="not written by deid-ds"):
        evaluate(tmp_path / "gold.parquet", [tmp_path / "gold.parquet"], html=theirs, n_bootstrap=5)
    assert theirs.read_text() == "someone's page"
    ours = tmp_path / "report.html"
    for _ in range(2):  # its own page is replaced
        evaluate(tmp_path / "gold.parquet", [tmp_path / "gold.parquet"], html=ours, n_bootstrap=5)
    assert "deid-ds evaluation report" in ours.read_text(encoding="utf-8")
