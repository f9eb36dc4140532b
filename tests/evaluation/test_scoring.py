"""Entity-level scoring (``deid_ds.evaluation.scoring``): hand-computed examples, conventions, properties, real data.

The running example is one note ``d1`` with three gold entities and six tokens:

    offsets  10-15 16-20 | 30-32 33-40 | 50-56 | 60-65
    tokens   Jean  DUPONT| 03    /2021 | Brest | other
    gold     PATIENT     | DATE        | VILLE |
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_ds.errors import InputError
from deid_ds.evaluation.scoring import (
    _greedy_matching,
    _overlap_pairs,
    bootstrap_micro_f1,
    compare_systems,
    score_spans,
)
from deid_ds.model import LABELS
from tests.conftest import REPO

GOLD_FILE = REPO / "data" / "gold.parquet"
NOTES_FILE = REPO / "data" / "notes.parquet"


def spans(*rows, source: bool = False) -> pd.DataFrame:
    """Spans from ``(id_document, label, start, end[, source])`` tuples."""
    columns = ["id_document", "label", "html_start", "html_end"] + (["source"] if source else [])
    return pd.DataFrame([list(r) for r in rows], columns=columns)


GOLD = spans(("d1", "PATIENT", 10, 20), ("d1", "DATE", 30, 40), ("d1", "VILLE", 50, 56))
TOKENS = pd.DataFrame(
    {"id_document": ["d1"] * 6, "html_start": [10, 16, 30, 33, 50, 60], "html_end": [15, 20, 32, 40, 56, 65]}
)


def prf(counts) -> tuple[float, float, float]:
    return counts.precision, counts.recall, counts.f1


# ------------------------------------------------------------------------------------- exact match


def test_perfect_prediction_scores_one_everywhere():
    scores = score_spans(GOLD, GOLD, tokens=TOKENS)
    assert prf(scores.micro) == (1.0, 1.0, 1.0) and scores.macro_f1 == 1.0
    assert prf(scores.lenient_micro) == (1.0, 1.0, 1.0)
    assert scores.redacted_unit == "token" and (scores.redacted_gold, scores.redacted_covered) == (5, 5)
    assert scores.fully_redacted_share == 1.0 and scores.documents == 1


def test_every_label_is_listed_even_when_absent_and_absent_labels_stay_out_of_macro():
    scores = score_spans(GOLD, GOLD)
    assert list(scores.exact) == list(LABELS) and list(scores.lenient) == list(LABELS)
    assert scores.exact["EMAIL"].to_dict() == {
        "gold": 0,
        "predicted": 0,
        "tp": 0,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
    }
    extra = score_spans(GOLD, pd.concat([GOLD, spans(("d1", "MISC", 0, 5))]))
    assert (
        list(extra.exact)[-1] == "MISC" and extra.exact["MISC"].f1 == 0.0
    )  # an unknown label is a false positive, not dropped
    assert extra.macro_f1 == pytest.approx(3 / 4)


def test_boundary_error_is_an_exact_false_positive_and_negative_but_a_lenient_match():
    predicted = spans(("d1", "PATIENT", 10, 15), ("d1", "DATE", 30, 40), ("d1", "VILLE", 50, 56))
    scores = score_spans(GOLD, predicted, tokens=TOKENS)
    assert scores.exact["PATIENT"].to_dict() == {
        "gold": 1,
        "predicted": 1,
        "tp": 0,
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
    }
    assert prf(scores.micro) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    assert scores.lenient["PATIENT"].tp == 1 and prf(scores.lenient_micro) == (1.0, 1.0, 1.0)
    # "DUPONT" (16-20) is left visible: 4 of the 5 gold tokens are redacted, the note is not fully redacted.
    assert (scores.redacted_covered, scores.redacted_gold) == (4, 5) and scores.redacted_recall == pytest.approx(0.8)
    assert scores.documents_fully_redacted == 0 and scores.documents_with_gold == 1


def test_label_error_counts_in_both_labels_but_still_redacts():
    predicted = spans(("d1", "DOCTOR", 10, 20), ("d1", "DATE", 30, 40), ("d1", "VILLE", 50, 56))
    scores = score_spans(GOLD, predicted, tokens=TOKENS)
    assert (scores.exact["PATIENT"].recall, scores.exact["DOCTOR"].precision) == (0.0, 0.0)
    assert (
        scores.lenient["PATIENT"].tp == 0 and scores.lenient["DOCTOR"].tp == 0
    )  # lenient is about boundaries, not labels
    assert scores.redacted_recall == 1.0 and scores.fully_redacted_share == 1.0  # label-blind: the name is masked


def test_missing_entity_lowers_recall_only():
    scores = score_spans(GOLD, GOLD.iloc[:2])
    assert prf(scores.micro) == pytest.approx((1.0, 2 / 3, 0.8))
    assert prf(scores.exact["VILLE"]) == (0.0, 0.0, 0.0)  # gold present, nothing predicted: P = 0 by convention


def test_extra_span_lowers_precision_only():
    scores = score_spans(GOLD, pd.concat([GOLD, spans(("d1", "ZIP", 60, 65))]), tokens=TOKENS)
    assert prf(scores.micro) == pytest.approx((3 / 4, 1.0, 6 / 7))
    assert prf(scores.exact["ZIP"]) == (0.0, 0.0, 0.0)  # predicted with an empty gold: R = 0 by convention
    assert scores.macro_f1 == pytest.approx(3 / 4)  # PATIENT, DATE, VILLE at 1, ZIP at 0
    assert scores.redacted_recall == 1.0  # the extra token is not a gold token


def test_duplicate_rows_count_once_in_entity_scores():
    scores = score_spans(GOLD, pd.concat([GOLD, GOLD.iloc[:1]]))
    assert (scores.micro.tp, scores.micro.predicted) == (3, 3)


# ------------------------------------------------------------------------------- lenient matching


def test_lenient_matching_is_one_to_one():
    gold = spans(("d", "STR", 0, 10))
    split = score_spans(gold, spans(("d", "STR", 0, 4), ("d", "STR", 5, 10)))
    assert (split.lenient["STR"].tp, split.lenient["STR"].precision, split.lenient["STR"].recall) == (1, 0.5, 1.0)
    merged = score_spans(spans(("d", "STR", 0, 4), ("d", "STR", 5, 10)), gold)
    assert (merged.lenient["STR"].precision, merged.lenient["STR"].recall) == (1.0, 0.5)


def test_lenient_matching_prefers_the_largest_overlap():
    # Gold A (0-10) and B (12-20); prediction X (0-14) overlaps A by 10 and B by 2, Y (13-20) overlaps B by 7.
    gold = spans(("d", "DATE", 0, 10), ("d", "DATE", 12, 20))
    predicted = spans(("d", "DATE", 0, 14), ("d", "DATE", 13, 20))
    assert score_spans(gold, predicted).lenient["DATE"].tp == 2


def test_adjacent_spans_do_not_overlap():
    scores = score_spans(spans(("d", "ZIP", 0, 5)), spans(("d", "ZIP", 5, 9)))
    assert scores.lenient["ZIP"].tp == 0 and scores.redacted_covered == 0


def _sequential_greedy(gold_spans, pred_spans):
    """Reference lenient matcher: every pair, sorted by overlap, taken when both ends are free."""
    pairs = []
    for gi, (gd, gl, gs, ge) in enumerate(gold_spans):
        for pi, (pd_, pl, ps, pe) in enumerate(pred_spans):
            overlap = min(ge, pe) - max(gs, ps)
            if gd == pd_ and gl == pl and overlap > 0:
                pairs.append((-overlap, gi, pi))
    used_g, used_p, matched = set(), set(), 0
    for _, gi, pi in sorted(pairs):
        if gi not in used_g and pi not in used_p:
            used_g.add(gi), used_p.add(pi)
            matched += 1
    return matched


span_strategy = st.tuples(
    st.sampled_from(["a", "b"]), st.sampled_from(["DATE", "STR"]), st.integers(0, 40), st.integers(1, 12)
).map(lambda t: (t[0], t[1], t[2], t[2] + t[3]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(span_strategy, max_size=12, unique=True), st.lists(span_strategy, max_size=12, unique=True))
def test_vectorised_lenient_matching_equals_the_sequential_greedy(gold_rows, pred_rows):
    scores = score_spans(spans(*gold_rows), spans(*pred_rows), documents=["a", "b"])
    assert scores.lenient_micro.tp == _sequential_greedy(gold_rows, pred_rows)


@settings(max_examples=150, deadline=None)
@given(st.lists(span_strategy, max_size=10), st.lists(span_strategy, max_size=10))
def test_overlap_pairs_equal_brute_force(a_rows, b_rows):
    def arrays(rows):
        group = np.array([(d == "b") * 2 + (label == "STR") for d, label, _, _ in rows], dtype=np.int64)
        return group, np.array([r[2] for r in rows], dtype=np.int64), np.array([r[3] for r in rows], dtype=np.int64)

    rows, cols, overlap = _overlap_pairs(*arrays(a_rows), *arrays(b_rows))
    found = sorted(zip(rows.tolist(), cols.tolist(), overlap.tolist()))
    expected = sorted(
        (i, j, min(a[3], b[3]) - max(a[2], b[2]))
        for i, a in enumerate(a_rows)
        for j, b in enumerate(b_rows)
        if a[:2] == b[:2] and min(a[3], b[3]) > max(a[2], b[2])
    )
    assert found == expected


def test_greedy_matching_breaks_ties_by_position():
    gold, pred = _greedy_matching(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.array([5, 5, 5, 5]))
    assert sorted(zip(gold.tolist(), pred.tolist())) == [(0, 0), (1, 1)]


# ------------------------------------------------------------------------------ documents and ids


def test_documents_filter_ignores_other_documents_and_counts_empty_ones():
    gold = pd.concat([GOLD, spans(("d2", "DATE", 0, 10))])
    predicted = pd.concat([GOLD, spans(("d3", "DATE", 0, 10))])
    everything = score_spans(gold, predicted)
    assert everything.documents == 3 and prf(everything.micro) == pytest.approx((3 / 4, 3 / 4, 3 / 4))
    chosen = score_spans(gold, predicted, documents=["d1", "d4"])
    assert chosen.documents == 2 and prf(chosen.micro) == (1.0, 1.0, 1.0) and chosen.documents_with_gold == 1


def test_integer_and_string_ids_compare_as_strings():
    gold = spans((1, "DATE", 0, 10), (2, "ZIP", 3, 8))
    predicted = spans(("1", "DATE", 0, 10), (2.0, "ZIP", 3, 8))  # a float id column reads as "2", like the notes reader
    scores = score_spans(gold, predicted, documents=[1, "2"], doc_types={1: "letter", "2": "letter"})
    assert (
        prf(scores.micro) == (1.0, 1.0, 1.0) and scores.documents == 2 and scores.per_doc_type["letter"].documents == 2
    )


def test_offsets_may_come_as_strings_or_floats_but_must_be_valid():
    scores = score_spans(spans(("d", "DATE", 0, 10)), spans(("d", "DATE", "0", 10.0)))
    assert scores.micro.tp == 1
    with pytest.raises(InputError, match="html_end"):
        score_spans(spans(("d", "DATE", 0, None)), GOLD)
    with pytest.raises(InputError, match="between 0"):
        score_spans(spans(("d", "DATE", -1, 3)), GOLD)
    with pytest.raises(InputError, match="label"):
        score_spans(GOLD.drop(columns="label"), GOLD)


# ------------------------------------------------------------------------------ empty sets


def test_empty_predictions():
    for empty in (GOLD.iloc[:0], pd.DataFrame(), None):
        scores = score_spans(GOLD, empty, tokens=TOKENS)
        assert prf(scores.micro) == (0.0, 0.0, 0.0) and scores.macro_f1 == 0.0
        assert scores.redacted_recall == 0.0 and scores.fully_redacted_share == 0.0 and scores.per_source == {}


def test_empty_gold():
    scores = score_spans(GOLD.iloc[:0], GOLD)
    assert prf(scores.micro) == (0.0, 0.0, 0.0)  # everything predicted is a false positive
    assert scores.redacted_gold == 0 and scores.redacted_recall == 1.0  # nothing to redact
    assert scores.documents_with_gold == 0 and scores.fully_redacted_share == 1.0
    nothing = score_spans(GOLD.iloc[:0], GOLD.iloc[:0], documents=["d1"])
    assert prf(nothing.micro) == (1.0, 1.0, 1.0) and nothing.macro_f1 == 1.0 and nothing.documents == 1


# --------------------------------------------------------------------------- redaction (label-blind)


def test_character_recall_without_tokens():
    predicted = spans(("d1", "PATIENT", 10, 15), ("d1", "DOCTOR", 30, 40), ("d1", "VILLE", 48, 54))
    scores = score_spans(GOLD, predicted)
    # gold characters: 10 + 10 + 6 = 26; covered: 5 (10-15) + 10 (any label) + 4 (50-54).
    assert scores.redacted_unit == "char" and (scores.redacted_covered, scores.redacted_gold) == (19, 26)
    assert scores.to_dict()["redacted"] == {"unit": "char", "gold": 26, "covered": 19, "recall": 19 / 26}
    assert "character recall" in scores.table()


def test_token_recall_counts_a_partially_covered_token_and_overlapping_gold_once():
    gold = pd.concat([GOLD, spans(("d1", "DOCTOR", 10, 15))])  # overlapping gold spans: the token counts once
    predicted = spans(("d1", "DATE", 34, 36), ("d1", "STR", 50, 56))
    scores = score_spans(gold, predicted, tokens=TOKENS)
    assert (scores.redacted_covered, scores.redacted_gold) == (2, 5)
    assert "token recall" in scores.table()


def test_tokens_of_other_documents_are_ignored():
    tokens = pd.concat([TOKENS, TOKENS.assign(id_document="elsewhere")])
    scores = score_spans(GOLD, GOLD, tokens=tokens, documents=["d1"])
    assert scores.redacted_gold == 5


def test_fully_redacted_share():
    gold = pd.concat([GOLD, spans(("d2", "DATE", 0, 10), ("d2", "ZIP", 20, 25))])
    predicted = pd.concat([GOLD.assign(label="DATE"), spans(("d2", "DATE", 0, 10))])
    scores = score_spans(gold, predicted, documents=["d1", "d2", "d3"])
    assert (scores.documents_fully_redacted, scores.documents_with_gold) == (
        1,
        2,
    ) and scores.fully_redacted_share == 0.5
    tokens = pd.concat([TOKENS, pd.DataFrame({"id_document": ["d2"] * 2, "html_start": [0, 20], "html_end": [10, 25]})])
    assert score_spans(gold, predicted, tokens=tokens).fully_redacted_share == 0.5
    # A note whose gold spans overlap no token at all cannot be shown redacted: it is counted as not.
    assert score_spans(gold, gold, tokens=TOKENS).to_dict()["fully_redacted"] == {
        "documents_with_gold": 2,
        "documents": 1,
        "share": 0.5,
    }


# ------------------------------------------------------------------------ per source, per doc type


def test_per_source_precision():
    predicted = spans(
        ("d1", "PATIENT", 10, 20, "metadata.lastname"),
        ("d1", "DATE", 30, 40, "pattern.date"),
        ("d1", "DATE", 60, 65, "pattern.date"),
        ("d1", "VILLE", 50, 54, "ban.commune"),
        ("d1", "VILLE", 70, 75, None),
        source=True,
    )
    scores = score_spans(GOLD, predicted)
    assert list(scores.per_source) == [
        "pattern.date",
        "(none)",
        "ban.commune",
        "metadata.lastname",
    ]  # most spans first, then by name
    date = scores.per_source["pattern.date"]
    assert (date.spans, date.correct, date.precision) == (2, 1, 0.5)
    ville = scores.per_source["ban.commune"]
    assert (ville.correct, ville.precision, ville.lenient_precision) == (
        0,
        0.0,
        1.0,
    )  # a boundary error, not a false alarm
    assert scores.to_dict()["per_source"]["metadata.lastname"] == {
        "spans": 1,
        "correct": 1,
        "precision": 1.0,
        "overlapping": 1,
        "lenient_precision": 1.0,
    }
    table = scores.table()
    assert "pattern.date" in table and table.index("source") > table.index("fully redacted documents")


def test_no_source_column_means_no_source_table():
    scores = score_spans(GOLD, GOLD)
    assert scores.per_source == {} and "source" not in scores.table()


def test_per_doc_type():
    gold = pd.concat([GOLD, spans(("d2", "DATE", 0, 10)), spans(("d3", "ZIP", 0, 5))])
    predicted = pd.concat([GOLD, spans(("d2", "DATE", 0, 9))])
    scores = score_spans(gold, predicted, doc_types={"d1": "CR", "d2": "CR", "d3": None})
    assert list(scores.per_doc_type) == ["(unknown)", "CR"]
    cr = scores.per_doc_type["CR"]
    assert cr.documents == 2 and prf(cr.counts) == pytest.approx((3 / 4, 3 / 4, 3 / 4))
    assert cr.redacted_recall == pytest.approx(35 / 36)
    assert prf(scores.per_doc_type["(unknown)"].counts) == (0.0, 0.0, 0.0)
    assert "document type" in scores.table() and "document type" not in score_spans(gold, predicted).table()


# ---------------------------------------------------------------------------------- output


def test_to_dict_is_json_and_table_has_its_sections():
    predicted = pd.concat([GOLD, spans(("d1", "ZIP", 60, 65))]).assign(source="rule")
    scores = score_spans(GOLD, predicted, tokens=TOKENS, doc_types={"d1": "letter"})
    data = json.loads(json.dumps(scores.to_dict(), allow_nan=False))
    assert data["exact"]["micro"]["precision"] == 0.75 and data["lenient"]["macro_f1"] == 0.75
    assert set(data) == {"documents", "exact", "lenient", "redacted", "fully_redacted", "per_source", "per_doc_type"}
    sections = scores.table().split("\n\n")
    assert len(sections) == 4 and sections[0].splitlines()[-1].startswith("micro")
    assert all(label in sections[0] for label in LABELS)


# ------------------------------------------------------------------------ bootstrap and comparison


def _many_documents(n_docs: int = 600, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Gold of ``n_docs`` notes, ten spans each, and a prediction missing or shifting some of them."""
    rng = np.random.default_rng(seed)
    docs = np.repeat([f"n{i}" for i in range(n_docs)], 10)
    starts = np.tile(np.arange(10) * 20, n_docs)
    gold = pd.DataFrame(
        {
            "id_document": docs,
            "label": rng.choice(list(LABELS), len(docs)),
            "html_start": starts,
            "html_end": starts + 8,
        }
    )
    predicted = gold[rng.random(len(gold)) > 0.1].copy()
    shifted = rng.random(len(predicted)) < 0.05
    predicted.loc[shifted, "html_end"] -= 1
    return gold, predicted


