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


def parsed_train(args: list[str], work: Path) -> dict:
    """The parameters ``deid-ds train`` reads from ``args`` (parsed by click, not run; the inputs it checks exist)."""
    assert args[0] == "train"
    for name in ("weak", "fasttext", "flair-lm"):
        (work / name).mkdir(exist_ok=True)
    return main.get_command(click.Context(main), "train").make_context("train", args[1:]).params


def test_the_fast_recipe_is_trained_without_the_character_lms(tmp_path):
    params = parsed_train(model_vs_rules.train_args(tmp_path, "fast-", 0, 128, 6, 1, "--fast"), tmp_path)
    assert params["fast"] is True
    assert not params["flair_lm"]
    assert (Path(params["out"]), params["hidden"], params["max_epochs"]) == (tmp_path / "model-fast-0", 128, 6)
    assert Path(params["fasttext"]) == tmp_path / "fasttext"


def test_the_full_recipe_is_trained_with_the_character_lms(tmp_path):
    params = parsed_train(model_vs_rules.train_args(tmp_path, "", 0, 128, 6, 1, "--augment 0.5"), tmp_path)
    assert params["fast"] is False
    assert Path(params["flair_lm"]) == tmp_path / "flair-lm"
    assert params["augment"] == 0.5


def test_a_variant_is_compared_with_the_same_system_of_its_baseline():
    import numpy as np

    # per document: [TP, predicted, gold, covered tokens, gold tokens]
    base = np.array([[8, 10, 10, 18, 20]] * 40 + [[9, 10, 10, 19, 20]] * 40)
    better = base + np.array([1, 0, 0, 1, 0])  # one more entity found and one more token covered in every note
    rules = np.array([[10, 10, 10, 20, 20]] * 80)
    versus = model_vs_rules.versus_baseline(
        {"rules": rules, "model": better, "hybrid": base}, {"rules": rules, "model": base, "hybrid": base}
    )
    assert set(versus) == {"model", "hybrid"}
    assert versus["model"]["f1"] == 0.1
    assert versus["model"]["precision"] == 0.1
    assert versus["model"]["redacted"] == 0.05
    assert versus["model"]["f1_ci"][0] > 0
    assert versus["hybrid"] == {
        "f1": 0.0,
        "precision": 0.0,
        "redacted": 0.0,
        "f1_ci": [0.0, 0.0],
        "precision_ci": [0.0, 0.0],
        "redacted_ci": [0.0, 0.0],
    }
