"""The local exponential mechanism over similar communes, unit by unit: the distance, the k nearest, the analytic
distribution against keyed draws, the ε·d bound on pairs of communes, memoisation."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification.context import Context
from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.pools import load_pools
from deid_ds.deidentification.similar_communes import (
    build_index,
    candidates,
    distance,
    distribution,
    draw,
    groups,
    haversine_km,
    nearest,
    pick,
    probabilities,
    ratio_bound,
    reverse_neighbours,
)

#: A hand-made table: communes on the parallel 48° N, 0.1° of longitude apart (7.44 km), the same size unless said.
#: ``E`` sits between A and B but is a hundred times larger; ``F`` and ``G`` are far east (about 200 km).
TABLE = [
    # code, name, lon, size
    ("00001", "A", 0.0, 1000),
    ("00002", "B", 0.1, 1000),
    ("00003", "C", 0.2, 1000),
    ("00004", "D", 0.3, 1000),
    ("00005", "E", 0.05, 100_000),
    ("00006", "F", 3.0, 1000),
    ("00007", "G", 3.1, 1000),
]


def table_index(rows=TABLE, lat=48.0):
    return build_index(
        [r[0] for r in rows],
        [r[1] for r in rows],
        [(f"{r[0][:2]}000",) for r in rows],
        [lat] * len(rows),
        [r[2] for r in rows],
        [r[3] for r in rows],
        [r[1].lower() for r in rows],
    )


def names(index, found):
    return [index.names[j] for j, _ in found]


# ------------------------------------------------------------------------------------------------ the distance


def test_the_distance_weighs_50_km_like_a_factor_of_10_in_size_and_grows_with_both():
    assert haversine_km(48.0, 0.0, 48.0, 0.1) == pytest.approx(7.44, abs=0.01)
    # 50 km apart, same size; on the spot, ten times larger: both 0.25
    fifty_km = 50 / 111.195  # degrees of latitude
    assert distance(48.0, 0.0, 1000, 48.0 + fifty_km, 0.0, 1000) == pytest.approx(0.25, abs=1e-3)
    assert distance(48.0, 0.0, 1000, 48.0, 0.0, 10_000) == pytest.approx(0.25, abs=1e-3)
    # Marseille and a Breton village: 860 km and a factor of 7,000
    assert distance(43.3, 5.4, 870_000, 48.4, -4.5, 120) == pytest.approx(
        0.5 * haversine_km(43.3, 5.4, 48.4, -4.5) / 100 + 0.5 * math.log(870_001 / 121) / math.log(100)
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(41.0, 51.5), st.floats(-5.5, 9.6), st.integers(0, 2_000_000)),  # mainland France, any size
        min_size=3,
        max_size=3,
    )
)
def test_the_distance_is_a_metric(points):
    (a, b, c) = points
    ab, bc, ac = distance(*a, *b), distance(*b, *c), distance(*a, *c)
    assert ab >= 0.0 and distance(*a, *a) == pytest.approx(0.0, abs=1e-9)
    assert ab == pytest.approx(distance(*b, *a), abs=1e-12)
    assert ac <= ab + bc + 1e-9  # the triangle inequality the ε·d bound rests on


# ------------------------------------------------------------------------------------------------ the k nearest


def test_the_k_nearest_are_the_nearby_communes_of_a_similar_size_nearest_first():
    index = table_index()
    a = index.find("a")
    assert names(index, nearest(index, a, 3)) == ["B", "C", "D"]  # E is nearer but a hundred times larger
    assert names(index, nearest(index, a, 6)) == ["B", "C", "D", "E", "F", "G"]  # F, G: 220 km away, d > 1
    assert [round(d, 4) for _, d in nearest(index, a, 2)] == [
        round(0.5 * haversine_km(48.0, 0.0, 48.0, 0.1) / 100, 4),
        round(0.5 * haversine_km(48.0, 0.0, 48.0, 0.2) / 100, 4),
    ]
    assert names(index, nearest(index, index.find("f"), 2)) == ["G", "D"]
    assert all(j != a for j, _ in nearest(index, a, 10)) and len(nearest(index, a, 10)) == 6  # never itself


def test_the_k_nearest_agree_with_a_brute_force_sort_on_a_random_table():
    rng = random.Random(7)
    rows = [(f"{i:05d}", f"c{i}", rng.uniform(-4.0, 4.0), rng.choice([50, 300, 2000, 40_000])) for i in range(300)]
    lats = [rng.uniform(43.0, 50.0) for _ in rows]
    index = build_index(
        [r[0] for r in rows],
        [r[1] for r in rows],
        [()] * 300,
        lats,
        [r[2] for r in rows],
        [r[3] for r in rows],
        [r[1] for r in rows],
    )
    for i in (0, 17, 299):
        brute = sorted(
            (distance(lats[i], rows[i][2], rows[i][3], lats[j], rows[j][2], rows[j][3]), rows[j][0])
            for j in range(300)
            if j != i
        )[:10]
        assert [index.codes[j] for j, _ in nearest(index, i, 10)] == [code for _, code in brute]


def test_ties_are_broken_by_insee_code_and_the_result_is_memoised():
    rows = [("00009", "X", 0.0, 10), ("00003", "Y", 0.1, 10), ("00001", "Z", -0.1, 10), ("00002", "W", 0.0, 10)]
    index = table_index(rows)
    x = index.find("x")
    assert [index.codes[j] for j, _ in nearest(index, x, 3)] == ["00002", "00001", "00003"]  # W on the spot
    assert nearest(index, x, 3) is nearest(index, x, 3)


def test_a_homonym_is_the_largest_commune_of_that_name():
    rows = [("01001", "Saint-Martin", 0.0, 100), ("02002", "Saint-Martin", 1.0, 5000), ("03003", "Autre", 2.0, 10)]
    index = table_index(rows)
    assert index.codes[index.find("saint martin")] == "02002" and index.find("saint-martin") == index.find(
        "saint martin"
    )
    assert index.find("nulle part") is None


# ------------------------------------------------------------------------------------------------ the mechanism


@pytest.mark.parametrize("epsilon", [0.5, 4.0, 20.0])
def test_the_probabilities_are_the_exponential_mechanism_of_half_epsilon(epsilon):
    d = [0.05, 0.2, 0.6, 1.0]
    p = probabilities(d, epsilon)
    assert p.sum() == pytest.approx(1.0)
    for a in range(4):
        for b in range(4):
            assert p[a] / p[b] == pytest.approx(math.exp(epsilon * ((1 - d[a]) - (1 - d[b])) / 2))
    assert list(p) == sorted(p, reverse=True)  # nearer, likelier


def test_a_very_large_epsilon_does_not_overflow():
    p = probabilities([0.0, 0.5], 1e6)
    assert p[0] == pytest.approx(1.0) and np.isfinite(p).all()


def test_seeded_draws_follow_the_analytic_distribution():
    index = table_index()
    a = index.find("a")
    rows, probs = distribution(index, a, 30.0, 6)
    rng = random.Random(2026)
    n = 40_000
    counts = dict.fromkeys(rows, 0)
    for _ in range(n):
        counts[rows[pick(probs, rng.random())]] += 1
    assert draw(index, a, 30.0, 6, 0.0) == rows[0]  # the draw the run makes is this pick
    for row, p in zip(rows, probs):
        assert abs(counts[row] / n - p) < 0.01, (index.names[row], counts[row] / n, p)
    assert probs[0] > 2 * probs[-1]  # at ε = 30 the mechanism really prefers the nearer


def test_keyed_draws_across_patients_follow_the_analytic_distribution(kb_dir):
    """The keyed uniform number of the real path (HMAC of the key, the patient, the commune) is uniform enough:
    over 3,000 patients, the surrogates of one commune follow the mechanism's distribution."""
    from deid_ds.deidentification.places import commune_for, similar_places
    from deid_ds.deidentification.privacy import Privacy
    from deid_ds.model import PatientMetadata

    pools = load_pools(str(kb_dir))
    privacy = Privacy("dp", 8.0, 5)
    first = Context(Keyring(b"analytic-key-0123456789"), pools, "patient:0", PatientMetadata(), privacy=privacy)
    index = similar_places(first).index
    rows, probs = distribution(index, index.find("brest"), 8.0, 5)
    counts = dict.fromkeys((index.names[j] for j in rows), 0)
    n = 3000
    for patient in range(n):
        ctx = Context(first.keyring, pools, f"patient:{patient}", PatientMetadata(), privacy=privacy)
        counts[commune_for(ctx, "brest").name] += 1
    for j, p in zip(rows, probs):
        assert abs(counts[index.names[j]] / n - p) < 0.03, (index.names[j], counts[index.names[j]] / n, p)


