"""benchmarks/model_vs_rules.py's options: every generated corpus noisy with ``--text-noise``, the differences
with the rules that the acceptance criteria are read on.

Fast: the commands are built and parsed by ``deid-ds``'s own options, not run (the experiment trains a tagger).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import click

from deid_ds.cli import main

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "model_vs_rules.py"
spec = importlib.util.spec_from_file_location("model_vs_rules", SCRIPT)
model_vs_rules = importlib.util.module_from_spec(spec)
sys.modules.setdefault("model_vs_rules", model_vs_rules)
spec.loader.exec_module(model_vs_rules)


def parsed_synth(args: list[str]) -> dict:
    """The parameters ``deid-ds synth`` reads from ``args`` (parsed by click, not run)."""
    assert args[0] == "synth"
    return main.get_command(click.Context(main), "synth").make_context("synth", args[1:]).params


def test_a_noisy_corpus_is_generated_with_synth_text_noise(tmp_path):
    params = parsed_synth(model_vs_rules.synth_args(300, 4141, "exports-heldout", tmp_path / "t", text_noise=2))
    assert (params["notes"], params["seed"], params["phrasing"], params["text_noise"]) == (
        300,
        4141,
        "exports-heldout",
        2,
    )


def test_a_clean_corpus_is_generated_with_the_same_command_as_before(tmp_path):
    args = model_vs_rules.synth_args(300, 2027, "exports-heldout", tmp_path / "t")
    assert "--text-noise" not in args
    assert parsed_synth(args)["text_noise"] == 0


def test_the_training_corpora_get_the_test_corpus_noise_and_never_its_seed(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(model_vs_rules, "run", lambda step, args, timings: calls.append(args))
    parts = model_vs_rules.training_corpora("sample,exports-heldout:300", 4141, 4141, tmp_path, {}, text_noise=2)
    assert parts == [("sample", None), ("train-exports-heldout-300", tmp_path / "train-exports-heldout-300")]
    (params,) = [parsed_synth(args) for args in calls]
    assert params["text_noise"] == 2
    assert params["seed"] == 4142


def system(f1: float, precision: float, redacted: float) -> dict:
    return {"exact": {"micro": {"f1": f1, "precision": precision}}, "redacted": {"recall": redacted}}


def test_deltas_are_each_system_minus_the_rules():
    systems = {"rules": system(0.913, 0.95, 0.866), "model": system(0.95, 0.94, 0.9), "hybrid": system(0.92, 0.96, 0.9)}
    assert model_vs_rules.deltas(systems) == {
        "model": {"f1": 0.037, "precision": -0.01, "redacted": 0.034},
        "hybrid": {"f1": 0.007, "precision": 0.01, "redacted": 0.034},
    }
