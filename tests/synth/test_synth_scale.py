"""``deid-ds synth`` at the study's scale: no patient without a day for a note, and a sample written
as it is generated (row groups of ``chunk_notes`` notes) that is the same sample whatever the chunk size."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.cli import main
from deid_ds.io.files import TMP_PREFIX
from deid_ds.synth import SynthConfig, generate_corpus, synthesize, write_corpus
from deid_ds.synth.corpus import FIRST_NOTE_AGE_DAYS, LAST_DAY, Generation, note_days, note_window

REPO = Path(__file__).resolve().parents[2]


# -- every patient has a day for a note -------------------------------------------------------------------


def test_a_patient_drawn_in_the_corpus_last_week_is_a_month_old_and_the_command_succeeds(tmp_path):
    """Seed 267 draws its sixth patient born 7 days before LAST_DAY: the old generator had no day for that
    patient's note and died with ``ValueError: empty range for randrange()`` (as --notes 50000 did, every seed)."""
    result = CliRunner().invoke(
        main,
        [
            "synth",
            "--notes",
            "40",
            "--seed",
            "267",
            "--noise",
            "0",
            "--out",
            str(tmp_path),
            "--distractor-professionals",
            "0",
            "--distractor-streets",
            "1",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    notes = pq.read_table(tmp_path / "notes.parquet").to_pylist()
    assert len(notes) == 40
    youngest = max(note["birthdate"] for note in notes)  # noise 0: the metadata holds the true birthdate
    assert youngest == (LAST_DAY - timedelta(days=FIRST_NOTE_AGE_DAYS)).isoformat()


def test_note_days_of_the_youngest_patient_are_the_last_day_and_a_later_birth_is_refused_clearly():
    youngest = LAST_DAY - timedelta(days=FIRST_NOTE_AGE_DAYS)
    assert note_window(youngest) == (LAST_DAY, LAST_DAY)
    assert note_days(random.Random(1), youngest, 3) == [LAST_DAY] * 3
    with pytest.raises(ValueError, match="no day for a note"):
        note_days(random.Random(1), youngest + timedelta(days=1), 1)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(min_value=0, max_value=10**6), notes=st.integers(min_value=1, max_value=300))
def test_every_planned_note_falls_in_its_patients_window(seed, notes):
    plans = list(Generation(SynthConfig(notes=notes, seed=seed, distractor_professionals=0)).plans())
    assert len(plans) == notes
    for plan in plans:
        first, last = note_window(plan.patient.birthdate)
        assert first <= plan.when <= last
        assert plan.patient.birthdate <= LAST_DAY - timedelta(days=FIRST_NOTE_AGE_DAYS)


@pytest.mark.slow
def test_the_issue_s_50000_notes_are_all_planned():
    """``--notes 50000`` died before writing its first note, for every seed tried: 12,500 patients is enough
    for one to be drawn in the last month. The plan (patients, days, types) is where it died."""
    plans = Generation(SynthConfig(notes=50_000, seed=1, distractor_professionals=0)).plans()
    assert sum(1 for _ in plans) == 50_000


# -- written as it is generated -------------------------------------------------------------------------------


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_sample_written_in_three_chunks_is_the_sample_written_in_one(tmp_path):
    config = SynthConfig(
        notes=100, seed=5, noise=0.6, phrasing="all", distractor_professionals=50, distractor_streets=2
    )
    one, three = tmp_path / "one", tmp_path / "three"
    counts = synthesize(config, one, command="deid-ds synth")
    synthesize(config, three, chunk_notes=40, command="deid-ds synth")
    assert [pq.ParquetFile(d / "notes.parquet").num_row_groups for d in (one, three)] == [1, 3]
    assert pq.ParquetFile(three / "gold.parquet").num_row_groups == 3
    for name in ("notes.parquet", "gold.parquet"):
        assert pq.read_table(one / name).equals(pq.read_table(three / name)), name
    files_one, files_three = _files(one), _files(three)
    assert files_one.keys() == files_three.keys()
    for name in files_one.keys() - {"notes.parquet", "gold.parquet"}:  # gold.jsonl, README, the KB files
        assert files_one[name] == files_three[name], name
    gold = [json.loads(line) for line in (one / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
    assert counts.notes == 100 and counts.spans == len(gold) > 100


def test_synthesize_writes_the_bytes_generate_corpus_then_write_corpus_write(tmp_path):
    config = SynthConfig(notes=60, seed=8, phrasing="unseen", distractor_professionals=20, distractor_streets=1)
    synthesize(config, tmp_path / "streamed", command="deid-ds synth")
    write_corpus(generate_corpus(config), tmp_path / "in-memory", command="deid-ds synth")
    assert _files(tmp_path / "streamed") == _files(tmp_path / "in-memory")


def _interruptible() -> None:
    """A shell without job control starts background commands with SIGINT ignored; the child must feel Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_an_interrupted_synth_leaves_the_previous_sample_and_no_temporary_file(tmp_path):
    """Ctrl-C while the notes are being written: the sample already there is untouched, nothing half-written stays."""
    out = tmp_path / "out"
    runner = CliRunner().invoke(
        main,
        [
            "synth",
            "--notes",
            "30",
            "--seed",
            "3",
            "--out",
            str(out),
            "--quiet",
            "--distractor-professionals",
            "0",
            "--distractor-streets",
            "1",
        ],
    )
    assert runner.exit_code == 0, runner.output
    before = _files(out)
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "deid_ds",
            "synth",
            "--notes",
            "50000",
            "--patients",
            "50",
            "--seed",
            "4",
            "--out",
            str(out),
            "--quiet",
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_interruptible,
    )
    deadline = time.monotonic() + 60
    while not any(p.name.startswith(TMP_PREFIX) for p in out.iterdir()):  # the tables are being written
        assert child.poll() is None and time.monotonic() < deadline, "synth ended before writing"
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode != 0
    assert b"Traceback" not in err
    assert _files(out) == before
    assert not [p for p in out.rglob("*") if p.name.startswith(TMP_PREFIX)]


def test_synth_writes_only_into_a_directory_it_wrote_or_with_overwrite(tmp_path):
    """A folder of the user's (their own notes.parquet) is refused, exit status 2, untouched."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.parquet").write_bytes(b"the user's own notes")
    args = ["synth", "--notes", "8", "--seed", "3", "--quiet", "--distractor-professionals", "0"]
    refused = CliRunner().invoke(main, [*args, "--out", str(mine)])
    assert refused.exit_code == 2 and "--overwrite" in refused.output and "Traceback" not in refused.output
    assert [p.name for p in mine.iterdir()] == ["notes.parquet"]
    assert (mine / "notes.parquet").read_bytes() == b"the user's own notes"
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "keep.txt").write_text("mine")
    refused = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "new"), "--kb-dir", str(kb)])
    assert refused.exit_code == 2 and not (tmp_path / "new").exists()
    done = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "new")])
    assert done.exit_code == 0, done.output
    again = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "new")])  # its own output: written again
    assert again.exit_code == 0, again.output
    forced = CliRunner().invoke(main, [*args, "--out", str(mine), "--overwrite"])
    assert forced.exit_code == 0 and (mine / "notes.parquet").read_bytes() != b"the user's own notes"
