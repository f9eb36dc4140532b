"""The ``evaluate --html`` page: the comparison of :func:`deid_ds.evaluation.evaluate` for people to read.

One self-contained file (:mod:`deid_ds.io.html_page`: no request leaves it, every text escaped): the
inputs, the side-by-side table (systems as columns), F1 per label with its bootstrap interval, the
scores per document type, the figure (an inline PNG), and error examples with their context.

The examples hold note text, so the page is written only where the user asks, says so in a banner, and
:func:`deid_ds.evaluation.evaluate` warns on stderr when it writes one.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from pathlib import Path

from deid_ds.evaluation.examples import FALSE_NEGATIVE, FALSE_POSITIVE, ErrorExample
from deid_ds.evaluation.figure import percent
from deid_ds.io.files import atomic_write_text
from deid_ds.io.html_page import esc, highlighted, legend, page

TITLE = "deid-ds evaluation report"
BANNER = (
    "<strong>This page holds note text.</strong> The error examples show the notes' words around each "
    "error: if the notes are real, so are the names, dates and addresses below. Keep this file where the notes "
    "themselves may be kept; do not send or publish it."
)
BANNER_NO_TEXT = (
    "<strong>This page lists documents with errors</strong> (their ids and offsets) but no note text: the notes "
    "were not given. Keep it with the evaluation's other outputs."
)


def _f(value: float) -> str:
    return f"{value:.3f}"


def _ci(interval: Sequence[float], signed: bool = False) -> str:
    low, high = interval
    form = "{:+.3f}" if signed else "{:.3f}"
    return f'<span class="ci">[{form.format(low)}, {form.format(high)}]</span>'


def _table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, caption: str = "", first_is_name=True, cls: str = ""
) -> str:
    """A table of already-escaped cells; the first column left-aligned (a name)."""
    head = "".join(
        f'<th{" class=name" if i == 0 and first_is_name else ""} scope="col">{h}</th>' for i, h in enumerate(headers)
    )
    body = "".join(
        "<tr>"
        + "".join(f"<td{' class=name' if i == 0 and first_is_name else ''}>{c}</td>" for i, c in enumerate(row))
        + "</tr>"
        for row in rows
    )
    cap = f"<caption>{caption}</caption>" if caption else ""
    attribute = f' class="{cls}"' if cls else ""
    return f"<table{attribute}>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _best(values: Sequence[float]) -> list[str]:
    """Cells of ``values`` with the highest in bold (several when tied), as a reader scans for it."""
    top = max(values, default=None)
    return [f"<b>{_f(v)}</b>" if len(values) > 1 and v == top else _f(v) for v in values]


def _inputs(evaluation) -> str:
    unit = "tokens" if evaluation.redaction_unit == "token" else "characters"
    systems = "".join(f"<li><b>{esc(n)}</b>: {esc(p)}</li>" for n, p in evaluation.systems.items())
    types = {"notes": "the notes' doc_type", "gold": "the gold's doc_type column"}.get(evaluation.doc_types_from or "")
    lines = [
        f"<p>Gold: {esc(evaluation.gold)}. <b>{evaluation.documents:,}</b> documents evaluated: the gold's "
        "(predictions on other documents are ignored).</p>",
        f"<ul>{systems}</ul>",
        f"<p class=meta>Exact match: same document, label and offsets. Lenient: overlapping, same label, one-to-one. "
        f"Redaction recall counted in {unit}, whatever the label. "
        f"Intervals: {percent(evaluation.comparison.confidence)} "
        f"percentile bootstrap over documents ({evaluation.n_bootstrap:,} resamples, seed {evaluation.seed}), the same "
        "resamples for every system. "
        + (f"Document types from {esc(types)}." if types else "No document types (give --notes).")
        + "</p>",
    ]
    return "\n".join(lines)


def _summary(comparison) -> str:
    scores = comparison.scores
    names = list(scores)
    first = names[0] if names else ""
    micro = {n: s.micro for n, s in scores.items()}
    rows = [
        ["precision (exact)", *_best([micro[n].precision for n in names])],
        ["recall (exact)", *_best([micro[n].recall for n in names])],
        ["F1 (exact)", *_best([micro[n].f1 for n in names])],
        [f"F1 {percent(comparison.confidence)} interval", *(_ci(comparison.ci[n]) for n in names)],
        [f"ΔF1 vs {esc(first)}", *("" if n == first else _ci(comparison.delta_ci[n], signed=True) for n in names)],
        ["macro F1 (exact)", *_best([scores[n].macro_f1 for n in names])],
        ["F1 (lenient)", *_best([scores[n].lenient_micro.f1 for n in names])],
        ["redaction recall", *_best([scores[n].redacted_recall for n in names])],
        ["fully redacted documents", *_best([scores[n].fully_redacted_share for n in names])],
        ["gold / predicted / TP", *(f"{micro[n].gold:,} / {micro[n].predicted:,} / {micro[n].tp:,}" for n in names)],
    ]
    return _table(["micro scores", *(esc(n) for n in names)], rows)


def _per_label(comparison) -> str:
    scores = comparison.scores
    names = list(scores)
    labels: list[str] = []
    for s in scores.values():
        labels += [label for label in s.exact if label not in labels]
    rows = []
    for label in labels:
        counts = [scores[n].exact.get(label) for n in names]
        gold = max((c.gold for c in counts if c is not None), default=0)
        cells = []
        for n, c in zip(names, counts):
            if c is None:
                cells.append("")
                continue
            ci = comparison.label_ci.get(n, {}).get(label)
            cells.append(
                f"{_f(c.f1)} {_ci(ci) if ci else ''}<br><span class=ci>P {_f(c.precision)} · R {_f(c.recall)}</span>"
            )
        rows.append([esc(label), f"{gold:,}", *cells])
    return _table(["label", "gold", *(f"F1 {esc(n)}" for n in names)], rows)


def _per_doc_type(comparison) -> str:
    scores = comparison.scores
    names = list(scores)
    types = sorted({t for s in scores.values() for t in s.per_doc_type})
    if not types:
        return "<p class=info>No document types: give <code>--notes</code> (or a gold with a doc_type column).</p>"
    rows = []
    for doc_type in types:
        per = [scores[n].per_doc_type.get(doc_type) for n in names]
        documents = next((p.documents for p in per if p is not None), 0)
        rows.append(
            [
                esc(doc_type),
                f"{documents:,}",
                *_best([p.counts.f1 if p is not None else 1.0 for p in per]),
                *_best([p.redacted_recall if p is not None else 1.0 for p in per]),
            ]
        )
    headers = ["document type", "docs", *(f"F1 {esc(n)}" for n in names), *(f"redacted {esc(n)}" for n in names)]
    return _table(headers, rows)


def _examples(examples: Mapping[str, list[ErrorExample]] | None, per_label: int) -> str:
    if examples is None:
        return "<p class=info>No error examples were asked for.</p>"
    parts = [
        f"<p class=meta>At most {per_label} false positives and {per_label} false negatives per system and label, "
        "sampled across documents. A false positive is a predicted span that no gold span matches exactly; a false "
        "negative, a gold span that no prediction matches. <i>Overlaps</i> tells a boundary or label error from a "
        "pure miss. Offsets are into the note's HTML.</p>"
    ]
    labels = sorted({e.label for items in examples.values() for e in items})
    parts.append(legend(labels))
    for name, items in examples.items():
        rows = []
        for e in items:
            if e.entity is None:
                context = '<span class="meta">(no context: give --notes)</span>'
            else:
                cls = "missed" if e.kind == FALSE_NEGATIVE else ""
                context = (
                    esc(e.before) + highlighted(e.entity, [(0, len(e.entity), e.label)], extra_class=cls) + esc(e.after)
                )
            rows.append(
                [
                    esc(e.kind),
                    esc(e.label),
                    esc(e.id_document),
                    f"{e.html_start}-{e.html_end}",
                    esc(e.overlaps) or "—",
                    f'<div class="context">{context}</div>',
                ]
            )
        fp = sum(e.kind == FALSE_POSITIVE for e in items)
        fn = len(items) - fp
        summary = f"{esc(name)}: {fp} false positive(s), {fn} false negative(s) shown"
        table = (
            _table(["kind", "label", "document", "offsets", "overlaps", "context"], rows, cls="examples")
            if rows
            else "<p>None.</p>"
        )
        parts.append(f"<details open><summary>{summary}</summary>{table}</details>")
    return "\n".join(parts)


def report_html(evaluation, *, figure_png: bytes | None = None, examples=None, per_label: int = 3) -> str:
    """The page of ``evaluation`` (an :class:`deid_ds.evaluation.Evaluation`) as a string."""
    comparison = evaluation.comparison
    has_text = examples is not None and any(e.entity is not None for items in examples.values() for e in items)
    figure = (
        '<img class="figure" alt="F1 per label and system with bootstrap intervals" '
        f'src="data:image/png;base64,{base64.b64encode(figure_png).decode("ascii")}">'
        if figure_png
        else "<p class=info>No figure (matplotlib is not installed).</p>"
    )
    body = "\n".join(
        [
            "<h2>Inputs</h2>",
            _inputs(evaluation),
            "<h2>Systems side by side</h2>",
            _summary(comparison),
            "<h2>F1 per label</h2>",
            _per_label(comparison),
            "<h2>Figure</h2>",
            figure,
            "<h2>Per document type</h2>",
            _per_doc_type(comparison),
            "<h2>Error examples</h2>",
            _examples(examples, per_label),
        ]
    )
    labels = sorted({e.label for items in (examples or {}).values() for e in items})
    return page(TITLE, body, banner=BANNER if has_text else BANNER_NO_TEXT, labels=labels)


def write_html_report(path: str | Path, evaluation, *, figure_png=None, examples=None, per_label: int = 3) -> Path:
    """Write :func:`report_html` to ``path`` atomically."""
    path = Path(path)
    atomic_write_text(path, report_html(evaluation, figure_png=figure_png, examples=examples, per_label=per_label))
    return path
