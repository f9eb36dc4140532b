"""Inter-annotator agreement of a correction campaign — ``deid-ds agreement``.

Subjects are the **tokens** of every item (sentence) answered by two annotators or more; each
annotator's rating of a token is the label of the span covering it, or ``O`` (rules of
:mod:`deid_ds.agreement.items`). On those:

* **Fleiss' kappa** over all such tokens, generalised to a varying number of annotators per item
  (:mod:`deid_ds.agreement.kappa`), with a percentile **bootstrap interval over documents** (tokens of a
  document are not independent, so resampling tokens would give a falsely narrow interval);
* **per label**: Fleiss' category-specific kappa (agreement on "this label or not"), with the same
  bootstrap, and how many ratings used the label;
* **per annotator pair**: Cohen's kappa on the tokens both rated, and the entity-level exact F1 between
  their spans on the items both answered (one annotator's spans scored against the other's with
  :func:`deid_ds.evaluation.scoring.score_spans`; F1 is symmetric, precision and recall swap);
* **per document type**: Fleiss' kappa of the tokens of that type's documents.

Items answered by a single annotator are counted but carry no agreement information.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from deid_ds.agreement.items import OUTSIDE, Item, group_items, label_order, token_labels
from deid_ds.agreement.kappa import KappaSums, bootstrap_kappa, cohen_kappa, fleiss_kappa
from deid_ds.agreement.model import Annotation, ReadReport
from deid_ds.agreement.readers import read_answers
from deid_ds.report import format_table

UNKNOWN_TYPE = "(unknown)"
INDEPENDENCE_NOTE = (
    "95% CI: percentile bootstrap over documents (tokens of a document are not independent, "
    "so documents, not tokens, are resampled)"
)


@dataclass
class AgreementResult:
    """Everything ``deid-ds agreement`` reports; :meth:`to_dict` is the ``--json`` layout."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    n_tokens: int
    n_annotators: int
    n_documents: int
    method: str
    confidence: float
    n_bootstrap: int
    seed: int
    per_label: dict[str, dict] = field(default_factory=dict)
    per_pair: list[dict] = field(default_factory=list)
    per_doc_type: dict[str, dict] = field(default_factory=dict)
    items: dict[str, int] = field(default_factory=dict)
    read: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-serialisable: ``fleiss_kappa`` first, then ``per_label``, ``per_pair``, ``per_doc_type``."""
        return {
            "fleiss_kappa": {
                "value": self.value,
                "ci_low": self.ci_low,
                "ci_high": self.ci_high,
                "n_items": self.n_items,
                "n_tokens": self.n_tokens,
                "n_annotators": self.n_annotators,
                "n_documents": self.n_documents,
                "method": self.method,
                "confidence": self.confidence,
                "bootstrap": {
                    "unit": "document",
                    "resamples": self.n_bootstrap,
                    "seed": self.seed,
                    "note": INDEPENDENCE_NOTE,
                },
            },
            "per_label": self.per_label,
            "per_pair": self.per_pair,
            "per_doc_type": self.per_doc_type,
            "items": self.items,
            "input": self.read,
        }

    def table(self) -> str:
        """The printed report: summary, per label, per pair, per document type, what was left out."""
        percent = f"{self.confidence * 100:g}%"
        sections = [
            format_table(
                ["measure", "value"],
                [
                    ["Fleiss' kappa (tokens)", _number(self.value)],
                    [f"{percent} CI", f"[{_number(self.ci_low)}, {_number(self.ci_high)}]"],
                    ["items rated by 2+ annotators", self.n_items],
                    ["tokens", self.n_tokens],
                    ["documents", self.n_documents],
                    ["annotators", self.n_annotators],
                ],
                title=f"Inter-annotator agreement ({self.method}); {INDEPENDENCE_NOTE.replace('95%', percent)}",
            )
        ]
        if self.per_label:
            rows = [
                [label, _number(s["kappa"]), f"[{_number(s['ci_low'])}, {_number(s['ci_high'])}]", s["ratings"]]
                for label, s in self.per_label.items()
            ]
            sections.append(
                format_table(
                    ["label", "kappa", f"{percent} CI", "ratings"],
                    rows,
                    title="Per label (Fleiss' category-specific kappa)",
                )
            )
        if self.per_pair:
            rows = [
                [
                    f"{p['annotators'][0]} / {p['annotators'][1]}",
                    p["items"],
                    p["tokens"],
                    _number(p["cohen_kappa"]),
                    p["entities"]["a"],
                    p["entities"]["b"],
                    p["entities"]["matching"],
                    _number(p["entities"]["f1"]),
                ]
                for p in self.per_pair
            ]
            sections.append(
                format_table(
                    ["annotators", "items", "tokens", "Cohen kappa", "spans A", "spans B", "exact", "entity F1"],
                    rows,
                    title="Per annotator pair",
                )
            )
        if self.per_doc_type:
            rows = [
                [t, s["documents"], s["items"], s["tokens"], _number(s["kappa"])] for t, s in self.per_doc_type.items()
            ]
            sections.append(
                format_table(
                    ["document type", "docs", "items", "tokens", "kappa"],
                    rows,
                    title="Per document type (Fleiss' kappa)",
                )
            )
        left_out = [[reason, count] for reason, count in self.read.get("skipped", {}).items()]
        left_out.append(
            ["items answered by a single annotator (no agreement information)", self.items.get("single_annotator", 0)]
        )
        sections.append(format_table(["left out", "count"], left_out))
        return "\n\n".join(sections)

    def figure(self, path: str | Path) -> None:
        """Per-label kappa bars with their bootstrap intervals, as a PNG (matplotlib, Agg backend)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from deid_ds.io.files import atomic_path

        labels = [label for label, s in self.per_label.items() if s["kappa"] is not None]
        values = [self.per_label[label]["kappa"] for label in labels]
        lows = [
            v - (self.per_label[label]["ci_low"] if self.per_label[label]["ci_low"] is not None else v)
            for label, v in zip(labels, values)
        ]
        highs = [
            (self.per_label[label]["ci_high"] if self.per_label[label]["ci_high"] is not None else v) - v
            for label, v in zip(labels, values)
        ]
        fig, ax = plt.subplots(figsize=(max(4.0, 0.8 * len(labels) + 2), 3.5))
        try:
            ax.bar(labels, values, yerr=[lows, highs], capsize=3, color="#4C72B0")
            title = "Agreement per label (category-specific Fleiss' kappa)"
            if self.value is not None:
                ax.axhline(self.value, color="#C44E52", linestyle="--", linewidth=1)
                title += f"\noverall {self.value:.3f} (dashed line)"
            ax.set_ylim(min([0.0, *values]) - 0.05, 1.05)
            ax.set_ylabel("kappa")
            ax.set_title(title, fontsize=10)
            ax.tick_params(axis="x", rotation=30)
            fig.tight_layout()
            with atomic_path(path) as tmp:
                fig.savefig(tmp, format="png", dpi=120)
        finally:
            plt.close(fig)


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


