"""Large notes: labelling work grows linearly with a note's size, and a note over
``--max-note-bytes`` or ``--note-timeout`` is failed with its reason while the others are labelled.

No test here measures seconds: the work is counted in function calls, and the time limit is
exercised with a note that takes many times longer than the limit given.
"""

from __future__ import annotations

import json
import re
import signal
import sys
import threading
import time

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.label.labeller import WeakLabeller
from deid_ds.segmentation.html_text import html_to_text
from deid_ds.segmentation.limits import NoteTimeout, run_with_timeout, size_error
from deid_ds.segmentation.segmenter import Segmenter
from tests.conftest import REPO

NOTES = REPO / "data" / "notes.parquet"


def sample_html(n: int) -> list[str]:
    """The HTML of the first ``n`` notes of the committed sample."""
    return pq.read_table(NOTES, columns=["html"]).column("html").to_pylist()[:n]


def calls_to_label(text: str, segmenter: Segmenter, labeller: WeakLabeller) -> int:
    """Python function calls (generator steps included) made to segment and label ``text``.

    A count, not a duration: the same on every machine. The note is labelled once before counting, so
    that the per-process memos are as warm for every size.
    """
    spans = segmenter.token_spans(text)
    labeller.label_offsets(text, spans.starts, spans.ends)
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(count)
    try:
        spans = segmenter.token_spans(text)
        labeller.label_offsets(text, spans.starts, spans.ends)
    finally:
        sys.setprofile(None)
    return calls


def test_twice_the_note_is_twice_the_work(kb_dir):
    # Eight sample notes, dense with dates, phones, names and addresses, repeated 3 then 6 times. Each
    # rule that compared a span with every span kept before it (dates, phones, postcodes near a city)
    # made the work grow with the square of the note: 2.8 times the calls for twice the note.
    text = "\n\n".join(html_to_text(html).text for html in sample_html(8))
    segmenter, labeller = Segmenter(), WeakLabeller.from_kb(kb_dir)
    small = calls_to_label("\n\n".join([text] * 3), segmenter, labeller)
    large = calls_to_label("\n\n".join([text] * 6), segmenter, labeller)
    assert large <= 2.05 * small, f"{large} calls for twice the note, {small} for the note"


def weak_label_cli(notes, out, *options: str):
    return CliRunner().invoke(main, ["weak-label", str(notes), "--out", str(out), "-q", "-j", "1", *options])


def test_a_note_over_max_note_bytes_is_failed_with_its_size_and_the_others_are_labelled(write_notes, tmp_path):
    small = "<p>Revue le 3 février 2021 par le Dr Yann MORVAN.</p>"
    # 1,000 characters but 2,000 bytes: the limit is on bytes, what a note weighs in the notes table
    large = "<p>" + "é" * 993 + "</p>"
    at_limit = "<p>Vu le 4 mars 2021.</p>" + " " * (1000 - 25)
    rows = [
        {"id_document": "d1", "id_patient": "p1", "html": small},
        {"id_document": "d2", "id_patient": "p1", "html": large},
        {"id_document": "d3", "id_patient": "p2", "html": at_limit},
    ]
    assert len(large) == len(at_limit.encode()) == 1000
    out = tmp_path / "out"
    result = weak_label_cli(write_notes(rows), out, "--max-note-bytes", "1000")
    assert result.exit_code == 0, result.output
    documents = pd.read_parquet(out / "documents.parquet").set_index("id_document")
    assert documents["status"].to_dict() == {"d1": "ok", "d2": "failed", "d3": "ok"}
    assert documents.loc["d2", "error"] == "note larger than the limit (1993 bytes > 1000)"
    assert sorted(pd.read_parquet(out / "spans.parquet")["text"]) == ["3 février 2021", "4 mars 2021", "Yann MORVAN"]
    report = json.loads((out / "report.json").read_text())
    assert report["failures"] == {"note larger than the limit (1993 bytes > 1000)": 1}


def test_max_note_bytes_zero_is_no_limit(write_notes, tmp_path):
    rows = [{"id_document": "d1", "id_patient": "p1", "html": "<p>Revue le 3 février 2021.</p>"}]
    result = weak_label_cli(write_notes(rows), tmp_path / "out", "--max-note-bytes", "0")
    assert result.exit_code == 0, result.output
    assert pd.read_parquet(tmp_path / "out" / "documents.parquet")["status"].tolist() == ["ok"]


def test_size_error_measures_utf8_bytes_and_quotes_no_content():
    assert size_error("é" * 10, 20) is None  # 20 bytes: at the limit
    assert size_error("é" * 10, 19) == "note larger than the limit (20 bytes > 19)"
    assert size_error(b"x" * 5, 4) == "note larger than the limit (5 bytes > 4)"
    assert size_error("x" * 5, None) is None and size_error(None, 4) is None  # a null note: the parser says so