def test_pick_is_the_inverse_of_the_cumulative_distribution():
    probs = np.array([0.5, 0.3, 0.2])
    assert [pick(probs, u) for u in (0.0, 0.49, 0.5, 0.79, 0.8, 0.999999)] == [0, 0, 1, 1, 2, 2]


# ------------------------------------------------------------------------------------------------ the ε·d bound


def _probability(index, i, y, epsilon, k):
    rows, probs = distribution(index, i, epsilon, k)
    return dict(zip(rows, probs)).get(y, 0.0)


@pytest.mark.parametrize("epsilon", [1.0, 5.0, 25.0])
def test_every_pair_of_communes_and_shared_surrogate_respects_the_epsilon_d_bound(epsilon):
    """P_i(y) / P_i'(y) ≤ exp(ε·d(i, i')) for every surrogate y both communes can give, whatever their
    neighbourhoods (the proof in the module docstring of similar_communes), on a random table of 60 communes."""
    rng = random.Random(11)
    rows = [(f"{i:05d}", f"c{i}", rng.uniform(-2.0, 2.0), rng.choice([80, 800, 8000, 80_000])) for i in range(60)]
    lats = [rng.uniform(46.0, 48.0) for _ in rows]
    index = build_index(
        [r[0] for r in rows],
        [r[1] for r in rows],
        [()] * 60,
        lats,
        [r[2] for r in rows],
        [r[3] for r in rows],
        [r[1] for r in rows],
    )
    k, checked, tight = 6, 0, 0
    probs = [dict(zip(*distribution(index, i, epsilon, k))) for i in range(60)]
    for i in range(60):
        for i2 in range(60):
            if i == i2:
                continue
            d_pair = float(index.distances_from(i)[i2])
            bound = ratio_bound(d_pair, epsilon)
            for y, _ in nearest(index, i, k):
                p1, p2 = probs[i][y], probs[i2].get(y, 0.0)
                if p2 > 0:
                    checked += 1
                    assert p1 / p2 <= bound * (1 + 1e-9), (i, i2, y, p1 / p2, bound)
                    tight += p1 / p2 > math.exp(epsilon * d_pair / 2)  # the ε/2 of the exponent is needed
    assert checked > 1000 and tight > 0


