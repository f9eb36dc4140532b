"""Exact-span precision and recall of the pattern functions against gold annotations.

Gold spans carry HTML offsets (as ``deid-ds synth`` writes them); they are projected to text offsets
with :meth:`ParsedHtml.text_span` and compared with the candidates exactly (same label, same start and
end). Used by the tests as a regression floor and from the command line while tuning rules:

    python -m deid_ds.label.pattern_eval data/notes.parquet data/gold.parquet [--errors 20]
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from deid_ds.label.patterns import find_patterns

PATTERN_LABELS: tuple[str, ...] = ("DATE", "PHONE", "EMAIL", "ZIP")


@dataclass
class Scores:
    """Per-label counts, and a sample of the errors with a little context for reading."""

    tp: Counter[str] = field(default_factory=Counter)
    fp: Counter[str] = field(default_factory=Counter)
    fn: Counter[str] = field(default_factory=Counter)
    errors: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, label, "context[span]context")
    misaligned: int = 0

    def prf(self, label: str) -> tuple[float, float, float]:
        tp, fp, fn = self.tp[label], self.fp[label], self.fn[label]
        p = tp / (tp + fp) if tp + fp else 1.0
        r = tp / (tp + fn) if tp + fn else 1.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    def table(self) -> str:
        lines = [f"{'label':6} {'gold':>5} {'pred':>5} {'P':>6} {'R':>6} {'F1':>6}"]
        for label in PATTERN_LABELS:
            p, r, f = self.prf(label)
            gold, pred = self.tp[label] + self.fn[label], self.tp[label] + self.fp[label]
            lines.append(f"{label:6} {gold:5d} {pred:5d} {p:6.3f} {r:6.3f} {f:6.3f}")
        return "\n".join(lines)


def _show(text: str, start: int, end: int) -> str:
    return (text[max(0, start - 35) : start] + "[" + text[start:end] + "]" + text[end : end + 25]).replace("\n", "⏎")


def evaluate(notes, gold, *, include_uncertain: bool = False, keep_errors: int = 0) -> Scores:
    """Score :func:`find_patterns` on ``notes`` (id_document, html) against ``gold`` (pandas frames)."""
    from deid_ds.segmentation.html_text import html_to_text
    from deid_ds.segmentation.tokens import tokenize

    scores = Scores()
    gold = gold[gold["label"].isin(PATTERN_LABELS)]
    by_doc = dict(iter(gold.groupby("id_document")))
    for doc, html in zip(notes["id_document"], notes["html"]):
        parsed = html_to_text(html)
        text = parsed.text
        expected = set()
        rows = by_doc.get(doc)
        if rows is not None:
            for label, hs, he in zip(rows["label"], rows["html_start"], rows["html_end"]):
                s, e = parsed.text_span(int(hs), int(he))
                expected.add((label, s, e))
        predicted = {(c.label, c.start, c.end) for c in find_patterns(text, include_uncertain=include_uncertain)}
        bounds = {b for se in tokenize(text) for b in se}
        scores.misaligned += sum(1 for _, s, e in predicted if s not in bounds or e not in bounds)
        for label, _s, _e in predicted & expected:
            scores.tp[label] += 1
        for kind, spans, counter in (("FP", predicted - expected, scores.fp), ("FN", expected - predicted, scores.fn)):
            for label, s, e in sorted(spans):
                counter[label] += 1
                if len(scores.errors) < keep_errors:
                    scores.errors.append((kind, label, _show(text, s, e)))
    return scores


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notes")
    ap.add_argument("gold")
    ap.add_argument("--errors", type=int, default=0, help="print this many errors")
    ap.add_argument("--uncertain", action="store_true", help="count needs_context candidates as predictions")
    args = ap.parse_args(argv)
    scores = evaluate(
        pd.read_parquet(args.notes, columns=["id_document", "html"]),
        pd.read_parquet(args.gold),
        include_uncertain=args.uncertain,
        keep_errors=args.errors,
    )
    print(scores.table())
    print(f"candidates off token boundaries: {scores.misaligned}")
    for kind, label, shown in scores.errors:
        print(f"{kind} {label:5} {shown}")


if __name__ == "__main__":
    main()