@pytest.mark.parametrize("workers", ["1", pytest.param("2", marks=pytest.mark.slow)])
def test_a_note_over_note_timeout_is_failed_and_its_batch_goes_on(write_notes, tmp_path, workers):
    # ~1 MB of dense notes in one: a few seconds to label, against a limit of 0.3 s; the short notes
    # around it take a few milliseconds each. -j 2 runs the batch in a worker process.
    huge = "\n".join(sample_html(300) * 2)
    rows = [
        {"id_document": "d1", "id_patient": "p1", "html": "<p>Revue le 3 février 2021.</p>"},
        {"id_document": "huge", "id_patient": "p1", "html": huge},
        {"id_document": "d3", "id_patient": "p2", "html": "<p>Vu le 4 mars 2021.</p>"},
    ]
    out = tmp_path / "out"
    result = weak_label_cli(write_notes(rows), out, "--note-timeout", "0.3", "--batch-size", "3", "-j", workers)
    assert result.exit_code == 0, result.output
    documents = pd.read_parquet(out / "documents.parquet").set_index("id_document")
    assert documents["status"].to_dict() == {"d1": "ok", "huge": "failed", "d3": "ok"}
    assert documents.loc["huge", "error"] == "note took longer than the time limit (0.3 s)"
    assert sorted(pd.read_parquet(out / "spans.parquet")["id_document"]) == ["d1", "d3"]
    assert "note took longer than the time limit (0.3 s)" in result.output


def test_the_limits_are_documented_in_the_help():
    result = CliRunner().invoke(main, ["weak-label", "--help"])
    assert "--max-note-bytes" in result.output and "--note-timeout" in result.output
    assert "[default: 5000000" in result.output and "[default: 60.0" in result.output


# -- the timer ---------------------------------------------------------------------------------------------


def catastrophic_regex() -> None:
    """A regex search that backtracks for longer than any test lasts, inside the C regex engine."""
    re.match(r"(a+)+$", "a" * 40 + "b")


def test_the_timer_interrupts_work_inside_the_regex_engine_and_restores_the_handler():
    def previous_handler(signum, frame):
        pass

    signal.signal(signal.SIGALRM, previous_handler)
    try:
        assert run_with_timeout(catastrophic_regex, 0.1) is None
        assert signal.getsignal(signal.SIGALRM) is previous_handler
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
        assert run_with_timeout(lambda: 42, 5.0) == 42
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0  # disarmed after work that ended in time
    finally:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


def test_the_timeout_is_not_an_exception_that_a_note_handler_would_swallow():
    assert not issubclass(NoteTimeout, Exception)


def test_without_a_timer_the_work_is_judged_by_its_duration():
    # Outside the main thread no signal can interrupt it: the work ends, and is failed if it was too long.
    results = []

    def in_a_thread():
        results.append(run_with_timeout(lambda: time.sleep(0.3) or "slow", 0.05))
        results.append(run_with_timeout(lambda: "quick", 5.0))

    thread = threading.Thread(target=in_a_thread)
    thread.start()
    thread.join()
    assert results == [None, "quick"]


def test_a_timer_someone_else_set_is_left_alone():
    signal.signal(signal.SIGALRM, lambda signum, frame: None)
    signal.setitimer(signal.ITIMER_REAL, 30.0)
    try:
        assert run_with_timeout(lambda: "done", 0.5) == "done"
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 25.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


def test_segment_applies_the_same_limits(write_notes, tmp_path):
    huge = "\n".join(sample_html(300) * 2)  # ~1 MB: about a second to parse and segment, against 0.1 s
    rows = [
        {"id_document": "d1", "id_patient": "p1", "html": "<p>Revue le 3 février 2021.</p>"},
        {"id_document": "huge", "id_patient": "p1", "html": huge},
        {"id_document": "big", "id_patient": "p2", "html": "<p>" + "x" * 3000 + "</p>"},
    ]
    notes, out = write_notes(rows), tmp_path / "out"
    options = ["--max-note-bytes", str(len(huge.encode())), "--note-timeout", "0.1"]
    assert len(rows[2]["html"]) < len(huge)  # under --max-note-bytes: segmented
    result = CliRunner().invoke(main, ["segment", str(notes), "--out", str(out), "-q", *options])
    assert result.exit_code == 0, result.output
    documents = pd.read_parquet(out / "documents.parquet").set_index("id_document")
    assert documents["status"].to_dict() == {"d1": "ok", "huge": "failed", "big": "ok"}
    assert documents.loc["huge", "error"] == "note took longer than the time limit (0.1 s)"

    result = CliRunner().invoke(main, ["segment", str(notes), "--out", str(out), "-q", "--max-note-bytes", "3000"])
    assert result.exit_code == 0, result.output
    documents = pd.read_parquet(out / "documents.parquet").set_index("id_document")
    assert documents["status"].to_dict() == {"d1": "ok", "huge": "failed", "big": "failed"}
    assert documents.loc["big", "error"] == "note larger than the limit (3007 bytes > 3000)"
    assert set(pd.read_parquet(out / "sentences.parquet")["id_document"]) == {"d1"}
