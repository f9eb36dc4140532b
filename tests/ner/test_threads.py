"""torch's thread counts never oversubscribe the cores (one rule, ``deid_ds.ner.runtime.thread_count``), and
``deid-ds train`` shows its progress on a terminal unless ``-q``: epoch, batches, time left, loss and dev F1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from deid_ds.cli import main
from deid_ds.defaults import available_cores
from deid_ds.errors import InputError
from deid_ds.ner.runtime import thread_count
from deid_ds.ner.train import time_left
from tests.conftest import weak_label_sample


@pytest.fixture(autouse=True)
def no_network(cut_network):
    """Every test here runs with the network cut (see ``conftest.cut_network``)."""


# ------------------------------------------------------------------------------------------- the rule


@pytest.mark.parametrize(
    ("requested", "cores", "workers", "threads"),
    [
        (None, 1, 1, 1),  # one thread by default...
        (None, 2, 1, 1),  # ... on a 2-core machine, where other jobs made 2 threads 14 times slower
        (None, 64, 1, 1),  # ... and on a big one: the models are small
        (None, 16, 4, 1),
        (2, 2, 1, 2),  # asked for, within the cores: obeyed
        (4, 16, 4, 4),  # 4 workers x 4 threads = 16 cores
        (8, 2, 1, 2),  # never more threads than cores...
        (4, 16, 8, 2),  # ... nor workers x threads more than the cores
        (3, 2, 5, 1),  # more workers than cores: one thread each
    ],
)
def test_thread_count_never_oversubscribes(requested, cores, workers, threads):
    assert thread_count(requested, cores, workers) == threads
    assert workers * thread_count(requested, cores, workers) <= max(cores, workers)


def test_a_thread_count_below_one_is_refused():
    with pytest.raises(InputError, match="--threads 0"):
        thread_count(0, 4)


def test_the_cores_are_those_the_process_may_run_on(monkeypatch):
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)  # taskset -c 3, a cpuset
    assert available_cores() == 1


def test_predict_workers_share_the_cores_they_may_run_on(monkeypatch):
    import deid_ds.engine.local
    from deid_ds.engine import engine_for

    monkeypatch.setattr(deid_ds.engine.local, "available_cores", lambda: 4)
    shares = [engine_for("local", workers=w, progress=False).task_threads() for w in (1, 2, 3, 8)]
    assert shares == [4, 2, 1, 1]


def test_time_left_is_the_mean_epoch_times_the_epochs_to_go():
    history = [{"epoch": 1, "seconds": 10.0}, {"epoch": 2, "seconds": 20.0}]
    assert time_left(history, 5) == 45.0
    assert time_left(history, 2) == 0.0
    assert time_left([], 5) == 0.0


# ------------------------------------------------------------------------------------ through train


@pytest.fixture(scope="module")
def weak_dir(tmp_path_factory, kb_dir) -> Path:
    return weak_label_sample(tmp_path_factory.mktemp("threads"), kb_dir, 12)


def _entity_words(weak_dir: Path) -> set[str]:
    """Capitalised words of the training entities (names, cities): what progress output must never show."""
    words = set()
    for line in (weak_dir / "train.txt").read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if parts and parts[-1] != "O" and parts[0].isalpha() and len(parts[0]) >= 4 and parts[0][0].isupper():
            words.add(parts[0])
    assert len(words) > 5
    return words


def _train(weak_dir: Path, out: Path, *extra: str):
    args = ["train", str(weak_dir), "--out", str(out), "--hidden", "8", "--max-epochs", "2"]
    result = CliRunner().invoke(main, [*args, "--max-sentences", "30", "--device", "cpu", *extra])
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.slow
def test_train_shows_its_progress_on_a_terminal_and_nothing_with_quiet(weak_dir, tmp_path, monkeypatch):
    import deid_ds.ner.train_cli

    # stderr a terminal, as for a user at a shell (the test runner's streams are not one)
    monkeypatch.setattr(deid_ds.ner.train_cli, "show_progress", lambda quiet: not quiet)
    shown = _train(weak_dir, tmp_path / "model")
    # the bar (stderr): the epoch out of the most, batches done out of the epoch's, the epoch's time left
    assert "epoch 1/2" in shown.stderr and "batch" in shown.stderr and "<" in shown.stderr
    # one line per epoch: loss, dev F1, and the training's time left (at most: it may stop early)
    lines = shown.stdout.splitlines()
    first = next(line for line in lines if line.startswith("epoch 1/2:"))
    assert "loss" in first and "dev F1" in first and "left at most" in first
    assert any(line.startswith("epoch 2/2:") and "left" not in line for line in lines)
    assert "1 thread(s)" in shown.stdout  # the rule's default
    # counts, scores and times only: not a word of the notes
    assert not {word for word in _entity_words(weak_dir) if word in shown.output}

    quiet = _train(weak_dir, tmp_path / "quiet", "--quiet")
    assert quiet.stderr == "" and quiet.stdout.count("\n") == 1 and quiet.stdout.startswith("train: 2 epoch(s)")


@pytest.mark.slow
def test_the_model_card_records_the_threads_used(weak_dir, tmp_path):
    _train(weak_dir, tmp_path / "default", "--quiet")
    assert json.loads((tmp_path / "default" / "model_card.json").read_text())["threads"] == 1
    asked = _train(weak_dir, tmp_path / "many", "--max-epochs", "1", "--threads", "512")
    assert json.loads((tmp_path / "many" / "model_card.json").read_text())["threads"] == available_cores()
    assert f"--threads 512: {available_cores()} core(s) available to this process" in asked.stdout


@pytest.mark.slow
def test_flair_lm_shows_its_batches_on_a_terminal_and_records_its_threads(weak_dir, tmp_path, monkeypatch):
    import deid_ds.ner.embeddings_cli

    args = ["embeddings", "flair-lm", str(weak_dir), "--hidden", "8", "--epochs", "2", "--seq-len", "20"]
    args += ["--batch", "4", "--direction", "forward", "--workers", "1", "--out"]
    monkeypatch.setattr(deid_ds.ner.embeddings_cli, "show_progress", lambda quiet: not quiet)
    shown = CliRunner().invoke(main, [*args, str(tmp_path / "lm")])
    assert shown.exit_code == 0, shown.output
    # a bar per epoch over the training batches (not the validation's nor the test's)
    assert "forward epoch 1/2" in shown.stderr and "forward epoch 2/2" in shown.stderr and "3/2" not in shown.stderr
    assert not {word for word in _entity_words(weak_dir) if word in shown.output}
    assert json.loads((tmp_path / "lm" / "flair_lm.json").read_text())["threads"] == 1

    quiet = CliRunner().invoke(main, [*args, str(tmp_path / "quiet"), "--quiet"])
    assert quiet.exit_code == 0 and quiet.stderr == ""


@pytest.mark.slow
def test_predict_workers_times_threads_never_exceed_the_cores(model_dir, notes_file, tmp_path):
    args = ["predict", str(model_dir), str(notes_file), "--device", "cpu", "--workers", "2", "--batch-size", "4"]
    asked = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "asked"), "--threads", "8", "--quiet"])
    assert asked.exit_code == 0, asked.output
    report = json.loads((tmp_path / "asked" / "report.json").read_text())
    assert report["workers"] == 2 and report["threads"] == max(1, available_cores() // 2)
    assert "--threads 8:" in asked.output  # said, not silently lowered
    default = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "default"), "--workers", "1", "--quiet"])
    assert default.exit_code == 0, default.output
    assert json.loads((tmp_path / "default" / "report.json").read_text())["threads"] == 1
