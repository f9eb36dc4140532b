"""Entity-level evaluation of predicted spans against gold spans (``weak-label --gold``, ``evaluate``).

Everything is measured on spans with offsets into each note's HTML, so the rules, the model and the
gold of any annotation campaign are compared on the same footing, whatever tokenisation produced them.

Metrics (all computed on the *evaluated documents*: ``documents`` when given, else every id found in the
gold or the predictions; spans of other documents are ignored):

- **Exact match** (the reference study's metric): a predicted span is a true positive iff a gold span has
  the same document, label, ``html_start`` and ``html_end``. Duplicate rows (same document, label and
  offsets, e.g. found by two sources) count once. Per label, micro (counts summed over labels) and macro
  (mean of the per-label F1 over the labels present in the gold or the predictions).
- **Lenient match**: a predicted span matches a gold span of the *same label* that it overlaps by at least
  one character. Matching is one-to-one, greedy by overlap size (ties broken by gold then predicted
  position): the pair with the largest overlap is matched first, then the next among spans still free.
  So a gold span cut in two by a prediction counts once, and precision and recall stay ≤ 1.
- **Label-blind redaction recall** ("redacted"): with ``tokens``, among the tokens overlapping any gold
  span, the share overlapping any predicted span, whatever its label. This is what matters for
  de-identification: a name masked as a ``VILLE`` is still masked. A token partially overlapped counts as
  covered (spans are token-aligned in this project, so partial overlaps are boundary errors). Without
  ``tokens`` the same measure is computed on **characters**: the HTML characters inside gold spans (their
  union) and the share of them inside predicted spans. Only offsets are known here, so markup or
  whitespace inside an entity counts like its letters; gold spans never start or end on either.
- **Fully redacted documents**: among the evaluated documents with at least one gold span, the share whose
  every gold token (or character) is covered by a prediction. In token mode, a document whose gold spans
  overlap no token at all (tokens missing for it) counts as *not* fully redacted.
- **Per source**: for each ``source`` of the predictions (rows as given, duplicates included): spans
  produced, exactly correct (same document, label and offsets as a gold span), precision, and lenient
  precision (share overlapping a gold span of the same label; not one-to-one) — boundary errors show as
  a gap between the two.
- **Per document type** (with ``doc_types``): exact micro precision, recall and F1, and redaction recall.
- **Confidence intervals** (:func:`bootstrap_micro_f1`, :func:`compare_systems`): percentile bootstrap of
  the exact micro F1 over *documents* resampled with replacement (errors cluster by note), the same
  resamples for every system compared, so differences between systems get a paired interval too.

Conventions for empty sets (chosen so that every number is defined and JSON-serialisable, no NaN):
precision is TP / predicted, or 1.0 when nothing is predicted *and* the gold is empty, 0.0 when nothing is
predicted but the gold is not; recall is TP / gold, or 1.0 when the gold is empty *and* nothing is
predicted, 0.0 when the gold is empty but something is predicted; F1 is 2PR / (P + R), 0.0 when P + R = 0
(equivalently 2 TP / (gold + predicted), 1.0 when both are empty). So a label neither in the gold nor in
the predictions scores 1.0 but is left out of the macro average; a label with predictions and no gold
scores 0.0. Redaction recall and the fully-redacted share are 1.0 when there is nothing to redact.

The computations are vectorised (merges, sorted searches, interval unions) so that tens of thousands of
spans and hundreds of thousands of tokens score in well under a second. pandas and numpy are imported
here because only the commands that score import this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from deid_ds.errors import InputError
from deid_ds.io.notes import as_identifier
from deid_ds.model import LABELS
from deid_ds.report import format_table

__all__ = [
    "Counts",
    "SpanScores",
    "SystemComparison",
    "bootstrap_micro_f1",
    "compare_systems",
    "score_spans",
]

#: Composite sort keys are ``group * _SCALE + offset``: offsets must stay below 2**32 (4 GiB of HTML per
#: note), which leaves 2**31 groups (documents × labels) in a signed 64-bit integer.
_SCALE = np.int64(1 << 32)
_SPAN_COLUMNS = ("id_document", "label", "html_start", "html_end")
_UNKNOWN_TYPE = "(unknown)"
_NO_SOURCE = "(none)"


# --------------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True, slots=True)
class Counts:
    """True positives, predicted and gold counts, with precision, recall and F1 by the module's conventions."""

    tp: int
    predicted: int
    gold: int

    @property
    def precision(self) -> float:
        if self.predicted:
            return self.tp / self.predicted
        return 1.0 if self.gold == 0 else 0.0

    @property
    def recall(self) -> float:
        if self.gold:
            return self.tp / self.gold
        return 1.0 if self.predicted == 0 else 0.0

    @property
    def f1(self) -> float:
        total = self.predicted + self.gold
        return 2 * self.tp / total if total else 1.0

    @property
    def empty(self) -> bool:
        """Neither gold nor predicted: left out of macro averages."""
        return self.predicted == 0 and self.gold == 0

    def to_dict(self) -> dict[str, float]:
        return {
            "gold": self.gold,
            "predicted": self.predicted,
            "tp": self.tp,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }


