"""benchmarks/recipe_seeds.py: two recipes compared on the mean over their seeds, paired over the test documents.

Fast: hand-made per-document counts ``[TP, predicted, gold, covered tokens, gold tokens]``, no model.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "recipe_seeds.py"
spec = importlib.util.spec_from_file_location("recipe_seeds", SCRIPT)
recipe_seeds = importlib.util.module_from_spec(spec)
sys.modules.setdefault("recipe_seeds", recipe_seeds)
spec.loader.exec_module(recipe_seeds)

# 80 documents of 10 gold entities and 20 gold tokens: 8 or 9 found, 18 or 19 tokens covered
BASE = np.array([[8, 10, 10, 18, 20]] * 40 + [[9, 10, 10, 19, 20]] * 40)
ONE_MORE = np.array([1, 0, 0, 1, 0])  # one more entity found and one more token covered in every document


def test_figures_are_the_micro_ratios_over_any_leading_axes():
    f = recipe_seeds.figures(BASE.sum(axis=0))
    assert f["f1"] == pytest.approx(2 * 680 / 1600)
    assert f["precision"] == pytest.approx(680 / 800)
    assert f["redacted"] == pytest.approx(1480 / 1600)
    stacked = recipe_seeds.figures(np.stack([BASE.sum(axis=0), np.zeros(5)]))
    assert stacked["f1"].tolist() == pytest.approx([0.85, 0.0])  # nothing predicted nor gold: 0, no division


def test_the_same_models_differ_by_nothing_and_are_sure_of_it():
    result = recipe_seeds.recipe_difference([BASE, BASE], [BASE, BASE], n=200)
    for key in recipe_seeds.FIGURES:
        assert result[key]["difference"] == 0
        assert result[key]["difference_ci"] == [0, 0]
        assert result[key]["difference_seeds_ci"] == [0, 0]


def test_a_recipe_better_on_every_document_of_every_seed_is_better_on_both_intervals():
    result = recipe_seeds.recipe_difference([BASE + ONE_MORE, BASE + ONE_MORE], [BASE, BASE], n=200)
    assert result["f1"]["difference"] == pytest.approx(0.1)
    assert result["redacted"]["difference"] == pytest.approx(0.05)
    assert result["f1"]["difference_ci"][0] > 0
    assert result["f1"]["difference_seeds_ci"][0] > 0


def test_the_means_are_over_seeds_and_the_seed_draws_widen_the_interval():
    # the variant's two seeds: one better, one worse than the baseline's; their mean is the baseline's
    result = recipe_seeds.recipe_difference([BASE + ONE_MORE, BASE - ONE_MORE], [BASE, BASE], n=400)
    f1 = result["f1"]
    assert f1["variant_seeds"] == pytest.approx([0.95, 0.75])
    assert f1["variant_mean"] == pytest.approx(0.85) == f1["baseline_mean"]
    assert f1["difference"] == pytest.approx(0.0)
    documents, seeds = f1["difference_ci"], f1["difference_seeds_ci"]
    assert documents[1] - documents[0] < 0.02  # on these two seeds the mean is sure
    assert seeds[0] < -0.05 and seeds[1] > 0.05  # which two seeds one draws is not
    assert recipe_seeds.not_below(f1, 0.01) == {"point": True, "documents_ci": True, "seeds_ci": False}


def test_the_resamples_are_the_same_for_every_model():
    # a model of the variant identical to one of the baseline's cancels it in every resample
    odd = BASE.copy()
    odd[::3] += ONE_MORE
    result = recipe_seeds.recipe_difference([odd, BASE], [BASE, odd], n=100, seed=7)
    assert result["precision"]["difference_ci"] == pytest.approx([0.0, 0.0], abs=1e-12)


def test_counts_of_other_documents_are_refused():
    with pytest.raises(ValueError, match="same documents"):
        recipe_seeds.recipe_difference([BASE], [BASE[:-1]])


def test_a_criterion_within_a_tolerance_reads_the_lower_ends():
    difference = {"difference": -0.004, "difference_ci": [-0.009, 0.002], "difference_seeds_ci": [-0.012, 0.006]}
    assert recipe_seeds.not_below(difference, 0.005) == {"point": True, "documents_ci": False, "seeds_ci": False}
    assert recipe_seeds.not_below(difference, 0.01) == {"point": True, "documents_ci": True, "seeds_ci": False}
    better = {"difference": 0.02, "difference_ci": [0.011, 0.03], "difference_seeds_ci": [0.006, 0.04]}
    assert recipe_seeds.not_below(better, 0.01) == {"point": True, "documents_ci": True, "seeds_ci": True}


def test_stopping_reads_the_kept_epoch_and_the_dev_f1_curve(tmp_path):
    model = tmp_path / "model-fast12-3"
    model.mkdir()
    (model / "model_card.json").write_text('{"selection": {"rule": "best dev micro F1", "epoch": 2}}')
    (model / "loss.tsv").write_text("EPOCH\tTRAIN_LOSS\tDEV_F1\n1\t1.0\t0.5\n2\t0.5\t0.91234\n3\t0.4\t0.9\n")
    assert recipe_seeds.stopping(tmp_path, "fast12", 3) == {"kept_epoch": 2, "dev_f1": [0.5, 0.9123, 0.9]}


def test_a_recipe_without_predictions_is_a_one_line_error(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--workdir", str(tmp_path), "--variant", "fast12", "--baseline", "full12"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "no predictions in" in result.stderr and "--name fast12" in result.stderr


@pytest.mark.parametrize("word", ["deux", "MILLE", "dix-sept", "quatre-vingt-quinze", "z&eacute;ro", "vingt,"])
def test_numbers_written_in_words_are_recognised(word):
    assert recipe_seeds.is_written_number(word)


@pytest.mark.parametrize("word", ["un", "une", "et", "Rennes", "12", "deuxième", "mille-pattes", ""])
def test_other_words_are_not_numbers(word):
    assert not recipe_seeds.is_written_number(word)


def test_redaction_is_split_between_written_numbers_and_the_other_gold_tokens():
    text = "le deux mille douze Dr Martin et un"
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    tokens = [("d1", s, e, text[s:e]) for s, e in words]
    gold = {"d1": [(3, 19), (20, 29)]}  # "deux mille douze" (DATE), "Dr Martin" (DOCTOR)
    predicted = {"d1": [(3, 13), (23, 29), (30, 35)]}  # "deux mille", "Martin", and "et un" (not gold)
    split = recipe_seeds.written_number_redaction(tokens, gold, predicted)
    assert split["written_numbers"] == {"gold": 3, "covered": 2, "recall": pytest.approx(2 / 3)}
    assert split["other"] == {"gold": 2, "covered": 1, "recall": 0.5}
    assert recipe_seeds.written_number_redaction(tokens, {}, predicted)["other"] == {
        "gold": 0,
        "covered": 0,
        "recall": 0.0,
    }
