"""Communes drawn among similar ones: the local exponential mechanism of Tchouka, Couchot and Laiymani.

``deidentify --privacy dp`` replaces a commune by one of its ``k`` most similar communes (geography and size),
drawn with probability ``P(j) ∝ exp(ε·U(i, j) / 2)``, ``U(i, j) = 1 − d(i, j)``, instead of uniformly from
all of France: a city of a million stays a large city nearby, a coastal village a village of the same coast.

**The distance.** ``d(i, j) = W_GEO · km(i, j) / GEO_SCALE_KM + W_SIZE · |ln(s_i / s_j)| / SIZE_SCALE`` with
``km`` the great-circle (haversine) distance between the centroids and ``s`` the commune's size (its population
when ``build-kb --population`` gave one, else its number of BAN addresses). Each term is a metric and so is
their weighted sum: the triangle inequality the ε·d bound rests on holds. The weights are equal and the scales
chosen so that **50 km away counts as much as a factor of 10 in size** (``0.5 · 50/100`` and
``0.5 · ln 10 / ln 100`` are both 0.25): a town is replaced by a town of its own area rather than by one of the
same size across the country, since what a commune tells a reader of a medical note (radon, pollution, the
hospital it depends on) is regional. The seed normalises its features to [0, 1]; here the scales normalise but
do not cap, so that ``d`` keeps growing with distance: a commune of La Réunion, whose ``k`` nearest may
include communes of the mainland when the island has fewer than ``k``, gives them a weight about ``exp(−23·ε)``
times its neighbours' (9,300 km away), so never in practice (and two communes far apart are, rightly, told
apart by the ε·d bound). The medical and
statistical features of the seed (cancer incidence, pollution…) are not in the knowledge base: size is the one
characteristic the BAN (or an INSEE file) gives for every commune.

**The draw.** Among the ``k`` nearest communes by ``d`` (the original excluded: a surrogate is never the
original), the choice is driven by a keyed uniform number (HMAC of the key, the patient's scope and the
commune), so the same commune gets the same surrogate in every note of the patient (the seed's memoisation:
no averaging attack over repeated draws) and a run is reproducible with its key.

**What is promised.** For two communes ``i``, ``i'`` and a surrogate ``y`` both can give,
``P_i(y) / P_i'(y) ≤ exp(ε·d(i, i'))`` (:func:`ratio_bound`, checked on every pair of a random table by the tests).
The seed's proof stops at the numerators; the normalising sums ``Z`` need the ``/ 2`` of the exponent and the
fact that a candidate set is the ``k`` *nearest*: the numerator ratio is at most ``exp(ε·d/2)`` by the triangle
inequality, and ``Z_i' ≤ exp(ε·d/2)·Z_i`` because ``C(i')``, seen from ``i``, weighs no more than ``i``'s own top
``k`` (when ``i ∈ C(i')``, its term ``exp(−ε·d/2)`` is matched by ``i'``'s in ``Z_i``, or is at most the ``k``-th
term of ``Z_i`` when ``i' ∉ C(i)``). What the mechanism does not hide is its locality: a surrogate ``y`` has
probability 0 from a commune that does not have ``y`` among its ``k`` nearest, so it tells that the original is
one of the communes that do (:func:`reverse_neighbours`), never which one for sure; but some surrogates are
among the ``k`` nearest of one commune only, and then give it away (measured by ``benchmarks/dp_places.py``).

**Groups** (``neighbourhood="groups"``, ``Privacy.neighbourhood``) close that gap: the communes are split once
into groups of ``k + 1`` to ``2k + 1`` similar ones (:func:`groups`, from the public table alone) and a commune
is drawn among the others of its group. A surrogate then tells the group, that is at least ``k`` possible
originals, and the same bound holds between any two of them (their candidate sets are the group less each
one: the normalising sums share the term of the pair, and the others compare term by term). The price: a
commune at the edge of its group draws from communes a little farther than its own ``k`` nearest.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

#: Weight of geography and of size in the distance (they sum to 1).
W_GEO = 0.5
W_SIZE = 0.5
#: This many kilometres count 1 in the geographic term.
GEO_SCALE_KM = 100.0
#: A size ratio of ``e ** SIZE_SCALE`` (100) counts 1 in the size term.
SIZE_SCALE = math.log(100.0)
EARTH_RADIUS_KM = 6371.0088

_JOINERS = re.compile(r"[\s\-'’]+")


def commune_key(city_key: str) -> str:
    """One key for every spelling of a commune's folded name: ``moelan-sur-mer`` and ``moelan sur mer``
    (``Moëlan-sur-Mer``, ``MOELAN SUR MER``) are one commune, whatever joins its words."""
    return _JOINERS.sub(" ", city_key).strip()


@dataclass(frozen=True, slots=True)
class Weights:
    """The distance's parameters (module docstring): weights summing to 1 and the two scales."""

    geo: float = W_GEO
    size: float = W_SIZE
    geo_scale_km: float = GEO_SCALE_KM
    size_scale: float = SIZE_SCALE