def _macro_f1(per_label: Mapping[str, Counts]) -> float:
    """Mean per-label F1 over the labels present in gold or predictions (1.0 when there are none)."""
    scores = [c.f1 for c in per_label.values() if not c.empty]
    return float(np.mean(scores)) if scores else 1.0


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


@dataclass(frozen=True, slots=True)
class SourceScore:
    """What one rule, gazetteer, metadata field or model produced, and how much of it was right."""

    spans: int
    correct: int
    overlapping: int

    @property
    def precision(self) -> float:
        return self.correct / self.spans if self.spans else 0.0

    @property
    def lenient_precision(self) -> float:
        return self.overlapping / self.spans if self.spans else 0.0

    def to_dict(self) -> dict[str, float]:
        return {
            "spans": self.spans,
            "correct": self.correct,
            "precision": self.precision,
            "overlapping": self.overlapping,
            "lenient_precision": self.lenient_precision,
        }


@dataclass(frozen=True, slots=True)
class DocTypeScore:
    """Exact micro counts and redaction of the documents of one type."""

    documents: int
    counts: Counts
    redacted_gold: int
    redacted_covered: int

    @property
    def redacted_recall(self) -> float:
        return _share(self.redacted_covered, self.redacted_gold)

    def to_dict(self) -> dict[str, float]:
        return {
            "documents": self.documents,
            **self.counts.to_dict(),
            "redacted_gold": self.redacted_gold,
            "redacted_covered": self.redacted_covered,
            "redacted_recall": self.redacted_recall,
        }


