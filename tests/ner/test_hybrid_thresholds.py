"""The hybrid with scores and thresholds (:mod:`deid_ds.ner.hybrid`), and the choice of a threshold
(:mod:`deid_ds.ner.calibrate`): pure functions on hand-made spans, then properties on random ones."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.errors import InputError
from deid_ds.ner.calibrate import choose, proxy_curve
from deid_ds.ner.hybrid import AGREED_SOURCE, merge_scored, merge_spans
from deid_ds.ner.thresholds import Thresholds, resolve_thresholds

# "Vu par Dr Yann KERBRAT à Brest le 12/03/2020, Mme Le Goff ..." with made-up offsets
MODEL = [
    (0, 10, "DATE", "model", 0.99),  # the same span as a rule: agreement
    (20, 30, "DOCTOR", "model", 0.95),  # contradicts a context-cue span, sure of itself
    (40, 50, "DOCTOR", "model", 0.60),  # contradicts a context-cue span, unsure
    (60, 65, "VILLE", "model", 0.80),  # alone, fairly sure
    (70, 75, "VILLE", "model", 0.30),  # alone, unsure
]
RULES = [
    (0, 10, "DATE", "pattern:date_numeric"),
    (18, 30, "PATIENT", "context:civility"),
    (38, 50, "PATIENT", "context:civility"),
]


def test_without_thresholds_every_model_span_counts_as_before():
    assert merge_spans(MODEL, RULES) == [
        (0, 10, "DATE", AGREED_SOURCE),
        (20, 30, "DOCTOR", "model"),
        (40, 50, "DOCTOR", "model"),
        (60, 65, "VILLE", "model"),
        (70, 75, "VILLE", "model"),
    ]


def test_the_model_overrides_a_weak_rule_only_when_sure_and_adds_spans_above_the_threshold():
    assert merge_scored(MODEL, RULES, add=0.5, override=0.9) == [
        (0, 10, "DATE", AGREED_SOURCE, 0.99),  # agreed: the model's score
        (20, 30, "DOCTOR", "model", 0.95),  # 0.95 ≥ override: the rule span is dropped
        (38, 50, "PATIENT", "context:civility", None),  # 0.60 < override: the rule span stays, no score
        (60, 65, "VILLE", "model", 0.80),  # model only, 0.80 ≥ add
    ]  # (70, 75) scores 0.30 < add: left out


def test_strong_rules_win_and_a_rule_holding_the_model_span_keeps_it_all_whatever_the_scores():
    model = [(22, 30, "PATIENT", "model", 1.0), (50, 58, "PATIENT", "model", 0.2), (60, 64, "PATIENT", "model", 0.4)]
    rules = [(20, 30, "PATIENT", "metadata:lastname"), (48, 66, "PATIENT", "context:identity")]
    assert merge_scored(model, rules, add=0.9, override=0.9) == [
        (20, 30, "PATIENT", "metadata:lastname", None),
        (48, 66, "PATIENT", AGREED_SOURCE, 0.4),  # widened: the best score of the model spans it holds
    ]


def test_thresholds_of_one_keep_the_rules_and_add_only_certain_model_spans():
    assert merge_spans(MODEL, RULES, add=1.0, override=1.0) == [
        (0, 10, "DATE", AGREED_SOURCE),
        (18, 30, "PATIENT", "context:civility"),
        (38, 50, "PATIENT", "context:civility"),
    ]


def test_an_unsure_model_span_beside_a_rule_dropped_by_a_sure_one_counts_as_model_only():
    model = [(10, 14, "DOCTOR", "model", 0.95), (15, 20, "DOCTOR", "model", 0.6)]
    rules = [(10, 20, "PATIENT", "propagation:PATIENT")]
    assert merge_spans(model, rules, add=0.5, override=0.9) == [
        (10, 14, "DOCTOR", "model"),
        (15, 20, "DOCTOR", "model"),
    ]
    assert merge_spans(model, rules, add=0.7, override=0.9) == [(10, 14, "DOCTOR", "model")]


# ------------------------------------------------------------------------------------------ properties

SOURCES = ["metadata:name", "pattern:date_numeric", "context:title", "gazetteer:commune", "address:street"]


@st.composite
def disjoint(draw, sources, scored):
    """Disjoint spans on [0, 120) with three labels, from ``sources``, scored in (0, 1] when ``scored``."""
    cuts = sorted(draw(st.sets(st.integers(0, 120), max_size=12)))
    spans = []
    for start, end in zip(cuts[::2], cuts[1::2]):
        span = (start, end, draw(st.sampled_from(["DATE", "DOCTOR", "PATIENT"])), draw(st.sampled_from(sources)))
        spans.append((*span, draw(st.floats(0.01, 1.0))) if scored else span)
    return spans


def _characters(spans) -> set[int]:
    return {i for s, e, *_ in spans for i in range(s, e)}


def _no_overlap(spans) -> bool:
    ordered = sorted(spans)
    return all(a[1] <= b[0] for a, b in itertools.pairwise(ordered))


thresholds = st.floats(0.0, 1.0)


@settings(max_examples=300, deadline=None)
@given(disjoint(["model"], True), disjoint(SOURCES, False), thresholds, thresholds, st.randoms())
def test_merge_never_overlaps_and_ignores_the_input_order(model, rules, add, override, rng):
    merged = merge_scored(model, rules, add=add, override=override)
    assert _no_overlap(merged)
    shuffled_model, shuffled_rules = model[:], rules[:]
    rng.shuffle(shuffled_model)
    rng.shuffle(shuffled_rules)
    assert merge_scored(shuffled_model, shuffled_rules, add=add, override=override) == merged
    for *_, source, score in merged:  # scores where the model spoke, never invented
        assert (score is None) == (source not in ("model", AGREED_SOURCE))
        assert score is None or 0 < score <= 1


@settings(max_examples=300, deadline=None)
@given(disjoint(["model"], True), disjoint(SOURCES, False), thresholds, thresholds, thresholds)
def test_a_lower_add_threshold_never_removes_a_redacted_character(model, rules, a, b, override):
    low, high = min(a, b), max(a, b)
    strict = _characters(merge_scored(model, rules, add=high, override=override))
    lenient = _characters(merge_scored(model, rules, add=low, override=override))
    assert strict <= lenient
    assert strict <= _characters(merge_scored(model, rules, add=0.0, override=override))


@settings(max_examples=200, deadline=None)
@given(disjoint(["model"], True), disjoint(SOURCES, False), thresholds)
def test_a_rule_span_is_lost_only_to_a_strong_rule_or_a_sure_model_span(model, rules, override):
    merged = merge_scored(model, rules, add=1.0, override=override)
    kept = _characters(merged)
    for start, end, _, source in rules:
        if not set(range(start, end)) <= kept:
            assert (
                source.startswith(("metadata:", "pattern:date", "address:"))
                or any(s < end and start < e and score >= override for s, e, _, _, score in model)
                or any(s < end and start < e for s, e, _, src in rules if src != source)
            )


# ------------------------------------------------------------------------------------- the choice


def test_choose_the_most_redacting_threshold_within_the_rules_precision():
    curve = [
        {"add": 0.0, "precision": 0.80, "redacted_recall": 0.999},
        {"add": 0.5, "precision": 0.965, "redacted_recall": 0.995},
        {"add": 0.7, "precision": 0.97, "redacted_recall": 0.995},
        {"add": 1.0, "precision": 0.975, "redacted_recall": 0.990},
    ]
    assert choose(curve, 0.97, 0.01) == {**curve[2], "constraint_met": True}  # ties: the higher threshold
    assert choose(curve, 0.99, 0.01) == {**curve[3], "constraint_met": False}  # none keeps it: the most precise


def test_the_training_proxy_counts_the_model_spans_that_are_weak_label_spans():
    pairs = [
        ([(0, 1, "PATIENT", 0.9), (3, 3, "DATE", 0.4)], [(0, 1, "PATIENT"), (3, 4, "DATE")]),  # backed, not
        ([(2, 2, "VILLE", 0.6)], [(2, 2, "ZIP")]),  # not backed: another label
    ]
    curve = {point["add"]: point for point in proxy_curve(pairs, grid=(0.0, 0.5, 0.9, 0.95))}
    assert curve[0.0] == {"add": 0.0, "spans": 3, "backed": round(1 / 3, 6)}
    assert curve[0.5]["backed"] == 0.5 and curve[0.9]["backed"] == 1.0
    assert curve[0.95] == {"add": 0.95, "spans": 0, "backed": 1.0}


def test_thresholds_come_from_the_user_then_the_calibration_then_the_card(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    assert resolve_thresholds(model) == Thresholds()  # an old model: every model span counts
    (model / "model_card.json").write_text(json.dumps({"hybrid": {"add": 0.4, "override": 0.8, "source": "train"}}))
    assert (resolve_thresholds(model).add, resolve_thresholds(model).override) == (0.4, 0.8)
    (model / "calibration.json").write_text(json.dumps({"chosen": {"add": 0.3, "override": 0.9}}))
    assert resolve_thresholds(model).add == 0.3 and "calibration" in resolve_thresholds(model).source
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"chosen": {"add": 0.6, "override": 0.95}}))
    assert resolve_thresholds(model, calibration=other).add == 0.6
    chosen = resolve_thresholds(model, threshold=0.1, calibration=other)
    assert (chosen.add, chosen.override) == (0.1, 0.95) and chosen.source.startswith("--threshold")
    other.write_text("{}")
    with pytest.raises(InputError, match="not a deid-ds calibrate file"):
        resolve_thresholds(model, calibration=other)
    with pytest.raises(InputError, match="not found"):
        resolve_thresholds(model, calibration=tmp_path / "missing.json")
