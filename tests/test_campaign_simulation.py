"""benchmarks/campaign_simulation.py's pure parts: which notes a budget corrects, and the paired intervals.

Fast: counts written here; the experiment itself (trainings on dev-gold) is not run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "campaign_simulation.py"
spec = importlib.util.spec_from_file_location("campaign_simulation", SCRIPT)
simulation = importlib.util.module_from_spec(spec)
sys.modules["campaign_simulation"] = simulation
spec.loader.exec_module(simulation)

DOCUMENTS = [f"d{i}" for i in range(10)]


def test_random_choice_depends_on_the_seed_only_not_on_the_input_order():
    chosen = simulation.choose(DOCUMENTS, 3, seed=1, priorities=None)
    assert len(set(chosen)) == 3
    assert simulation.choose(list(reversed(DOCUMENTS)), 3, seed=1, priorities=None) == chosen
    assert any(simulation.choose(DOCUMENTS, 3, seed=s, priorities=None) != chosen for s in range(2, 6))


def test_disagreement_choice_takes_the_highest_scores_ties_in_the_seeded_order():
    priorities = dict.fromkeys(DOCUMENTS, 0.0) | {"d7": 5.0, "d2": 3.0}
    chosen = simulation.choose(DOCUMENTS, 3, seed=0, priorities=priorities)
    assert chosen[:2] == ["d7", "d2"]
    ties = [d for d in simulation.random_order(DOCUMENTS, 0) if d not in ("d7", "d2")]
    assert chosen[2] == ties[0]


def counts(rows: list[list[int]]) -> np.ndarray:
    """Per-document ``[tp, predicted, gold, covered tokens, gold tokens]``."""
    return np.array(rows, dtype=np.int64)


def test_scores_are_exact_f1_and_redaction_of_the_summed_counts():
    system = counts([[3, 4, 4, 9, 10], [1, 2, 2, 4, 5]])
    assert simulation.scores(system) == {"f1": 2 * 4 / (6 + 6), "redacted": 13 / 15}


def test_a_system_better_on_every_document_has_an_interval_above_zero():
    reference = counts([[2, 4, 4, 6, 10]] * 8)
    better = counts([[4, 4, 4, 10, 10]] * 8)
    lift = simulation.lift_intervals([(better, reference)])
    assert lift["delta_f1_ci"] == [0.5, 0.5]
    assert lift["delta_redacted_ci"] == [0.4, 0.4]
    assert simulation.lift_intervals([(reference, reference)])["delta_f1_ci"] == [0.0, 0.0]


def test_the_mean_over_seeds_averages_the_seeds_differences():
    reference = counts([[2, 4, 4, 6, 10]] * 5)
    lift = simulation.lift_intervals([(counts([[4, 4, 4, 10, 10]] * 5), reference), (reference, reference)])
    assert lift["delta_f1_ci"] == [0.25, 0.25]


def test_a_mixed_lift_has_an_interval_around_its_estimate():
    reference = counts([[2, 4, 4, 5, 10]] * 6)
    mixed = counts([[4, 4, 4, 10, 10]] * 3 + [[0, 4, 4, 0, 10]] * 3)
    low, high = simulation.lift_intervals([(mixed, reference)])["delta_redacted_ci"]
    assert low < 0 < high