def test_bootstrap_interval_is_deterministic_and_contains_the_estimate():
    gold, predicted = _many_documents()
    point = score_spans(gold, predicted).micro.f1
    low, high = bootstrap_micro_f1(gold, predicted, n=1000, seed=0)
    assert low < point < high and high - low < 0.05
    assert bootstrap_micro_f1(gold, predicted, n=1000, seed=0) == (low, high)
    assert bootstrap_micro_f1(gold, predicted, n=1000, seed=1) != (low, high)
    perfect = bootstrap_micro_f1(gold, gold, n=200)
    assert perfect == (1.0, 1.0)
    assert score_spans(gold, predicted).bootstrap_micro_f1(n=1000, seed=0) == (low, high)
    wider = bootstrap_micro_f1(gold, predicted, n=1000, seed=0, confidence=0.99)
    assert wider[0] <= low and high <= wider[1]
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_micro_f1(gold, predicted, confidence=95)


def test_compare_systems_side_by_side():
    gold, rules = _many_documents(200)
    model = gold.iloc[: len(gold) - 30]  # misses the last three notes' entities, else perfect
    comparison = compare_systems({"rules": rules, "model": model}, gold, n_bootstrap=300, seed=0)
    assert list(comparison.scores) == ["rules", "model"]
    assert (
        comparison.scores["model"].micro.f1
        == score_spans(gold, model, documents=sorted(set(gold["id_document"]))).micro.f1
    )
    low, high = comparison.delta_ci["model"]
    assert 0 < low < high  # the model is better on every resample
    assert comparison.delta_ci["rules"] == (0.0, 0.0)
    table = comparison.table()
    assert "ΔF1 vs rules" in table and "F1 per label" in table and "model" in table
    data = json.loads(json.dumps(comparison.to_dict(), allow_nan=False))
    assert data["systems"]["model"]["micro_f1_ci"][0] <= data["systems"]["model"]["exact"]["micro"]["f1"]