@dataclass(frozen=True)
class SpanScores:
    """The scores of one system on a set of documents (see the module docstring for the definitions).

    ``exact`` and ``lenient`` hold every label of :data:`deid_ds.model.LABELS` (in that order, even when
    absent), then any other label found in the gold or the predictions (so an unknown label shows up as
    false positives rather than vanishing).
    """

    documents: int
    exact: dict[str, Counts]
    lenient: dict[str, Counts]
    redacted_unit: str  # "token" or "char"
    redacted_gold: int
    redacted_covered: int
    documents_with_gold: int
    documents_fully_redacted: int
    per_source: dict[str, SourceScore]
    per_doc_type: dict[str, DocTypeScore]
    # Per evaluated document, exact TP / predicted / gold (for bootstrap resampling over documents).
    doc_ids: tuple[str, ...] = field(repr=False, default=())
    doc_counts: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 3), dtype=np.int64))
    # The same per document and per label of ``exact`` (documents × labels × 3), for per-label intervals.
    doc_label_counts: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0, 3), dtype=np.int64))

    @property
    def micro(self) -> Counts:
        return _sum_counts(self.exact.values())

    @property
    def lenient_micro(self) -> Counts:
        return _sum_counts(self.lenient.values())

    @property
    def macro_f1(self) -> float:
        return _macro_f1(self.exact)

    @property
    def lenient_macro_f1(self) -> float:
        return _macro_f1(self.lenient)

    @property
    def redacted_recall(self) -> float:
        return _share(self.redacted_covered, self.redacted_gold)

    @property
    def fully_redacted_share(self) -> float:
        return _share(self.documents_fully_redacted, self.documents_with_gold)

    def bootstrap_micro_f1(self, n: int = 1000, seed: int = 0, confidence: float = 0.95) -> tuple[float, float]:
        """Percentile bootstrap interval of the exact micro F1, resampling documents (see the module function)."""
        return _bootstrap(self.doc_counts[None], n, seed, confidence)[0]

    def to_dict(self) -> dict:
        """Every count and score, JSON-serialisable (plain ints, floats and strings; no NaN)."""
        return {
            "documents": self.documents,
            "exact": {
                "per_label": {label: c.to_dict() for label, c in self.exact.items()},
                "micro": self.micro.to_dict(),
                "macro_f1": self.macro_f1,
            },
            "lenient": {
                "per_label": {label: c.to_dict() for label, c in self.lenient.items()},
                "micro": self.lenient_micro.to_dict(),
                "macro_f1": self.lenient_macro_f1,
            },
            "redacted": {
                "unit": self.redacted_unit,
                "gold": self.redacted_gold,
                "covered": self.redacted_covered,
                "recall": self.redacted_recall,
            },
            "fully_redacted": {
                "documents_with_gold": self.documents_with_gold,
                "documents": self.documents_fully_redacted,
                "share": self.fully_redacted_share,
            },
            "per_source": {source: s.to_dict() for source, s in self.per_source.items()},
            "per_doc_type": {doc_type: s.to_dict() for doc_type, s in self.per_doc_type.items()},
        }

    def table(self) -> str:
        """The printed report: per-label table, summary, per document type, per source (blank-line separated)."""
        rows = []
        for label, c in self.exact.items():
            lenient = self.lenient[label]
            rows.append([label, c.gold, c.predicted, c.tp, c.precision, c.recall, c.f1, lenient.f1])
        micro, lenient_micro = self.micro, self.lenient_micro
        rows.append(
            ["micro", micro.gold, micro.predicted, micro.tp, micro.precision, micro.recall, micro.f1, lenient_micro.f1]
        )
        sections = [
            format_table(
                ["label", "gold", "pred", "TP", "P", "R", "F1", "lenient F1"],
                rows,
                title=f"Exact-span scores on {self.documents:,} documents (lenient = overlap, same label, one-to-one)",
            )
        ]
        unit = "token" if self.redacted_unit == "token" else "character"
        summary = [
            ["micro P / R / F1 (exact)", f"{micro.precision:.3f} / {micro.recall:.3f} / {micro.f1:.3f}"],
            ["macro F1 (exact)", f"{self.macro_f1:.3f}"],
            [
                "micro P / R / F1 (lenient)",
                f"{lenient_micro.precision:.3f} / {lenient_micro.recall:.3f} / {lenient_micro.f1:.3f}",
            ],
            [
                f"{unit} recall, label-blind (redacted)",
                f"{self.redacted_recall:.3f} ({self.redacted_covered:,} of {self.redacted_gold:,} {unit}s)",
            ],
            [
                "fully redacted documents",
                (
                    f"{self.fully_redacted_share:.3f} ({self.documents_fully_redacted:,} of "
                    f"{self.documents_with_gold:,} with gold)"
                ),
            ],
        ]
        sections.append(format_table(["metric", "value"], summary))
        if self.per_doc_type:
            rows = [
                [
                    t,
                    s.documents,
                    s.counts.gold,
                    s.counts.predicted,
                    s.counts.tp,
                    s.counts.precision,
                    s.counts.recall,
                    s.counts.f1,
                    s.redacted_recall,
                ]
                for t, s in self.per_doc_type.items()
            ]
            sections.append(
                format_table(["document type", "docs", "gold", "pred", "TP", "P", "R", "F1", "redacted"], rows)
            )
        if self.per_source:
            rows = [[name, s.spans, s.correct, s.precision, s.lenient_precision] for name, s in self.per_source.items()]
            sections.append(format_table(["source", "spans", "correct", "precision", "overlap"], rows))
        return "\n\n".join(sections)


def _sum_counts(counts: Iterable[Counts]) -> Counts:
    items = list(counts)
    return Counts(sum(c.tp for c in items), sum(c.predicted for c in items), sum(c.gold for c in items))


# --------------------------------------------------------------------------------------------------
# Input normalisation


def _identifiers(values: Iterable[object]) -> list[str]:
    """Document ids as strings the way the notes reader makes them (``12``, ``"12"``, ``12.0`` → ``"12"``)."""
    return [as_identifier(v) for v in values]


def _id_column(series: pd.Series) -> pd.Series:
    """Vectorised :func:`_identifiers`: convert each distinct value once."""
    uniques = pd.unique(series.to_numpy(dtype=object))
    mapping = dict(zip(uniques, _identifiers(uniques)))
    return pd.Series([mapping[v] for v in series.to_numpy(dtype=object)], index=series.index, dtype=object)


