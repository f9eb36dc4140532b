"""benchmarks/campaign_simulation.py's pure parts: which notes a budget corrects, and the paired intervals.

Fast: counts written here; the experiment itself (trainings on dev-gold) is not run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_rules_silent_counts_the_model_spans_no_rule_span_overlaps():
    rules = [(0, 10, "PATIENT"), (20, 25, "DATE")]
    model = [(2, 8, "DOCTOR"), (24, 30, "DATE"), (40, 45, "VILLE"), (50, 55, "ZIP")]
    assert simulation.rules_silent_score(rules, model) == 2  # (40, 45) and (50, 55); touching is not overlapping
    assert simulation.rules_silent_score(rules, [(10, 20, "STR")]) == 1
    assert simulation.rules_silent_score([], model) == 4


def test_a_rule_miss_is_a_gold_span_not_wholly_covered():
    gold = [(0, 10, "PATIENT"), (20, 30, "DATE"), (40, 50, "VILLE"), (60, 70, "STR")]
    rules = [(0, 10, "DOCTOR"), (20, 26, "DATE"), (25, 30, "DATE"), (42, 50, "VILLE")]
    # label-blind; two rule spans together cover (20, 30); (40, 50) lacks two characters; (60, 70) is missed
    assert simulation.rule_misses(gold, rules) == 2
    assert simulation.rule_misses(gold, []) == 4


@settings(max_examples=200, deadline=None)
@given(
    gold=st.lists(st.tuples(st.integers(0, 40), st.integers(1, 10)), max_size=6),
    rules=st.lists(st.tuples(st.integers(0, 40), st.integers(1, 10)), max_size=6),
)
def test_rule_misses_agrees_with_counting_characters_one_by_one(gold, rules):
    gold_spans = [(start, start + length, "X") for start, length in gold]
    rule_spans = [(start, start + length, "X") for start, length in rules]
    covered = {c for start, end, _ in rule_spans for c in range(start, end)}
    expected = sum(not set(range(start, end)) <= covered for start, end, _ in gold_spans)
    assert simulation.rule_misses(gold_spans, rule_spans) == expected