@dataclass
class _Matrix:
    """Token × annotator labels of the items rated by two annotators or more."""

    items: list[Item]
    annotators: list[str]
    categories: list[str]
    labels: np.ndarray  # tokens × annotators, category code or -1 (not rated)
    token_item: np.ndarray  # item index of each token

    def counts(self, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        labels = self.labels[rows]
        out = np.zeros((len(labels), len(self.categories)), dtype=np.int64)
        for a in range(labels.shape[1]):
            rated = labels[:, a] >= 0
            out[np.flatnonzero(rated), labels[rated, a]] += 1
        return out


def _matrix(items: Sequence[Item], report: ReadReport) -> _Matrix:
    annotators = sorted({name for item in items for name in item.answers})
    column = {name: i for i, name in enumerate(annotators)}
    per_item: list[tuple[int, list[tuple[int, list[str]]]]] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        starts = np.array([s for s, _ in item.tokens], dtype=np.int64)
        ends = np.array([e for _, e in item.tokens], dtype=np.int64)
        ratings = [
            (column[name], token_labels(answer.spans, starts, ends, report)) for name, answer in item.answers.items()
        ]
        for _, labels in ratings:
            seen.update(labels)
        per_item.append((index, ratings))
    categories = [OUTSIDE, *label_order(seen)]
    code = {label: i for i, label in enumerate(categories)}
    n_tokens = sum(len(item.tokens) for item in items)
    labels = np.full((n_tokens, len(annotators)), -1, dtype=np.int64)
    token_item = np.empty(n_tokens, dtype=np.int64)
    row = 0
    for (index, ratings), item in zip(per_item, items):
        size = len(item.tokens)
        token_item[row : row + size] = index
        for a, token_label in ratings:
            labels[row : row + size, a] = [code[label] for label in token_label]
        row += size
    return _Matrix(list(items), annotators, categories, labels, token_item)


def agreement(
    annotations: Sequence[Annotation],
    report: ReadReport | None = None,
    *,
    n_bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> AgreementResult:
    """Agreement of ``annotations`` (definitions: module docstring)."""
    report = report or ReadReport()
    items = group_items(annotations, report)
    multi = [item for item in items if len(item.answers) >= 2]
    matrix = _matrix(multi, report)
    counts = matrix.counts()
    raters = counts.sum(axis=1)
    documents = sorted({item.document for item in multi})
    doc_code = {d: i for i, d in enumerate(documents)}
    token_doc = np.array([doc_code[multi[i].document] for i in matrix.token_item.tolist()], dtype=np.int64)
    value = fleiss_kappa(counts)
    boot = bootstrap_kappa(token_doc, counts, n=n_bootstrap, seed=seed, confidence=confidence)
    sums = KappaSums.of(counts)
    per_category = sums.category_kappas()
    per_label = {}
    for j, label in enumerate(matrix.categories):
        if label == OUTSIDE:
            continue
        per_label[label] = {
            "kappa": per_category[j],
            "ci_low": boot.category_low[j],
            "ci_high": boot.category_high[j],
            "ratings": int(counts[:, j].sum()),
            "share": float(counts[:, j].sum() / counts.sum()) if counts.sum() else 0.0,
        }
    method = (
        "Fleiss" if len(raters) == 0 or raters.min() == raters.max() else "Fleiss, varying raters (pairwise pooling)"
    )
    result = AgreementResult(
        value=value,
        ci_low=boot.low,
        ci_high=boot.high,
        n_items=len(multi),
        n_tokens=len(counts),
        n_annotators=len(matrix.annotators),
        n_documents=len(documents),
        method=method,
        confidence=confidence,
        n_bootstrap=n_bootstrap,
        seed=seed,
        per_label=per_label,
        per_pair=_pairs(matrix),
        per_doc_type=_doc_types(matrix, counts),
        items={"total": len(items), "rated_by_2_or_more": len(multi), "single_annotator": len(items) - len(multi)},
        read=report.to_dict(),
    )
    return result


def _pairs(matrix: _Matrix) -> list[dict]:
    from deid_ds.evaluation.scoring import score_spans

    out = []
    k = len(matrix.categories)
    for a, b in combinations(range(len(matrix.annotators)), 2):
        both = (matrix.labels[:, a] >= 0) & (matrix.labels[:, b] >= 0)
        name_a, name_b = matrix.annotators[a], matrix.annotators[b]
        table = np.zeros((k, k), dtype=np.int64)
        np.add.at(table, (matrix.labels[both, a], matrix.labels[both, b]), 1)
        shared = [item for item in matrix.items if name_a in item.answers and name_b in item.answers]
        if not shared:
            continue
        frames = []
        for name in (name_a, name_b):
            rows = [
                (item.key, span.label, span.start, span.end) for item in shared for span in item.answers[name].spans
            ]
            frames.append(pd.DataFrame(rows, columns=["id_document", "label", "html_start", "html_end"]))
        scores = score_spans(frames[0], frames[1], documents=[item.key for item in shared])
        micro = scores.micro
        out.append(
            {
                "annotators": [name_a, name_b],
                "items": len(shared),
                "tokens": int(both.sum()),
                "cohen_kappa": cohen_kappa(table),
                "observed_agreement": float(np.trace(table) / table.sum()) if table.sum() else None,
                "entities": {"a": micro.gold, "b": micro.predicted, "matching": micro.tp, "f1": micro.f1},
            }
        )
    return out


def _doc_types(matrix: _Matrix, counts: np.ndarray) -> dict[str, dict]:
    item_type = [item.doc_type or UNKNOWN_TYPE for item in matrix.items]
    if set(item_type) == {UNKNOWN_TYPE}:
        return {}
    token_type = np.array([item_type[i] for i in matrix.token_item.tolist()], dtype=object)
    out = {}
    for name in sorted(set(item_type)):
        rows = token_type == name
        chosen = [item for item, t in zip(matrix.items, item_type) if t == name]
        out[name] = {
            "kappa": fleiss_kappa(counts[rows]),
            "documents": len({item.document for item in chosen}),
            "items": len(chosen),
            "tokens": int(rows.sum()),
        }
    return out


def agreement_from_files(
    paths: Sequence[str | Path],
    fmt: str = "auto",
    *,
    annotator_from: str = "auto",
    dataset: str | None = None,
    n_bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> AgreementResult:
    """Read answer files (any supported format) and compute their agreement: the API of the command."""
    annotations, report = read_answers(paths, fmt, annotator_from=annotator_from, dataset=dataset)
    return agreement(annotations, report, n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)