def test_compare_systems_judges_every_system_on_the_same_documents():
    gold = spans(("a", "DATE", 0, 5))
    comparison = compare_systems(
        {"one": spans(("a", "DATE", 0, 5)), "two": spans(("b", "DATE", 0, 5))}, gold, n_bootstrap=10
    )
    assert {s.documents for s in comparison.scores.values()} == {2}


# ----------------------------------------------------------------------------------- properties


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_subset_of_the_gold_has_precision_one_and_recall_its_share(data):
    gold = pd.DataFrame(
        {
            "id_document": [f"d{i % 7}" for i in range(60)],
            "label": [LABELS[i % len(LABELS)] for i in range(60)],
            "html_start": [i * 10 for i in range(60)],
            "html_end": [i * 10 + 4 for i in range(60)],
        }
    )
    keep = data.draw(st.lists(st.booleans(), min_size=60, max_size=60))
    subset = gold[keep]
    scores = score_spans(gold, subset, documents=[f"d{i}" for i in range(7)])
    if len(subset):
        assert scores.micro.precision == 1.0
    assert scores.micro.recall == pytest.approx(sum(keep) / 60)
    assert scores.redacted_recall == pytest.approx(sum(keep) / 60)  # every span has 4 characters


# ------------------------------------------------------------------------------------ real data


