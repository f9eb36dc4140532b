"""The conflict policy: how overlapping candidates from different labelling functions become spans.

The policy is explicit and independent of the order in which functions ran:

1. Candidates are first **snapped to tokens**: a span starting or ending inside a token grows to the
   token's boundaries (the tokenizer keeps dates, e-mails, phones and initials whole, so this only
   happens for a pattern cut inside a word; growing never loses part of an identifier), and blanks at
   its edges are trimmed. A candidate covering no token is dropped.
2. Candidates still flagged ``needs_context`` (nothing confirmed them) are dropped.
3. Overlapping candidates compete by, in order: **source tier** (patient metadata, then specific
   patterns — e-mail, phone, dates —, then context rules, then gazetteers alone: see :func:`tier`),
   **length** (the longer span covers more of the identifier), **confidence**, then position and
   label, a total order so that the result never depends on the input order.
4. The winners are returned sorted by start; they never overlap.

Equal candidates proposed by several functions are merged first, keeping the best source, so that
the ``source`` column names the strongest evidence.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from functools import lru_cache
from operator import attrgetter, itemgetter

from deid_ds.label.candidate import Candidate

#: Source prefixes by decreasing authority (lower tier wins an overlap). A source is
#: ``"family:detail"`` (``"pattern:date_written"``, ``"metadata:lastname"``); the longest prefix of
#: this table that it starts with decides its tier.
TIERS: tuple[tuple[str, int], ...] = (
    ("metadata:", 0),  # the patient's own record: the strongest evidence there is
    ("pattern:email", 1),
    ("pattern:phone", 1),
    ("pattern:date", 2),
    ("address:", 2),  # street lines built from a street-type word, a number and context
    ("context:", 3),  # a title, role or cue word next to a capitalised word
    ("propagation:", 3),  # a form already labelled elsewhere in the same note
    ("patient:", 3),  # part of the patient's name (last or given name alone): a cue may outrank it
    ("pattern:zip", 4),
    ("pattern:", 4),
    ("gazetteer:", 5),  # a knowledge-base entry with no other support
)
DEFAULT_TIER = 6


@lru_cache(maxsize=4096)
def tier(source: str) -> int:
    """The tier of a source string (``"metadata:lastname"`` → 0); unknown families come last."""
    best, best_len = DEFAULT_TIER, -1
    for prefix, value in TIERS:
        if source.startswith(prefix) and len(prefix) > best_len:
            best, best_len = value, len(prefix)
    return best


def snap(candidate: Candidate, starts: Sequence[int], ends: Sequence[int]) -> Candidate | None:
    """``candidate`` spanning exactly the tokens it touches, or None if it touches none.

    ``starts`` and ``ends`` are the sorted token offsets of the note.
    """
    first = bisect_right(ends, candidate.start)  # first token ending after the candidate's start
    last = bisect_left(starts, candidate.end) - 1  # last token starting before its end
    if first > last:
        return None
    start, end = starts[first], ends[last]
    if start == candidate.start and end == candidate.end:
        return candidate
    return Candidate(start, end, candidate.label, candidate.source, candidate.confidence, candidate.needs_context)


def _rank(c: Candidate) -> tuple:
    return (tier(c.source), -(c.end - c.start), -c.confidence, c.start, c.label, c.source)


def resolve(candidates: Iterable[Candidate], tokens: Sequence[tuple[int, int]]) -> list[Candidate]:
    """Apply the policy of the module docstring; returns non-overlapping spans sorted by start."""
    starts = [s for s, _ in tokens]
    ends = [e for _, e in tokens]
    return winners(rank(candidates, starts, ends, {}))


#: The best candidate of each ``(start, end, label)`` after snapping, with its rank (see :func:`rank`).
Ranked = dict[tuple[int, int, str], tuple[tuple, Candidate]]


def rank(candidates: Iterable[Candidate], starts: Sequence[int], ends: Sequence[int], best: Ranked) -> Ranked:
    """Steps 1 to 3 of the policy up to the sweep: ``best`` updated with ``candidates``, and returned.

    Each candidate's rank is computed once and kept with it (the sort and the duplicates' comparison
    both need it). ``best`` is a fold over the candidates in order, so ranking ``a`` then ``b`` into one
    dict is ranking ``a + b``: the labeller's second pass adds the propagated candidates to the first
    pass's dict instead of snapping and ranking every candidate of the note again.
    """
    for candidate in candidates:
        if candidate.needs_context:
            continue
        snapped = snap(candidate, starts, ends)
        if snapped is None:
            continue
        key = (snapped.start, snapped.end, snapped.label)
        order = _rank(snapped)
        previous = best.get(key)
        if previous is None or order < previous[0]:
            best[key] = (order, snapped)
    return best


def winners(best: Ranked) -> list[Candidate]:
    """Step 4 of the policy: the non-overlapping winners of the ranked candidates, sorted by start."""
    return _sweep(sorted(best.values(), key=itemgetter(0)))


#: Above this many ranked candidates (a note of some 100 KB), :func:`_sweep` marks characters instead
#: of keeping the kept ones sorted as they come: both give the same spans.
SWEEP_MARKS_ABOVE = 2000


def _sweep(ranked: list[tuple[tuple, Candidate]]) -> list[Candidate]:
    """Keep, best first, each candidate that overlaps none kept before it; the kept sorted by start.

    Two ways to the same result: a usual note (a few dozen candidates) keeps its kept ones sorted by
    bisection and ``list.insert``, the fastest there; a note with thousands of candidates, where those
    insertions grow quadratic (a note of megabytes keeps some 10,000 spans per MB), marks the
    characters taken instead (:func:`_sweep_marking`, linear).
    """
    return _sweep_inserting(ranked) if len(ranked) <= SWEEP_MARKS_ABOVE else _sweep_marking(ranked)


def _sweep_inserting(ranked: list[tuple[tuple, Candidate]]) -> list[Candidate]:
    """:func:`_sweep` for few candidates: the kept ones are held sorted by start (they never overlap,
    so their ends are sorted too): a candidate is tested against its two neighbours only, found by
    bisection.
    """
    taken_starts: list[int] = []
    taken_ends: list[int] = []
    kept: list[Candidate] = []  # parallel to taken_starts
    for _, candidate in ranked:
        start, end = candidate.start, candidate.end
        i = bisect_right(taken_starts, start)
        if i and taken_ends[i - 1] > start:
            continue
        if i < len(taken_starts) and taken_starts[i] < end:
            continue
        taken_starts.insert(i, start)
        taken_ends.insert(i, end)
        kept.insert(i, candidate)
    return kept


def _sweep_marking(ranked: list[tuple[tuple, Candidate]]) -> list[Candidate]:
    """:func:`_sweep` for many candidates: the characters the kept ones cover are marked, one byte
    each (as :class:`~deid_ds.label.occupied.Occupied` does, written out for speed); a candidate is
    tested on its own characters, and the kept ones are sorted once at the end. Snapped candidates
    cover at least one token, so none is empty.
    """
    if not ranked:
        return []
    marks = bytearray(max(candidate.end for _, candidate in ranked))
    taken = marks.find
    kept: list[Candidate] = []
    for _, candidate in ranked:
        start, end = candidate.start, candidate.end
        if taken(1, start, end) < 0:
            marks[start:end] = b"\x01" * (end - start)
            kept.append(candidate)
    kept.sort(key=_START)
    return kept


_START = attrgetter("start")
