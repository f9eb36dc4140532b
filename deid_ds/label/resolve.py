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
from deid_ds.label.occupied import Occupied

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


def _sweep(ranked: list[tuple[tuple, Candidate]]) -> list[Candidate]:
    """Keep, best first, each candidate that overlaps none kept before it; the kept sorted by start.

    The characters the kept ones cover are marked (:class:`Occupied`): a candidate is tested on its
    own characters, and the kept ones are sorted once at the end. (Keeping them sorted as they came,
    by bisection and ``list.insert``, was quadratic: a note of megabytes keeps some 10,000 spans per MB.)
    Snapped candidates cover at least one token, so none is empty.
    """
    if not ranked:
        return []
    taken = Occupied(max(candidate.end for _, candidate in ranked))
    kept: list[Candidate] = []
    for _, candidate in ranked:
        start, end = candidate.start, candidate.end
        if taken.overlaps(start, end):
            continue
        taken.take(start, end)
        kept.append(candidate)
    kept.sort(key=attrgetter("start"))
    return kept