@pytest.fixture(scope="module")
def sample_gold() -> pd.DataFrame:
    return pd.read_parquet(GOLD_FILE)


def test_sample_gold_against_itself(sample_gold):
    doc_types = dict(pd.read_parquet(NOTES_FILE, columns=["id_document", "doc_type"]).itertuples(index=False))
    scores = score_spans(sample_gold, sample_gold.assign(source="gold"), doc_types=doc_types)
    data = scores.to_dict()
    assert data["documents"] == 300 and data["exact"]["micro"]["tp"] == len(sample_gold)
    for kind in ("exact", "lenient"):
        assert all(c["f1"] == 1.0 for c in data[kind]["per_label"].values())
        assert data[kind]["micro"]["f1"] == 1.0 and data[kind]["macro_f1"] == 1.0
    assert data["redacted"]["recall"] == 1.0 and data["fully_redacted"]["share"] == 1.0
    assert len(data["per_doc_type"]) == 12 and all(t["f1"] == 1.0 for t in data["per_doc_type"].values())


@pytest.mark.parametrize("label", ["PATIENT", "STR"])
def test_sample_gold_with_one_label_removed(sample_gold, label):
    scores = score_spans(sample_gold, sample_gold[sample_gold["label"] != label])
    n_label = int((sample_gold["label"] == label).sum())
    assert scores.micro.precision == 1.0
    assert scores.micro.recall == pytest.approx(1 - n_label / len(sample_gold))
    assert scores.exact[label].recall == 0.0 and scores.exact[label].precision == 0.0
    assert all(scores.exact[other].f1 == 1.0 for other in LABELS if other != label)


def test_scoring_a_large_set_counts_tokens_and_spans_right():
    """Tens of thousands of spans and hundreds of thousands of tokens (the vectorised paths at scale;
    its speed — about half a second — is a benchmark figure, not asserted here)."""
    gold, predicted = _many_documents(5000)  # 50,000 gold spans
    predicted = predicted.assign(source=np.where(np.arange(len(predicted)) % 2, "a", "b"))
    starts = np.tile(np.arange(40) * 5, 5000)
    tokens = pd.DataFrame(
        {"id_document": np.repeat(gold["id_document"].unique(), 40), "html_start": starts, "html_end": starts + 4}
    )
    scores = score_spans(gold, predicted, tokens=tokens)
    assert scores.redacted_gold == len(tokens) // 2 and 0.8 < scores.micro.f1 < 0.95  # tokens 0-4 and 5-9 of each 20