DEFAULT_WEIGHTS = Weights()


def haversine_km(lat1, lon1, lat2, lon2):
    """Great-circle distance in km between points in degrees (numbers or numpy arrays)."""
    p1, p2 = np.radians(lat1), np.radians(lat2)
    dp, dl = p2 - p1, np.radians(np.asarray(lon2) - np.asarray(lon1))
    a = np.sin(dp / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0)))


def log_size(size) -> np.ndarray:
    """``ln(1 + size)``: a commune of no address still has a finite log."""
    return np.log1p(np.maximum(np.asarray(size, dtype=np.float64), 0.0))


def distance(lat1, lon1, size1, lat2, lon2, size2, weights: Weights = DEFAULT_WEIGHTS):
    """``d`` between two communes (or one and many, as numpy arrays): see the module docstring."""
    geo = haversine_km(lat1, lon1, lat2, lon2) / weights.geo_scale_km
    size = np.abs(log_size(size1) - log_size(size2)) / weights.size_scale
    return weights.geo * geo + weights.size * size


@dataclass(frozen=True)
class CommuneIndex:
    """The communes a run draws from, as arrays (built once per worker from the knowledge base's communes table).

    ``by_key`` maps a commune's folded name (:func:`commune_key`) to its row; homonyms (``Saint-Martin``…) go to
    the largest, the likeliest to be written without its département. ``_nearest`` and ``_group_members`` memoise the
    candidates of a commune (a pure function of the index, the commune and ``k``).
    """

    codes: tuple[str, ...]
    names: tuple[str, ...]
    postcodes: tuple[tuple[str, ...], ...]
    lat: np.ndarray
    lon: np.ndarray
    size: np.ndarray
    weights: Weights = DEFAULT_WEIGHTS
    by_key: dict[str, int] = field(default_factory=dict)
    _nearest: dict[tuple[int, int], tuple[tuple[int, float], ...]] = field(default_factory=dict, repr=False)
    _groups: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    _group_members: dict[tuple[int, int], tuple[tuple[int, float], ...]] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.codes)

    def find(self, city_key: str) -> int | None:
        """The row of a folded commune name, or None for a commune the knowledge base does not know."""
        return self.by_key.get(commune_key(city_key))

    def distances_from(self, i: int) -> np.ndarray:
        """``d(i, j)`` for every commune ``j`` of the index."""
        return distance(self.lat[i], self.lon[i], self.size[i], self.lat, self.lon, self.size, self.weights)


def build_index(
    codes: Sequence[str],
    names: Sequence[str],
    postcodes: Sequence[Sequence[str]],
    lat: Sequence[float],
    lon: Sequence[float],
    size: Sequence[float],
    keys: Sequence[str],
    weights: Weights = DEFAULT_WEIGHTS,
) -> CommuneIndex:
    """A :class:`CommuneIndex` of communes with coordinates (rows without are left out)."""
    rows = [i for i in range(len(codes)) if lat[i] is not None and lon[i] is not None]
    by_key: dict[str, int] = {}
    for position, i in enumerate(rows):
        key = commune_key(keys[i])
        best = by_key.get(key)
        if best is None or (size[i] or 0) > (size[rows[best]] or 0):
            by_key[key] = position
    return CommuneIndex(
        codes=tuple(codes[i] for i in rows),
        names=tuple(names[i] for i in rows),
        postcodes=tuple(tuple(postcodes[i]) for i in rows),
        lat=np.array([lat[i] for i in rows], dtype=np.float64),
        lon=np.array([lon[i] for i in rows], dtype=np.float64),
        size=np.array([size[i] or 0 for i in rows], dtype=np.float64),
        weights=weights,
        by_key=by_key,
    )


def nearest(index: CommuneIndex, i: int, k: int) -> tuple[tuple[int, float], ...]:
    """The ``k`` communes nearest to ``i`` by ``d`` (``i`` itself excluded), nearest first, ties by INSEE code:
    ``((row, d), ...)``. One vectorised pass over the index (about a millisecond for 35,000 communes), memoised."""
    cached = index._nearest.get((i, k))
    if cached is not None:
        return cached
    d = index.distances_from(i)
    d[i] = np.inf
    n = min(k, len(index) - 1)
    if n <= 0:
        return ()
    # the k smallest, then every commune tied with the k-th (so that the tie-break below is by code, not by position)
    part = np.argpartition(d, n - 1)[:n] if n < len(d) else np.arange(len(d))
    kth = d[part].max()
    chosen = np.flatnonzero(d <= kth)
    ordered = sorted(chosen.tolist(), key=lambda j: (d[j], index.codes[j]))[:n]
    result = tuple((j, float(d[j])) for j in ordered)
    index._nearest[(i, k)] = result
    return result


