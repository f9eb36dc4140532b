"""``deid-ds review``: which notes, both sides as deidentify makes them, escaping, refusals, the CLI.

(The page in a real browser: tests/browser.)"""

from __future__ import annotations

import re
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.deidentification import deidentify
from deid_ds.errors import InputError
from deid_ds.review import choose_documents, review
from deid_ds.segmentation.html_text import html_to_text
from tests.conftest import REPO
from tests.review.pages import HOSTILE_ID, write_inputs

KEY = "review-test-key-not-secret"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return write_inputs(tmp_path_factory.mktemp("review"))


def test_choose_documents_by_id_or_by_a_seeded_sample():
    ids = [f"d{i}" for i in range(30)]
    assert choose_documents(ids, ["d7", "d2", "d7"]) == ["d2", "d7"]  # input order, once each
    first = choose_documents(ids, sample=5, seed=1)
    assert len(first) == 5 and first == choose_documents(ids, sample=5, seed=1) != choose_documents(ids, sample=5)
    assert choose_documents(ids[:3], sample=10) == ids[:3]
    assert len(choose_documents(ids)) == 10  # the default sample
    with pytest.raises(InputError, match="1 id"):
        choose_documents(ids, ["d1", "nope"])


def test_mask_mode_shows_labels_in_place_of_the_entities(inputs, tmp_path):
    notes, gold, _ = inputs
    result = review(notes, gold, tmp_path / "p.html", documents=[HOSTILE_ID], mode="mask")
    (note,) = result.notes
    assert note.original.startswith("Vu par le Dr Jean DUPONT le 12/03/2020 à Rennes.")
    assert [note.original[s:e] for s, e, _ in note.original_spans] == ["Jean DUPONT", "12/03/2020", "Rennes"]
    assert "DUPONT" not in note.deidentified and "Rennes" not in note.deidentified
    assert [label for *_, label in note.deidentified_spans] == ["DOCTOR", "DATE", "VILLE"]
    assert note.other_views == 2  # the name in the <title>, the script emptied
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert "This page holds identifiers." in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script" not in page.lower()
    assert '<mark class="label-DOCTOR" title="DOCTOR">Jean DUPONT' in page
    assert not re.search(r'(src|href)="(?!data:|#)', page)


def test_surrogate_mode_shows_what_deidentify_writes_with_the_same_key(inputs, tmp_path):
    notes, gold, _ = inputs
    chosen = pd.read_parquet(notes)["id_document"].tolist()[:3]
    result = review(notes, gold, tmp_path / "p.html", documents=chosen, mode="surrogate", key=KEY)
    released = tmp_path / "released"
    deidentify(notes, released, spans=gold, mode="surrogate", key=KEY, progress=False)
    written = pd.read_parquet(released / "notes.parquet").set_index("id_document")["html"]
    for note in result.notes:
        assert note.deidentified == html_to_text(written[note.id_document]).text
        assert note.deidentified != note.original


def test_refusals_are_one_line_errors(inputs, tmp_path):
    notes, gold, _ = inputs
    (tmp_path / "exists.html").write_text("mine")
    runner = CliRunner()
    base = ["review", str(notes), "--spans", str(gold)]
    refused = runner.invoke(main, [*base, "--out", str(tmp_path / "exists.html")])
    assert refused.exit_code == 1 and "exists" in refused.output and "Traceback" not in refused.output
    assert (tmp_path / "exists.html").read_text() == "mine"  # not deid-ds's: never replaced without --overwrite
    missing = runner.invoke(main, [*base, "--out", str(tmp_path / "x.html"), "--documents", "nope,other"])
    assert missing.exit_code == 1 and "2 id(s) not in the notes" in missing.output
    both = runner.invoke(main, [*base, "--out", str(tmp_path / "x.html"), "--documents", "a", "--sample", "2"])
    assert both.exit_code == 2
    assert not (tmp_path / "x.html").exists()
    again = [*base, "--out", str(tmp_path / "x.html"), "--sample", "1"]
    assert runner.invoke(main, again).exit_code == 0
    assert runner.invoke(main, again).exit_code == 0  # its own page is replaced: a command can be run again


