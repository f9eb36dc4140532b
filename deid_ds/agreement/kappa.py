"""Fleiss' kappa for a varying number of raters, its per-category form, Cohen's kappa, and a bootstrap.

**Fleiss' kappa** (Fleiss 1971) takes a matrix of counts ``n_ij``: how many raters put subject ``i`` in
category ``j``. With ``n_i = Σ_j n_ij`` raters on subject ``i`` (here: annotators on a token),

* observed agreement ``P̄ = Σ_i Σ_j n_ij (n_ij − 1) / Σ_i n_i (n_i − 1)``: the share of agreeing ordered
  pairs of ratings among all pairs of ratings of the same subject;
* category shares ``p_j = Σ_i n_ij / Σ_i n_i`` and chance agreement ``P̄_e = Σ_j p_j²``;
* ``κ = (P̄ − P̄_e) / (1 − P̄_e)``.

With a constant number of raters ``n`` this is exactly Fleiss' statistic (``P̄`` is then the mean of the
per-subject ``P_i``), and :func:`fleiss_kappa` hands that case to statsmodels' ``fleiss_kappa``. With a
varying number (an item rated by three annotators next to items rated by two, as in overlapping
campaign assignments), averaging the per-subject ``P_i`` would give a two-rater token as much weight as
a five-rater one; pooling the *pairs* instead (the choice here, the pairwise generalisation used by
Conger 1980 and close to Krippendorff's alpha for nominal data, which differs by a small-sample
correction and the per-unit weighting) weighs each subject by its number of rater pairs, and keeps
Fleiss' identity that the overall kappa is the ``p_j q_j``-weighted mean of the per-category kappas.
Subjects rated by fewer than two raters carry no pair and are ignored.

**Category-specific kappa** (Fleiss 1971, eq. 11 generalised the same way):
``κ_j = 1 − Σ_i n_ij (n_i − n_ij) / (Σ_i n_i (n_i − 1) · p_j q_j)``, ``q_j = 1 − p_j``: agreement on
"is it ``j`` or not". **Cohen's kappa** for two raters: statsmodels' ``cohens_kappa`` on their
contingency table.

**Undefined values.** When chance agreement is 1 (every rating in one category: nothing to agree or
disagree on), kappa is 0/0; the functions return ``None`` (``null`` in JSON) rather than NaN.

**Bootstrap.** Tokens of a document are not independent (a patient's name recurs, a document type's
layout repeats), so intervals resample *documents* with replacement. Kappa depends on the data through
per-document sums (disagreeing pairs, pairs, ratings per category), so a resample's kappa is a weighted
sum of those: all resamples are one matrix product of multinomial document counts, percentile interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deid_ds.evaluation.scoring import _tail


def _as_counts(counts: np.ndarray) -> np.ndarray:
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2:
        raise ValueError("expected a subjects × categories matrix of counts")
    if (counts < 0).any():
        raise ValueError("counts must be non-negative")
    raters = counts.sum(axis=1)
    return counts[raters >= 2]


@dataclass(frozen=True)
class KappaSums:
    """Sufficient statistics of Fleiss' kappa: disagreeing pairs, pairs, ratings and per-category
    disagreements. Additive over subjects, so documents can be summed and resampled."""

    disagreement: float  # Σ_i (n_i² − Σ_j n_ij²)
    pairs: float  # Σ_i n_i (n_i − 1)
    ratings: np.ndarray  # Σ_i n_ij, per category
    category_disagreement: np.ndarray  # Σ_i n_ij (n_i − n_ij), per category

    @classmethod
    def of(cls, counts: np.ndarray) -> KappaSums:
        counts = _as_counts(counts)
        raters = counts.sum(axis=1)
        per_category = counts * (raters[:, None] - counts)
        return cls(
            float(per_category.sum()),
            float((raters * (raters - 1)).sum()),
            counts.sum(axis=0),
            per_category.sum(axis=0),
        )

    def kappa(self) -> float | None:
        return _kappa(self.disagreement, self.pairs, self.ratings)

    def category_kappas(self) -> list[float | None]:
        total = self.ratings.sum()
        if total == 0 or self.pairs == 0:
            return [None] * len(self.ratings)
        p = self.ratings / total
        spread = p * (1 - p)
        return [
            None if s <= 1e-15 else float(1 - d / (self.pairs * s)) for d, s in zip(self.category_disagreement, spread)
        ]


def _kappa(disagreement: float, pairs: float, ratings: np.ndarray) -> float | None:
    total = ratings.sum()
    if pairs == 0 or total == 0:
        return None
    p = ratings / total
    chance_disagreement = 1.0 - float((p * p).sum())
    if chance_disagreement <= 1e-15:
        return None
    return float(1.0 - (disagreement / pairs) / chance_disagreement)


def fleiss_kappa_varying(counts: np.ndarray) -> float | None:
    """Fleiss' kappa, generalised to a varying number of raters per subject (module docstring)."""
    return KappaSums.of(counts).kappa()


