"""resolve() against a direct reading of its policy (snap each candidate, keep the best per span,
then take candidates in rank order when they overlap none taken), on random candidates; and the
labeller's two-pass ranking against resolving everything at once."""

from __future__ import annotations

import random
from bisect import bisect_right

from deid_ds.label.candidate import Candidate
from deid_ds.label.resolve import (
    SWEEP_MARKS_ABOVE,
    _rank,
    _sweep_inserting,
    _sweep_marking,
    rank,
    resolve,
    snap,
    winners,
)

SOURCES = [
    "metadata:lastname",
    "pattern:email",
    "pattern:date_written",
    "address:street",
    "context:doctor",
    "propagation:form",
    "patient:firstname",
    "pattern:zip",
    "gazetteer:commune",
    "other:thing",
]
LABELS = ["NOM", "PRENOM", "VILLE", "STR", "DATE"]


def reference(candidates: list[Candidate], tokens: list[tuple[int, int]]) -> list[Candidate]:
    starts, ends = [s for s, _ in tokens], [e for _, e in tokens]
    best: dict[tuple[int, int, str], Candidate] = {}
    for candidate in candidates:
        if candidate.needs_context:
            continue
        snapped = snap(candidate, starts, ends)
        if snapped is None:
            continue
        key = (snapped.start, snapped.end, snapped.label)
        if key not in best or _rank(snapped) < _rank(best[key]):
            best[key] = snapped
    kept: list[Candidate] = []
    taken: list[tuple[int, int]] = []
    for candidate in sorted(best.values(), key=_rank):
        i = bisect_right(taken, (candidate.start, float("inf")))
        if (i and taken[i - 1][1] > candidate.start) or (i < len(taken) and taken[i][0] < candidate.end):
            continue
        taken.insert(i, (candidate.start, candidate.end))
        kept.append(candidate)
    return sorted(kept, key=lambda c: (c.start, c.end))


def random_tokens(rng: random.Random) -> tuple[list[tuple[int, int]], int]:
    """Up to 40 token spans with gaps of 0 to 2 characters, and the offset after the last one."""
    tokens, offset = [], rng.randint(0, 3)
    for _ in range(rng.randint(0, 40)):
        length = rng.randint(1, 6)
        tokens.append((offset, offset + length))
        offset += length + rng.randint(0, 2)
    return tokens, offset


def random_candidates(rng: random.Random, count: int, offset: int, confidences: list[float]) -> list[Candidate]:
    """``count`` candidates starting anywhere up to ``offset + 2``, aligned to tokens or not, some needing context."""
    candidates = []
    for _ in range(count):
        start = rng.randint(0, offset + 2)
        end = start + rng.randint(1, 20)
        candidates.append(
            Candidate(start, end, rng.choice(LABELS), rng.choice(SOURCES), rng.choice(confidences), rng.random() < 0.1)
        )
    return candidates


def test_resolve_agrees_with_the_reference_on_random_candidates():
    rng = random.Random(11)
    for _ in range(300):
        tokens, offset = random_tokens(rng)
        candidates = random_candidates(rng, rng.randint(0, 60), offset, [0.5, 0.6, 0.7, 0.9, 1.0])
        candidates += rng.sample(candidates, len(candidates) // 3)  # the same candidate from several functions
        assert resolve(candidates, tokens) == reference(candidates, tokens)


def test_a_note_with_thousands_of_candidates_agrees_with_the_reference():
    # above SWEEP_MARKS_ABOVE candidates, the sweep marks characters instead of inserting into sorted lists
    rng = random.Random(3)
    tokens, offset = [], 0
    for _ in range(6000):
        length = rng.randint(1, 6)
        tokens.append((offset, offset + length))
        offset += length + rng.randint(0, 2)
    candidates = random_candidates(rng, 2 * SWEEP_MARKS_ABOVE, offset, [0.5, 0.7, 1.0])
    assert len(rank(candidates, [s for s, _ in tokens], [e for _, e in tokens], {})) > SWEEP_MARKS_ABOVE
    assert resolve(candidates, tokens) == reference(candidates, tokens)


def test_both_sweeps_keep_the_same_spans():
    rng = random.Random(17)
    for _ in range(300):
        tokens, offset = random_tokens(rng)
        candidates = random_candidates(rng, rng.randint(0, 60), offset, [0.5, 0.6, 0.7, 0.9, 1.0])
        ranked = sorted(
            rank(candidates, [s for s, _ in tokens], [e for _, e in tokens], {}).values(), key=lambda r: r[0]
        )
        assert _sweep_marking(ranked) == _sweep_inserting(ranked)


def test_ranking_in_two_steps_is_resolving_everything_at_once() -> None:
    """The labeller's second pass ranks the propagated candidates into the first pass's ranking."""
    rng = random.Random(5)
    for _ in range(300):
        tokens, offset = random_tokens(rng)
        starts, ends = [s for s, _ in tokens], [e for _, e in tokens]
        first = random_candidates(rng, rng.randint(0, 40), offset, [0.5, 0.75, 1.0])
        second = random_candidates(rng, rng.randint(0, 10), offset, [0.5, 0.75, 1.0])
        second += rng.sample(first, min(len(first), 3))  # a repetition the first pass already had
        ranked = rank(first, starts, ends, {})
        assert winners(ranked) == resolve(first, tokens)
        assert winners(rank(second, starts, ends, ranked)) == resolve(first + second, tokens)