def _spans(frame: pd.DataFrame | None, name: str, columns: Iterable[str] = _SPAN_COLUMNS) -> pd.DataFrame:
    """A spans frame with the needed columns, ids as strings, offsets as int64 (refused if invalid)."""
    columns = tuple(columns)
    if frame is None or (len(frame) == 0 and not set(columns) <= set(frame.columns)):
        frame = pd.DataFrame({c: [] for c in columns})  # "nothing predicted" may come as a bare empty frame
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(
            f"{name}: column(s) {', '.join(missing)} not found (columns: {', '.join(map(str, frame.columns))})"
        )
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    out["id_document"] = _id_column(frame["id_document"].reset_index(drop=True))
    if "label" in columns:
        out["label"] = frame["label"].reset_index(drop=True).astype(str).to_numpy(dtype=object)
    for column in ("html_start", "html_end"):
        values = pd.to_numeric(frame[column].reset_index(drop=True), errors="coerce")
        if values.isna().any():
            raise InputError(f"{name}: {column} has missing or non-numeric values")
        out[column] = values.astype("int64")
    if len(out) and (out["html_start"].min() < 0 or out["html_end"].max() >= _SCALE):
        raise InputError(f"{name}: offsets must lie between 0 and 2**32")
    if "source" in frame.columns:
        source = frame["source"].reset_index(drop=True).astype(object)
        out["source"] = (
            source.where(source.notna() & (source.astype(str) != ""), _NO_SOURCE).astype(str).to_numpy(dtype=object)
        )
    return out


def _document_list(documents: Iterable[str] | None, *frames: pd.DataFrame) -> list[str]:
    """The evaluated documents: those given (deduplicated, in order), else every id of the frames, sorted."""
    if documents is not None:
        return list(dict.fromkeys(i for i in _identifiers(documents) if i is not None))
    ids: set[str] = set()
    for frame in frames:
        ids.update(i for i in frame["id_document"].unique() if i is not None)
    return sorted(ids)


def _restrict(frame: pd.DataFrame, codes: Mapping[str, int]) -> pd.DataFrame:
    """Keep the rows of evaluated documents, with their document code (index in the document list)."""
    doc = frame["id_document"].map(codes)
    keep = doc.notna().to_numpy()
    out = frame.loc[keep].reset_index(drop=True)
    out["doc"] = doc[keep].astype("int64").to_numpy()
    return out


# --------------------------------------------------------------------------------------------------
# Interval machinery on composite keys (group * 2**32 + offset)


def _keys(group: np.ndarray, offset: np.ndarray) -> np.ndarray:
    return group.astype(np.int64) * _SCALE + offset.astype(np.int64)