def test_a_surrogate_only_one_commune_can_give_tells_the_original_the_bound_is_on_shared_surrogates():
    """The mechanism is local: a surrogate outside a commune's k nearest has probability 0 from it. Here F's
    surrogates (G, D, C for k = 3) and C's (B, D, A) differ: G rules C out, as the docs say."""
    index = table_index()
    f, c, g = index.find("f"), index.find("c"), index.find("g")
    assert _probability(index, f, g, 5.0, 3) > 0 and _probability(index, c, g, 5.0, 3) == 0.0


def test_each_commune_may_stand_for_the_originals_that_have_it_among_their_k_nearest():
    index = table_index()
    counts = reverse_neighbours(index, 3)
    # A: B C D; B: A C D; C: B D A; D: C B A; E: A B C (tie at 3.7 km by code); F: G D C; G: F D C
    assert dict(zip(index.names, counts.tolist())) == {"A": 4, "B": 4, "C": 6, "D": 5, "E": 0, "F": 1, "G": 1}
    assert counts.sum() == 3 * len(index)


# ------------------------------------------------------------------------------------------------ groups


def random_index(n: int, seed: int):
    rng = random.Random(seed)
    rows = [(f"{i:05d}", f"c{i}", rng.uniform(-3.0, 3.0), rng.choice([60, 600, 6000, 60_000])) for i in range(n)]
    lats = [rng.uniform(45.0, 49.0) for _ in rows]
    return build_index(
        [r[0] for r in rows],
        [r[1] for r in rows],
        [()] * n,
        lats,
        [r[2] for r in rows],
        [r[3] for r in rows],
        [r[1] for r in rows],
    )


@pytest.mark.parametrize("k", [1, 3, 10])
def test_groups_partition_the_communes_into_k_plus_1_to_2k_plus_1(k):
    index = random_index(500, 5)
    group = groups(index, k)
    sizes = np.bincount(group)
    assert sizes.sum() == 500 and sizes.min() >= k + 1 and sizes.max() <= 2 * k + 1
    assert (groups(random_index(500, 5), k) == group).all()  # a function of the public table alone
    assert (reverse_neighbours(index, k, "groups") >= k).all()  # every surrogate: at least k possible originals
    i = 17
    found = candidates(index, i, k, "groups")
    assert {j for j, _ in found} == set(np.flatnonzero(group == group[i]).tolist()) - {i}
    assert [d for _, d in found] == sorted(d for _, d in found)


def test_groups_keep_similar_communes_together():
    index = table_index()
    group = groups(index, 1)  # groups of 2 or 3
    assert group[index.find("f")] == group[index.find("g")]  # the two far-east towns
    assert group[index.find("f")] != group[index.find("a")]


@pytest.mark.parametrize("epsilon", [1.0, 5.0, 25.0])
def test_within_a_group_every_pair_respects_the_epsilon_d_bound_and_groups_share_no_surrogate(epsilon):
    index, k = random_index(80, 9), 4
    group = groups(index, k)
    checked = 0
    probs = [dict(zip(*distribution(index, i, epsilon, k, "groups"))) for i in range(80)]
    for i in range(80):
        p_i = probs[i]
        for i2 in range(80):
            if i == i2:
                continue
            p_i2 = probs[i2]
            shared = set(p_i) & set(p_i2)
            if group[i] != group[i2]:
                assert not shared
                continue
            d_pair = float(index.distances_from(i)[i2])
            for y in shared:
                checked += 1
                assert p_i[y] / p_i2[y] <= ratio_bound(d_pair, epsilon) * (1 + 1e-9)
    assert checked > 300