@pytest.mark.slow  # a process that imports pandas and pyarrow: seconds on a busy machine
def test_the_command_writes_the_page_and_warns(inputs, tmp_path):
    notes, gold, _ = inputs
    out = tmp_path / "page.html"
    done = subprocess.run(
        [sys.executable, "-m", "deid_ds", "review", str(notes), "--spans", str(gold), "--out", str(out)]
        + ["--sample", "2", "--seed", "3"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "2 note(s) reviewed" in done.stdout and "holds the original notes" in done.stderr
    assert out.read_text(encoding="utf-8").count('<section class="reviewed">') == 2


def test_the_page_never_replaces_an_input_even_with_overwrite(inputs, tmp_path):
    notes, gold, _ = inputs
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "names.parquet").write_bytes(b"a table")
    runner = CliRunner()
    base = ["review", str(notes), "--spans", str(gold), "--kb", str(kb), "--sample", "1", "--overwrite"]
    before = {path: path.read_bytes() for path in (notes, gold, kb / "names.parquet")}
    for target in before:
        refused = runner.invoke(main, [*base, "--out", str(target)])
        assert refused.exit_code == 2, refused.output
        assert "input of this run" in refused.output and "Traceback" not in refused.output
        assert len(refused.output.strip().splitlines()) == 1
    assert {path: path.read_bytes() for path in before} == before
    beside = ["review", str(notes), "--spans", str(gold), "--sample", "1", "--out", str(gold.parent / "r.html")]
    assert runner.invoke(main, beside).exit_code == 0  # a new page beside the inputs: allowed


def test_the_page_escapes_the_document_type_once_and_lists_the_changes_outside_the_text(inputs, tmp_path):
    notes, gold, _ = inputs
    frame = pd.read_parquet(notes)
    frame.loc[frame["id_document"] == HOSTILE_ID, "doc_type"] = "CR <urgences> & suivi"
    frame.to_parquet(tmp_path / "notes.parquet")
    out = tmp_path / "p.html"
    done = CliRunner().invoke(
        main,
        ["review", str(tmp_path / "notes.parquet"), "--spans", str(gold), "--documents", HOSTILE_ID]
        + ["--out", str(out)],
    )
    assert done.exit_code == 0, done.output
    page = out.read_text(encoding="utf-8")
    assert "type CR &lt;urgences&gt; &amp; suivi" in page and "&amp;lt;" not in page and "&amp;amp;" not in page
    (changes,) = re.findall(r'<div class="other-views">.*?</div>', page)
    assert "DOCTOR</mark>: <del>Jean DUPONT</del> → <ins>" in changes  # the name in the <title>, and its mask
    assert "DUPONT</ins>" not in changes and "emptied" in changes  # the name replaced; the script emptied


def test_spans_about_other_notes_are_refused_as_deidentify_refuses_them(inputs, tmp_path):
    notes, gold, _ = inputs
    other = tmp_path / "other.parquet"
    spans = pd.read_parquet(gold)
    spans.assign(id_document=spans["id_document"].str.upper() + "-X").to_parquet(other)
    base = ["review", str(notes), "--spans", str(other), "--out", str(tmp_path / "p.html"), "-q"]
    refused = CliRunner().invoke(main, base)
    assert refused.exit_code == 2 and "none of its" in refused.output
    assert "Traceback" not in refused.output and not (tmp_path / "p.html").exists()
    most = tmp_path / "most.parquet"  # the spans of one note only
    spans[spans["id_document"] == spans["id_document"].iloc[0]].to_parquet(most)
    base[3] = str(most)
    assert CliRunner().invoke(main, base).exit_code == 2
    assert CliRunner().invoke(main, [*base, "--allow-unmatched-spans"]).exit_code == 0
