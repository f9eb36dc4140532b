"""The hybrid mode (``predict --with-rules KB``): the model's spans and the weak labeller's, merged.

The rules and the model fail differently: the rules are precise where an identifier has a form or a
record to match (the patient's metadata, an e-mail, a phone number, a date, a postcode, a street line)
and miss what no rule or gazetteer covers; the model generalises (a name with no cue, a street missing
from the BAN) but may cut or mislabel a span a pattern gets exactly right. The merge keeps the better
source where each is better.

**Policy** (:func:`merge_spans`; spans are ``(start, end, label, source)`` in the note's text, each
input non-overlapping — the tagger and the labeller both guarantee it):

1. **Agreement.** A model span and a rule span with the same start, end and label become one span,
   ``source = "model+rules"``.
2. **High-precision rules win.** A rule span whose source is one of :data:`RULE_WINS` — patient
   metadata (``metadata:*``), e-mail, phone, date and postcode patterns (``pattern:email*``,
   ``pattern:phone*``, ``pattern:date*``, ``pattern:zip*``) and street lines, post boxes and the city
   next to a postcode (``address:*``) — is kept with its own label, offsets and source; every model
   span overlapping it is dropped.
3. **A rule span that covers more keeps it all.** A rule span of any other source that contains every
   model span it overlaps, all of its own label (the model found ``Mireille RENAULT`` where the rule found
   ``Marine Mireille RENAULT``), replaces them, ``source = "model+rules"``: both say what it is, and the
   redaction never shrinks to the model's shorter span.
4. **Otherwise the model wins.** A rule span of any other source (context cues, propagation, partial
   patient names, gazetteers alone, other patterns) that overlaps a model span kept by 1–3 is dropped.
5. **Everything else is kept**: spans found by one side only, with ``source = "model"`` or the rule's
   source.

The result never overlaps (the model's spans are disjoint, so are the rules'; 2 removes model spans
overlapping strong rule spans, 3 replaces model spans by the rule span holding them, and 4 removes weak
rule spans overlapping the model spans left) and
is sorted by ``(start, end, label, source)``. Every decision depends only on the *sets* of spans, never
on their order, so the result is the same whatever order the inputs come in.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

Span = tuple[int, int, str, str]  # start, end (exclusive), label, source

MODEL_SOURCE = "model"
AGREED_SOURCE = "model+rules"

#: Rule sources that win over an overlapping model span: prefixes of ``source`` (see the module docstring).
RULE_WINS: tuple[str, ...] = ("metadata:", "pattern:email", "pattern:phone", "pattern:date", "pattern:zip", "address:")


def rule_wins(source: str) -> bool:
    """Whether a rule span of this source wins over an overlapping model span."""
    return source.startswith(RULE_WINS)


class _Intervals:
    """Sorted disjoint intervals with an overlap test in O(log n)."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        ordered = sorted(spans)
        self.starts = [s for s, _ in ordered]
        self.ends = [e for _, e in ordered]
        self.reach = []  # running maximum of the ends: robust to inputs that overlap after all
        best = -1
        for e in self.ends:
            best = max(best, e)
            self.reach.append(best)

    def overlaps(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` shares at least one character with one of the intervals."""
        i = bisect_left(self.starts, end)  # intervals starting before ``end``
        return i > 0 and self.reach[i - 1] > start


def merge_spans(model: Iterable[Span], rules: Iterable[Span]) -> list[Span]:
    """The hybrid's spans of one note by the policy of the module docstring (pure, order-independent)."""
    model_set = {(s, e, label) for s, e, label, _ in model}
    rule_best: dict[tuple[int, int, str], str] = {}
    for s, e, label, source in rules:
        key = (s, e, label)
        previous = rule_best.get(key)
        if previous is None or (rule_wins(source), source) > (
            rule_wins(previous),
            previous,
        ):  # a duplicate rule span: one deterministic source
            rule_best[key] = source
    agreed = model_set & set(rule_best)
    strong = [
        (s, e, label, source)
        for (s, e, label), source in rule_best.items()
        if (s, e, label) not in agreed and rule_wins(source)
    ]
    weak = [
        (s, e, label, source)
        for (s, e, label), source in rule_best.items()
        if (s, e, label) not in agreed and not rule_wins(source)
    ]
    strong_spans = [(s, e) for s, e, _, _ in strong]
    strong_intervals = _Intervals(strong_spans)
    model_kept = sorted((s, e, label) for s, e, label in model_set - agreed if not strong_intervals.overlaps(s, e))
    widened, model_kept = _widened(weak, model_kept, _Intervals([(s, e) for s, e, _ in agreed] + strong_spans))
    # A model span kept, an agreed or widened span blocks a weak rule span; so does a strong rule span (never
    # overlapping in well-formed input, where rules are disjoint).
    blocking = _Intervals(
        [(s, e) for s, e, _ in model_kept]
        + [(s, e) for s, e, _ in agreed]
        + strong_spans
        + [(s, e) for s, e, _ in widened]
    )
    weak_kept = [span for span in weak if not blocking.overlaps(span[0], span[1])]
    merged = [(s, e, label, AGREED_SOURCE) for s, e, label in [*agreed, *widened]]
    merged += [(s, e, label, MODEL_SOURCE) for s, e, label in model_kept]
    merged += strong + weak_kept
    return sorted(merged)


def _widened(
    weak: list[Span], model: list[tuple[int, int, str]], taken: _Intervals
) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    """Policy 3: the weak rule spans that hold every model span they overlap, all of their label, and the
    model spans left. ``model`` is sorted and disjoint; ``taken`` holds the agreed and strong spans."""
    starts = [s for s, _, _ in model]
    widened, replaced = [], set()
    for s, e, label, _ in weak:
        if taken.overlaps(s, e):
            continue
        k = bisect_left(starts, s)
        if k > 0 and model[k - 1][1] > s:
            continue  # a model span starts before the rule span and runs into it: not held by it
        inside = []
        while k < len(model) and model[k][0] < e:
            inside.append(model[k])
            k += 1
        if inside and all(me <= e and ml == label for _, me, ml in inside):
            widened.append((s, e, label))
            replaced.update(inside)
    return widened, [m for m in model if m not in replaced]