def _union(group: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge the intervals of each group into disjoint sorted intervals, returned as composite keys.

    Touching intervals (``[0, 5)`` and ``[5, 9)``) are merged too; that changes no coverage.
    """
    keep = end > start
    s = _keys(group[keep], start[keep])
    e = _keys(group[keep], end[keep])
    if not len(s):
        return s, e
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)  # keys never cross groups: an interval's end key < next group's keys
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > reach[:-1]
    starts = s[new]
    ends = reach[np.append(np.flatnonzero(new[1:]), len(s) - 1)]
    return starts, ends


def _overlaps_union(
    group: np.ndarray, start: np.ndarray, end: np.ndarray, union: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """For each interval, whether it overlaps (by at least one character) a merged interval of its group."""
    u_start, u_end = union
    if not len(start):
        return np.zeros(0, dtype=bool)
    if not len(u_start):
        return np.zeros(len(start), dtype=bool)
    s, e = _keys(group, start), _keys(group, end)
    i = np.searchsorted(u_end, s, side="right")  # first merged interval ending after the start
    inside = i < len(u_start)
    hit = np.zeros(len(s), dtype=bool)
    hit[inside] = u_start[i[inside]] < e[inside]
    return hit & (end > start)


def _intersection_length(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Per interval of the disjoint union ``a``, the number of its characters inside the union ``b``."""
    a_start, a_end = a
    b_start, b_end = b
    if not len(a_start) or not len(b_start):
        return np.zeros(len(a_start), dtype=np.int64)
    lo = np.searchsorted(b_end, a_start, side="right")
    hi = np.searchsorted(b_start, a_end, side="left")
    n = np.maximum(hi - lo, 0)
    rows, cols = _expand(lo, n)
    length = np.minimum(a_end[rows], b_end[cols]) - np.maximum(a_start[rows], b_start[cols])
    return np.bincount(rows, weights=np.maximum(length, 0), minlength=len(a_start)).astype(np.int64)


def _expand(lo: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranges ``[lo[i], lo[i] + n[i])`` flattened: (row index i, position) pairs, without a Python loop."""
    rows = np.repeat(np.arange(len(lo)), n)
    if not len(rows):
        return rows, rows.copy()
    first = np.repeat(np.cumsum(n) - n, n)
    cols = lo[rows] + (np.arange(len(rows)) - first)
    return rows, cols


def _overlap_pairs(
    a_group: np.ndarray,
    a_start: np.ndarray,
    a_end: np.ndarray,
    b_group: np.ndarray,
    b_start: np.ndarray,
    b_end: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (a, b) pair of intervals of the same group overlapping by ≥ 1 character, with the overlap.

    ``b`` is sorted by start; a ``b`` interval can only overlap ``a`` if it starts in
    ``(a_start - longest b, a_end)``, a contiguous range found by two sorted searches. Works for
    overlapping or nested intervals on either side.
    """
    if not len(a_start) or not len(b_start):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    b_key = _keys(b_group, b_start)
    order = np.argsort(b_key, kind="stable")
    b_key = b_key[order]
    longest = np.int64(max(int((b_end - b_start).max()), 1))
    lo = np.searchsorted(b_key, _keys(a_group, a_start) - longest, side="right")
    hi = np.searchsorted(b_key, _keys(a_group, a_end), side="left")
    rows, pos = _expand(lo, np.maximum(hi - lo, 0))
    cols = order[pos]
    overlap = np.minimum(a_end[rows], b_end[cols]) - np.maximum(a_start[rows], b_start[cols])
    keep = (overlap > 0) & (a_group[rows] == b_group[cols])
    return rows[keep], cols[keep], overlap[keep]


def _greedy_matching(gold: np.ndarray, pred: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One-to-one matching, greedy by decreasing weight (ties: lower gold, then lower predicted index).

    Vectorised as rounds of "locally dominant" pairs: a pair ranked first among the remaining pairs of its
    gold span *and* of its predicted span is one the sequential greedy would take; take them all, drop
    every pair touching a matched span, repeat. With a strict total order this gives exactly the
    sequential greedy matching, usually in one or two rounds.
    """
    order = np.lexsort((pred, gold, -weight))
    gold, pred = gold[order], pred[order]
    matched_gold: list[np.ndarray] = []
    matched_pred: list[np.ndarray] = []
    while len(gold):
        first_of_gold = np.zeros(len(gold), dtype=bool)
        first_of_gold[np.unique(gold, return_index=True)[1]] = True
        first_of_pred = np.zeros(len(gold), dtype=bool)
        first_of_pred[np.unique(pred, return_index=True)[1]] = True
        take = first_of_gold & first_of_pred
        matched_gold.append(gold[take])
        matched_pred.append(pred[take])
        free = ~(np.isin(gold, gold[take]) | np.isin(pred, pred[take]))
        gold, pred = gold[free], pred[free]
    if not matched_gold:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(matched_gold), np.concatenate(matched_pred)


# --------------------------------------------------------------------------------------------------
# Scoring


def _labels_in(*frames: pd.DataFrame) -> list[str]:
    """The eight labels in report order, then any other label found, sorted."""
    found: set[str] = set()
    for frame in frames:
        found.update(frame["label"].unique())
    return list(LABELS) + sorted(found - set(LABELS))


def _per_label(tp: pd.Series, predicted: pd.Series, gold: pd.Series, labels: list[str]) -> dict[str, Counts]:
    return {
        label: Counts(int(tp.get(label, 0)), int(predicted.get(label, 0)), int(gold.get(label, 0))) for label in labels
    }


def score_spans(
    gold: pd.DataFrame,
    predicted: pd.DataFrame,
    *,
    tokens: pd.DataFrame | None = None,
    documents: Iterable[str] | None = None,
    doc_types: Mapping[str, str] | None = None,
) -> SpanScores:
    """Score ``predicted`` spans against ``gold`` spans (definitions and conventions: module docstring).

    ``gold`` and ``predicted`` have ``id_document``, ``label``, ``html_start``, ``html_end`` (ends exclusive,
    offsets into each note's HTML); ``predicted`` may have ``source``. ``tokens`` (``id_document``,
    ``html_start``, ``html_end``, one row per token of the evaluated notes) makes redaction token-level,
    else it is character-level. ``documents`` restricts the evaluation (default: every id in gold or
    predicted); ``doc_types`` maps document ids to types for a per-type breakdown. Ids compare as strings.
    """
    gold_frame = _spans(gold, "gold")
    pred_frame = _spans(predicted, "predicted")
    doc_ids = _document_list(documents, gold_frame, pred_frame)
    codes = {doc_id: i for i, doc_id in enumerate(doc_ids)}
    gold_frame = _restrict(gold_frame, codes)
    pred_frame = _restrict(pred_frame, codes)
    n_docs = len(doc_ids)
    labels = _labels_in(gold_frame, pred_frame)
    label_code = {label: i for i, label in enumerate(labels)}

    key = ["doc", "label", "html_start", "html_end"]
    gold_u = gold_frame[key].drop_duplicates(ignore_index=True)
    pred_u = pred_frame[key].drop_duplicates(ignore_index=True)
    hits = pred_u.merge(gold_u, on=key, how="inner")

    # Exact, per label and per document.
    exact = _per_label(
        hits.groupby("label").size(), pred_u.groupby("label").size(), gold_u.groupby("label").size(), labels
    )
    doc_counts = np.zeros((n_docs, 3), dtype=np.int64)  # tp, predicted, gold
    doc_label_counts = np.zeros((n_docs, len(labels), 3), dtype=np.int64)
    for column, frame in enumerate((hits, pred_u, gold_u)):
        doc_counts[:, column] = np.bincount(frame["doc"].to_numpy(dtype=np.int64), minlength=n_docs)[:n_docs]
        cell = frame["doc"].to_numpy(dtype=np.int64) * len(labels) + frame["label"].map(label_code).to_numpy(
            dtype=np.int64
        )
        size = n_docs * len(labels)
        doc_label_counts[:, :, column] = np.bincount(cell, minlength=size)[:size].reshape(n_docs, len(labels))

    # Lenient: same label, overlapping, one-to-one greedy by overlap.
    n_labels = len(labels)

    def groups(frame: pd.DataFrame) -> np.ndarray:
        return frame["doc"].to_numpy(dtype=np.int64) * n_labels + frame["label"].map(label_code).to_numpy(
            dtype=np.int64
        )

    g_group, p_group = groups(gold_u), groups(pred_u)
    g_start, g_end = gold_u["html_start"].to_numpy(), gold_u["html_end"].to_numpy()
    p_start, p_end = pred_u["html_start"].to_numpy(), pred_u["html_end"].to_numpy()
    gi, pi, overlap = _overlap_pairs(g_group, g_start, g_end, p_group, p_start, p_end)
    matched_gold, _ = _greedy_matching(gi, pi, overlap)
    lenient_tp = gold_u["label"].iloc[matched_gold].value_counts()
    lenient = _per_label(lenient_tp, pred_u.groupby("label").size(), gold_u.groupby("label").size(), labels)

    # Label-blind redaction.
    gold_docs = gold_frame["doc"].to_numpy(dtype=np.int64)
    pred_docs = pred_frame["doc"].to_numpy(dtype=np.int64)
    gold_union = _union(gold_docs, gold_frame["html_start"].to_numpy(), gold_frame["html_end"].to_numpy())
    pred_union = _union(pred_docs, pred_frame["html_start"].to_numpy(), pred_frame["html_end"].to_numpy())
    if tokens is not None:
        unit = "token"
        token_frame = _restrict(_spans(tokens, "tokens", ("id_document", "html_start", "html_end")), codes)
        t_doc = token_frame["doc"].to_numpy(dtype=np.int64)
        t_start, t_end = token_frame["html_start"].to_numpy(), token_frame["html_end"].to_numpy()
        in_gold = _overlaps_union(t_doc, t_start, t_end, gold_union)
        covered = in_gold & _overlaps_union(t_doc, t_start, t_end, pred_union)
        per_doc_gold = np.bincount(t_doc[in_gold], minlength=n_docs)[:n_docs]
        per_doc_covered = np.bincount(t_doc[covered], minlength=n_docs)[:n_docs]
    else:
        unit = "char"
        union_doc = gold_union[0] // _SCALE
        lengths = gold_union[1] - gold_union[0]
        inside = _intersection_length(gold_union, pred_union)
        per_doc_gold = np.bincount(union_doc, weights=lengths, minlength=n_docs)[:n_docs].astype(np.int64)
        per_doc_covered = np.bincount(union_doc, weights=inside, minlength=n_docs)[:n_docs].astype(np.int64)
    has_gold = doc_counts[:, 2] > 0
    fully = has_gold & (per_doc_gold > 0) & (per_doc_covered == per_doc_gold)

    # Per source: rows as produced, exact and overlapping correctness.
    per_source: dict[str, SourceScore] = {}
    if "source" in pred_frame.columns and len(pred_frame):
        correct = pred_frame[key].merge(gold_u.assign(_hit=True), on=key, how="left")["_hit"].notna().to_numpy()
        overlapping = np.zeros(len(pred_frame), dtype=bool)
        rows, _, _ = _overlap_pairs(
            groups(pred_frame),
            pred_frame["html_start"].to_numpy(),
            pred_frame["html_end"].to_numpy(),
            g_group,
            g_start,
            g_end,
        )
        overlapping[rows] = True
        table = pd.DataFrame(
            {"source": pred_frame["source"].to_numpy(), "correct": correct, "overlapping": overlapping}
        )
        summary = table.groupby("source", sort=False).agg(
            spans=("correct", "size"), correct=("correct", "sum"), overlapping=("overlapping", "sum")
        )
        summary = summary.reset_index().sort_values(["spans", "source"], ascending=[False, True])
        per_source = {
            str(row.source): SourceScore(int(row.spans), int(row.correct), int(row.overlapping))
            for row in summary.itertuples(index=False)
        }

    # Per document type.
    per_doc_type: dict[str, DocTypeScore] = {}
    if doc_types is not None:
        types = {
            as_identifier(k): (
                str(v) if v is not None and not (isinstance(v, float) and np.isnan(v)) else _UNKNOWN_TYPE
            )
            for k, v in doc_types.items()
        }
        doc_type = pd.Series([types.get(d, _UNKNOWN_TYPE) for d in doc_ids], dtype=object)
        frame = pd.DataFrame(doc_counts, columns=["tp", "predicted", "gold"])
        frame["docs"] = 1
        frame["redacted_gold"] = per_doc_gold
        frame["redacted_covered"] = per_doc_covered
        frame["type"] = doc_type
        for name, row in frame.groupby("type", sort=True).sum().iterrows():
            per_doc_type[str(name)] = DocTypeScore(
                int(row["docs"]),
                Counts(int(row["tp"]), int(row["predicted"]), int(row["gold"])),
                int(row["redacted_gold"]),
                int(row["redacted_covered"]),
            )

    return SpanScores(
        documents=n_docs,
        exact=exact,
        lenient=lenient,
        redacted_unit=unit,
        redacted_gold=int(per_doc_gold.sum()),
        redacted_covered=int(per_doc_covered.sum()),
        documents_with_gold=int(has_gold.sum()),
        documents_fully_redacted=int(fully.sum()),
        per_source=per_source,
        per_doc_type=per_doc_type,
        doc_ids=tuple(doc_ids),
        doc_counts=doc_counts,
        doc_label_counts=doc_label_counts,
    )


# --------------------------------------------------------------------------------------------------
# Bootstrap and comparison


def _bootstrap(doc_counts: np.ndarray, n: int, seed: int, confidence: float) -> list[tuple[float, float]]:
    """Percentile intervals of micro F1 for systems ``doc_counts[s]`` (documents × [tp, pred, gold]).

    The same resamples of documents serve every system (paired bootstrap), drawn in blocks so memory stays
    bounded for large document sets. Micro F1 of a resample is 2 TP / (predicted + gold) (1.0 if both are 0).
    """
    f1 = _bootstrap_f1(doc_counts, n, seed)
    tail = _tail(confidence)
    return [(float(np.percentile(f, tail)), float(np.percentile(f, 100 - tail))) for f in f1]


def _tail(confidence: float) -> float:
    """The percentile cut off each side of a two-sided ``confidence`` interval."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence}: expected a share strictly between 0 and 1")
    return (1.0 - confidence) / 2 * 100


def _bootstrap_f1(doc_counts: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Micro F1 of ``n`` document resamples for each system: an array systems × n."""
    if n < 1:
        raise ValueError(f"bootstrap resamples: {n}, expected at least 1")
    systems, n_docs, _ = doc_counts.shape
    rng = np.random.default_rng(seed)
    out = np.empty((systems, n), dtype=np.float64)
    if n_docs == 0:
        out[:] = 1.0
        return out
    tp = doc_counts[:, :, 0].astype(np.float64)
    total = (doc_counts[:, :, 1] + doc_counts[:, :, 2]).astype(np.float64)
    block = max(1, min(n, 4_000_000 // n_docs))
    for begin in range(0, n, block):
        size = min(block, n - begin)
        # How many times each document is drawn in each resample: sums become a matrix product.
        weights = rng.multinomial(n_docs, np.full(n_docs, 1.0 / n_docs), size=size).astype(np.float64).T  # docs × size
        tp_sum = tp @ weights
        total_sum = total @ weights
        with np.errstate(divide="ignore", invalid="ignore"):
            out[:, begin : begin + size] = np.where(
                total_sum > 0, 2 * tp_sum / np.where(total_sum > 0, total_sum, 1), 1.0
            )
    return out


def bootstrap_micro_f1(
    gold: pd.DataFrame,
    predicted: pd.DataFrame,
    documents: Iterable[str] | None = None,
    n: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap ``confidence`` interval of the exact micro F1, resampling documents.

    Documents, not spans, are resampled because errors cluster by document (a missed patient name recurs
    through a note). Deterministic for a given ``seed``; documents without any span count as drawn too.
    """
    return score_spans(gold, predicted, documents=documents).bootstrap_micro_f1(n=n, seed=seed, confidence=confidence)


@dataclass(frozen=True)
class SystemComparison:
    """Several systems scored on the same documents, with paired bootstrap intervals on micro F1.

    ``delta_ci[name]`` is the interval of ``F1(name) - F1(first system)`` over the same resamples: when it
    excludes 0, the difference is not a matter of which documents happened to be evaluated.
    ``label_ci[name][label]`` is the interval of the label's exact F1 over the same resamples again (the
    figure's error bars): a label with few gold entities gets a wide one, which a bare F1 hides.
    """

    scores: dict[str, SpanScores]
    ci: dict[str, tuple[float, float]]
    delta_ci: dict[str, tuple[float, float]]
    confidence: float
    label_ci: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)

    def table(self) -> str:
        """Side-by-side summary, then per-label exact F1 per system."""
        percent = f"{self.confidence * 100:g}%"
        first = next(iter(self.scores), None)
        rows = []
        for name, s in self.scores.items():
            low, high = self.ci[name]
            delta = "" if name == first else "[{:+.3f}, {:+.3f}]".format(*self.delta_ci[name])
            micro = s.micro
            rows.append(
                [
                    name,
                    micro.precision,
                    micro.recall,
                    micro.f1,
                    f"[{low:.3f}, {high:.3f}]",
                    delta,
                    s.macro_f1,
                    s.lenient_micro.f1,
                    s.redacted_recall,
                    s.fully_redacted_share,
                ]
            )
        headers = [
            "system",
            "P",
            "R",
            "F1",
            f"F1 {percent} CI",
            f"ΔF1 vs {first}",
            "macro F1",
            "lenient F1",
            "redacted",
            "fully red.",
        ]
        sections = [format_table(headers, rows, title="Exact-span micro scores (bootstrap over documents)")]
        if self.scores:
            labels = list(next(iter(self.scores.values())).exact)
            for s in self.scores.values():
                labels += [label for label in s.exact if label not in labels]
            rows = [
                [label, *(s.exact[label].f1 if label in s.exact else 1.0 for s in self.scores.values())]
                for label in labels
            ]
            sections.append(format_table(["F1 per label", *self.scores], rows))
        return "\n\n".join(sections)

    def to_dict(self) -> dict:
        return {
            "confidence": self.confidence,
            "systems": {
                name: {
                    **s.to_dict(),
                    "micro_f1_ci": list(self.ci[name]),
                    "delta_f1_ci": list(self.delta_ci[name]),
                    "per_label_f1_ci": {label: list(ci) for label, ci in self.label_ci.get(name, {}).items()},
                }
                for name, s in self.scores.items()
            },
        }


def compare_systems(
    systems: Mapping[str, pd.DataFrame],
    gold: pd.DataFrame,
    *,
    tokens: pd.DataFrame | None = None,
    documents: Iterable[str] | None = None,
    doc_types: Mapping[str, str] | None = None,
    n_bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> SystemComparison:
    """Score several systems (e.g. ``{"rules": spans, "model": spans}``) on the same documents.

    The documents default to every id of the gold and of *all* systems, so no system is judged on a
    different set. Intervals use the same document resamples for every system (paired), and the first
    system is the reference of the F1 differences.
    """
    gold_frame = _spans(gold, "gold")
    frames = {name: _spans(frame, f"predicted ({name})") for name, frame in systems.items()}
    doc_ids = _document_list(documents, gold_frame, *frames.values())
    scores = {
        name: score_spans(gold_frame, frame, tokens=tokens, documents=doc_ids, doc_types=doc_types)
        for name, frame in frames.items()
    }
    if not scores:
        return SystemComparison({}, {}, {}, confidence)
    counts = np.stack([s.doc_counts for s in scores.values()])
    tail = _tail(confidence)
    f1 = _bootstrap_f1(counts, n_bootstrap, seed)

    def interval(values: np.ndarray) -> tuple[float, float]:
        return float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))

    names = list(scores)
    ci = {name: interval(f1[i]) for i, name in enumerate(names)}
    delta_ci = {name: interval(f1[i] - f1[0]) for i, name in enumerate(names)}
    label_ci: dict[str, dict[str, tuple[float, float]]] = {}
    for name, s in scores.items():
        # Each label as a system of its own, over the same resamples (same seed, same number of documents).
        per_label = np.moveaxis(s.doc_label_counts, 1, 0)  # labels × documents × 3
        label_f1 = _bootstrap_f1(per_label, n_bootstrap, seed)
        label_ci[name] = {label: interval(label_f1[j]) for j, label in enumerate(s.exact)}
    return SystemComparison(scores, ci, delta_ci, confidence, label_ci)