def fleiss_kappa(counts: np.ndarray) -> float | None:
    """Fleiss' kappa of a subjects × categories count matrix: statsmodels' implementation when every
    subject has the same number of raters, :func:`fleiss_kappa_varying` otherwise (they agree on the
    first case; tests check it). Subjects with fewer than two raters are left out."""
    counts = _as_counts(counts)
    if len(counts) == 0:
        return None
    raters = counts.sum(axis=1)
    value = fleiss_kappa_varying(counts)
    if value is None or raters.min() != raters.max():
        return value
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

    return float(statsmodels_fleiss(counts[:, counts.sum(axis=0) > 0], method="fleiss"))


def category_kappas(counts: np.ndarray) -> list[float | None]:
    """Fleiss' category-specific kappa of every column of ``counts`` (``None`` for an unused category)."""
    return KappaSums.of(counts).category_kappas()


def cohen_kappa(table: np.ndarray) -> float | None:
    """Cohen's kappa of a square contingency table (rater A's category × rater B's), by statsmodels."""
    table = np.asarray(table, dtype=np.float64)
    total = table.sum()
    if total == 0:
        return None
    chance = float((table.sum(axis=0) * table.sum(axis=1)).sum()) / total**2
    if chance >= 1 - 1e-15:
        return None
    from statsmodels.stats.inter_rater import cohens_kappa

    return float(cohens_kappa(table, return_results=False))


@dataclass(frozen=True)
class BootstrapKappa:
    """Percentile intervals of the overall and per-category kappas (``None`` where undefined)."""

    low: float | None
    high: float | None
    category_low: list[float | None]
    category_high: list[float | None]
    resamples: int


def bootstrap_kappa(
    unit: np.ndarray,
    counts: np.ndarray,
    n: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapKappa:
    """Bootstrap Fleiss' kappa (overall and per category) resampling *units* (documents).

    ``unit[i]`` is the unit (integer code ``0..U-1``) of subject ``i``, ``counts`` the subjects ×
    categories matrix. Deterministic for a given ``seed``; resamples where kappa is undefined are left
    out of the percentiles.
    """
    if n < 1:
        raise ValueError(f"bootstrap resamples: {n}, expected at least 1")
    tail = _tail(confidence)
    counts = np.asarray(counts, dtype=np.float64)
    unit = np.asarray(unit, dtype=np.int64)
    keep = counts.sum(axis=1) >= 2
    counts, unit = counts[keep], unit[keep]
    k = counts.shape[1]
    if len(counts) == 0:
        return BootstrapKappa(None, None, [None] * k, [None] * k, n)
    units = int(unit.max()) + 1
    raters = counts.sum(axis=1)
    per_category = counts * (raters[:, None] - counts)
    # Per unit: [disagreement, pairs, ratings per category..., category disagreement per category...]
    stats = np.zeros((units, 2 + 2 * k))
    np.add.at(stats[:, 0], unit, per_category.sum(axis=1))
    np.add.at(stats[:, 1], unit, raters * (raters - 1))
    np.add.at(stats[:, 2 : 2 + k], unit, counts)
    np.add.at(stats[:, 2 + k :], unit, per_category)
    rng = np.random.default_rng(seed)
    overall = np.empty(n)
    categories = np.empty((n, k))
    block = max(1, min(n, 4_000_000 // units))
    for begin in range(0, n, block):
        size = min(block, n - begin)
        weights = rng.multinomial(units, np.full(units, 1.0 / units), size=size).astype(np.float64)  # size × units
        sums = weights @ stats  # size × (2 + 2k)
        disagreement, pairs = sums[:, 0], sums[:, 1]
        ratings, category_disagreement = sums[:, 2 : 2 + k], sums[:, 2 + k :]
        p = ratings / np.maximum(ratings.sum(axis=1, keepdims=True), 1e-300)
        spread = p * (1 - p)
        chance = spread.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            overall[begin : begin + size] = np.where(
                (chance > 1e-15) & (pairs > 0), 1 - disagreement / pairs / chance, np.nan
            )
            categories[begin : begin + size] = np.where(
                (spread > 1e-15) & (pairs[:, None] > 0), 1 - category_disagreement / (pairs[:, None] * spread), np.nan
            )

    def interval(values: np.ndarray) -> tuple[float | None, float | None]:
        values = values[~np.isnan(values)]
        if len(values) == 0:
            return None, None
        return float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))

    low, high = interval(overall)
    bounds = [interval(categories[:, j]) for j in range(k)]
    return BootstrapKappa(low, high, [b[0] for b in bounds], [b[1] for b in bounds], n)
