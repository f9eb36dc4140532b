"""The hybrid mode (``predict --with-rules KB``): the model's spans and the weak labeller's, merged.

The rules and the model fail differently: the rules are precise where an identifier has a form or a
record to match (the patient's metadata, an e-mail, a phone number, a date, a postcode, a street line)
and miss what no rule or gazetteer covers; the model generalises (a name with no cue, a street missing
from the BAN) but may cut or mislabel a span a pattern gets exactly right, and invents spans where it is
unsure. The merge keeps the better source where each is better, and lets the model's confidence decide
where they disagree.

**Policy** (:func:`merge_scored`, :func:`merge_spans`; spans are ``(start, end, label, source)`` in the
note's text, model spans optionally with a fifth element, their ``score`` in (0, 1] — the tagger's
confidence, see :func:`deid_ds.ner.predict.sentence_entities`; a model span without one counts as 1.0.
Each input is non-overlapping — the tagger and the labeller both guarantee it). Two thresholds:
``add`` (a model span that overlaps no rule span is added only when its score is at least ``add``) and
``override`` (a model span overrides the weak rule spans it overlaps only when its score is at least
``override``). Both default to 0.0, today's behaviour for callers that pass none: every model span
counts.

1. **Agreement.** A model span and a rule span with the same start, end and label become one span,
   ``source = "model+rules"``, whatever the score (the rule keeps it anyway).
2. **High-precision rules win.** A rule span whose source is one of :data:`RULE_WINS` — patient
   metadata (``metadata:*``), e-mail, phone, date and postcode patterns (``pattern:email*``,
   ``pattern:phone*``, ``pattern:date*``, ``pattern:zip*``) and street lines, post boxes and the city
   next to a postcode (``address:*``) — is kept with its own label, offsets and source; every model
   span overlapping it is dropped, whatever its score.
3. **A rule span that covers more keeps it all.** A rule span of any other source that contains every
   model span it overlaps, all of its own label (the model found ``Mireille RENAULT`` where the rule found
   ``Marine Mireille RENAULT``), replaces them, ``source = "model+rules"``: both say what it is, and the
   redaction never shrinks to the model's shorter span. Whatever the scores: the rule span would be kept
   without the model.
4. **The model overrides a weak rule only when it is sure.** A rule span of any other source (context
   cues, propagation, partial patient names, gazetteers alone, other patterns) is dropped when it
   overlaps a model span left by 1–3 whose score is at least ``override`` (that model span is kept);
   otherwise it is kept, and the less confident model spans overlapping it are dropped.
5. **Model-only spans above the threshold.** A model span left by 1–4 that overlaps no rule span kept
   is added when its score is at least ``add`` (``source = "model"``). Rule spans found by the rules
   only are kept with their source.

So a rule span is lost only to a strong rule, or to a model span at least ``override`` sure; lowering
``add`` (``predict --threshold``) only adds model spans, never removes a redacted character (tested).
Scores of the result (:func:`merge_scored`): the model's score where the model contributed (model,
agreed and widened spans: the highest score among the model spans a widened rule span holds), ``None``
for rule-only spans (the rules have no calibrated confidence).

The result never overlaps (the model's spans are disjoint, so are the rules'; 2 removes model spans
overlapping strong rule spans, 3 replaces model spans by the rule span holding them, 4 removes weak rule
spans overlapping confident model spans and the other model spans overlapping the rule spans left, 5 adds
only model spans overlapping no rule span kept) and is sorted by ``(start, end, label, source)``. Every
decision depends only on the *sets* of spans, never on their order, so the result is the same whatever
order the inputs come in.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

Span = tuple[int, int, str, str]  # start, end (exclusive), label, source
ScoredSpan = tuple[int, int, str, str, float | None]  # ... and the model's score (None: the rules alone)

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


def merge_spans(
    model: Iterable[Sequence], rules: Iterable[Span], *, add: float = 0.0, override: float = 0.0
) -> list[Span]:
    """The hybrid's spans of one note by the policy of the module docstring (pure, order-independent).

    With no thresholds, every model span counts (the policy before scores existed)."""
    return [span[:4] for span in merge_scored(model, rules, add=add, override=override)]


def merge_scored(
    model: Iterable[Sequence], rules: Iterable[Span], *, add: float = 0.0, override: float = 0.0
) -> list[ScoredSpan]:
    """:func:`merge_spans` with each span's score: the model's where it contributed, else ``None``."""
    scores: dict[tuple[int, int, str], float] = {}
    for span in model:
        key = (span[0], span[1], span[2])
        score = 1.0 if len(span) < 5 or span[4] is None else float(span[4])
        scores[key] = max(scores.get(key, score), score)  # a duplicate model span: its best score
    model_set = set(scores)
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
    model_left = sorted((s, e, label) for s, e, label in model_set - agreed if not strong_intervals.overlaps(s, e))
    widened, model_left = _widened(weak, model_left, _Intervals([(s, e) for s, e, _ in agreed] + strong_spans), scores)
    widened_spans = [(s, e) for s, e, _, _ in widened]
    # Policy 4: a confident model span left, an agreed or widened span blocks a weak rule span; so does a strong
    # rule span (never overlapping in well-formed input, where rules are disjoint).
    confident = [(s, e) for s, e, label in model_left if scores[(s, e, label)] >= override]
    taken = [(s, e) for s, e, _ in agreed] + strong_spans + widened_spans
    blocking = _Intervals(confident + taken)
    weak_kept = [span for span in weak if not blocking.overlaps(span[0], span[1])]
    rules_kept = _Intervals(taken + [(s, e) for s, e, _, _ in weak_kept])
    weak_spans = _Intervals([(s, e) for s, e, _, _ in weak])
    model_kept = []
    for s, e, label in model_left:
        score = scores[(s, e, label)]
        if rules_kept.overlaps(s, e):
            continue  # a rule span kept there (policy 4: this model span was not sure enough)
        if score >= add or (score >= override and weak_spans.overlaps(s, e)):
            model_kept.append((s, e, label, MODEL_SOURCE, score))
    merged: list[ScoredSpan] = [(s, e, label, AGREED_SOURCE, scores[(s, e, label)]) for s, e, label in agreed]
    merged += [(s, e, label, AGREED_SOURCE, score) for s, e, label, score in widened]
    merged += model_kept
    merged += [(s, e, label, source, None) for s, e, label, source in strong + weak_kept]
    return sorted(merged, key=lambda span: span[:4])


def _widened(
    weak: list[Span], model: list[tuple[int, int, str]], taken: _Intervals, scores: dict[tuple[int, int, str], float]
) -> tuple[list[tuple[int, int, str, float]], list[tuple[int, int, str]]]:
    """Policy 3: the weak rule spans that hold every model span they overlap, all of their label (with the
    best score among them), and the model spans left. ``model`` is sorted and disjoint; ``taken`` holds the
    agreed and strong spans."""
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
            widened.append((s, e, label, max(scores[m] for m in inside)))
            replaced.update(inside)
    return widened, [m for m in model if m not in replaced]