def embedding(index: CommuneIndex) -> np.ndarray:
    """The communes as points where Euclidean distance approximates ``d`` (for grouping only): the centroid on the
    sphere in units of ``GEO_SCALE_KM`` and the log size in units of ``SIZE_SCALE``, each times its weight."""
    w = index.weights
    lat, lon = np.radians(index.lat), np.radians(index.lon)
    sphere = np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)], axis=1)
    geo = sphere * (EARTH_RADIUS_KM / w.geo_scale_km * w.geo)
    return np.column_stack([geo, log_size(index.size) / w.size_scale * w.size])


def groups(index: CommuneIndex, k: int) -> np.ndarray:
    """A partition of the communes into groups of ``k + 1`` to ``2k + 1`` similar ones (a group id per row, memoised):
    the set is halved at the median of its widest coordinate (:func:`embedding`) until a half would hold fewer
    than ``k + 1``. Built from the public table alone, so it may be published: a surrogate drawn within its group
    tells the group, at least ``k`` possible originals, and within it the ε·d bound holds."""
    cached = index._groups.get(k)
    if cached is not None:
        return cached
    points = embedding(index)
    group = np.zeros(len(index), dtype=np.int64)
    pending, next_id = [np.arange(len(index))], 0
    while pending:
        rows = pending.pop()
        if len(rows) < 2 * (k + 1):
            group[rows] = next_id
            next_id += 1
            continue
        axis = int(np.argmax(np.ptp(points[rows], axis=0)))
        order = rows[np.lexsort((rows, points[rows, axis]))]  # ties by row: deterministic
        half = len(order) // 2
        pending += [order[half:], order[:half]]
    index._groups[k] = group
    return group


def candidates(index: CommuneIndex, i: int, k: int, neighbourhood: str = "nearest") -> tuple[tuple[int, float], ...]:
    """The communes ``i`` may become, with their distance, nearest first: its ``k`` nearest (``nearest``, the seed's)
    or the other communes of its group (``groups``, :func:`groups`)."""
    if neighbourhood == "nearest":
        return nearest(index, i, k)
    if neighbourhood != "groups":
        raise ValueError(f"unknown neighbourhood {neighbourhood!r}")
    cached = index._group_members.get((i, k))
    if cached is not None:
        return cached
    group = groups(index, k)
    members = np.flatnonzero(group == group[i])
    d = distance(index.lat[i], index.lon[i], index.size[i], index.lat[members], index.lon[members], index.size[members])
    ordered = sorted((float(dj), index.codes[j], int(j)) for j, dj in zip(members, d) if j != i)
    result = tuple((j, dj) for dj, _, j in ordered)
    index._group_members[(i, k)] = result
    return result


def probabilities(distances: Sequence[float], epsilon: float) -> np.ndarray:
    """The exponential mechanism over candidates at ``distances``: ``P(j) ∝ exp(ε·(1 − d_j) / 2)``."""
    scores = epsilon * (1.0 - np.asarray(distances, dtype=np.float64)) / 2.0
    weights = np.exp(scores - scores.max())  # shifted: the same ratios, no overflow for a large ε
    return weights / weights.sum()


def pick(probs: np.ndarray, u: float) -> int:
    """The candidate a uniform number ``u`` in [0, 1) falls on (inverse of the cumulative distribution)."""
    cumulative = np.cumsum(probs)
    return int(min(np.searchsorted(cumulative, u * cumulative[-1], side="right"), len(probs) - 1))


def distribution(
    index: CommuneIndex, i: int, epsilon: float, k: int, neighbourhood: str = "nearest"
) -> tuple[tuple[int, ...], np.ndarray]:
    """The candidates of commune ``i`` and their probabilities under ε (the mechanism, without the draw)."""
    found = candidates(index, i, k, neighbourhood)
    rows = tuple(j for j, _ in found)
    return rows, probabilities([d for _, d in found], epsilon)


def draw(index: CommuneIndex, i: int, epsilon: float, k: int, u: float, neighbourhood: str = "nearest") -> int:
    """The surrogate row of commune ``i`` for the uniform number ``u`` (keyed by the caller)."""
    rows, probs = distribution(index, i, epsilon, k, neighbourhood)
    return rows[pick(probs, u)]


def ratio_bound(d_pair: float, epsilon: float) -> float:
    """The largest ``P_i(y) / P_i'(y)`` the mechanism allows for two communes at ``d_pair`` and a surrogate ``y``
    both can give: ``exp(ε·d(i, i'))`` (module docstring)."""
    return math.exp(epsilon * d_pair)


def reverse_neighbours(index: CommuneIndex, k: int, neighbourhood: str = "nearest") -> np.ndarray:
    """For each commune ``y``, how many communes have it among their candidates: who a surrogate ``y`` may
    stand for (0 for a commune never drawn)."""
    if neighbourhood == "groups":
        group = groups(index, k)
        return np.bincount(group)[group] - 1
    counts = np.zeros(len(index), dtype=np.int64)
    for i in range(len(index)):
        for j, _ in candidates(index, i, k, neighbourhood):
            counts[j] += 1
    return counts
