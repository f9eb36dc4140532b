"""The ε·d-private mechanism of ``--privacy dp`` (:mod:`deid_ds.deidentification.dp_dates`): its draws follow the
analytic distribution, the ε·d ratio bound holds on pairs of inputs, it never returns its input, stays within its
bounds, and is memoised and keyed."""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification.dp_dates import (
    Bounds,
    date_bounds,
    date_key,
    date_value,
    delta,
    laplace_pmf,
    noise,
    perturb,
    perturb_date,
    pmf,
    value_date,
)
from deid_ds.deidentification.keyed import Keyring

KEY = Keyring(b"dp-test-key-not-secret-0123456789")
#: The χ² statistic's threshold: the 0.999 quantile of χ² with 20 degrees of freedom is 45.3. The draws are keyed,
#: so the statistic is one fixed number per case; a wrong sampler (a sign, an off-by-one) gives hundreds.
CHI2_LIMIT = 45.3


def _chi2(draws: list[int], epsilon: float, bounds: Bounds) -> float:
    """χ² of ``draws`` against :func:`pmf` on bins -10..10, the tails pooled with the outermost bins."""
    n, counts = len(draws), Counter(max(-10, min(10, k)) for k in draws)
    statistic = 0.0
    for k in range(-10, 11):
        if k == 0:
            continue
        p = pmf(k, epsilon, bounds)
        if k == -10:
            p = 1 - sum(pmf(j, epsilon, bounds) for j in range(-9, 2000))
        elif k == 10:
            p = 1 - sum(pmf(j, epsilon, bounds) for j in range(-2000, 10))
        if p * n < 1e-9:
            assert counts[k] == 0
            continue
        statistic += (counts[k] - n * p) ** 2 / (n * p)
    return statistic


@pytest.mark.parametrize(
    "epsilon, bounds",
    [(0.5, Bounds()), (0.2, Bounds()), (1.0, Bounds(up=2)), (0.3, Bounds(down=0)), (0.5, Bounds(3, 1))],
)
def test_keyed_draws_follow_the_analytic_distribution(epsilon, bounds):
    draws = [perturb(KEY, f"patient:{i}", "date:full", 1000, epsilon, bounds) - 1000 for i in range(20_000)]
    assert 0 not in draws
    assert _chi2(draws, epsilon, bounds) < CHI2_LIMIT


def test_a_wrong_distribution_fails_the_check():
    """The χ² check can fail: the draws at ε = 0.5 against the pmf at ε = 0.4."""
    draws = [perturb(KEY, f"patient:{i}", "date:full", 0, 0.5) for i in range(20_000)]
    assert _chi2(draws, 0.4, Bounds()) > 10 * CHI2_LIMIT


@given(
    epsilon=st.floats(0.01, 5),
    down=st.one_of(st.none(), st.integers(0, 50)),
    up=st.one_of(st.none(), st.integers(0, 50)),
)
@settings(max_examples=60, deadline=None)
def test_the_pmf_sums_to_one_and_is_zero_at_zero_and_outside_the_bounds(epsilon, down, up):
    if down == 0 and up == 0:
        return
    bounds = Bounds(down, up)
    total = sum(pmf(k, epsilon, bounds) for k in range(-20_000, 20_001))
    assert total == pytest.approx(1, abs=1e-6 if epsilon > 0.05 else 1e-3)
    assert pmf(0, epsilon, bounds) == 0
    if up is not None:
        assert pmf(up + 1, epsilon, bounds) == 0
    if down is not None:
        assert pmf(-down - 1, epsilon, bounds) == 0


@pytest.mark.parametrize("epsilon", [0.05, 0.3, 1.0, 3.0])
def test_the_eps_d_bound_holds_for_every_output_but_the_two_inputs(epsilon):
    """``Pr[y | x1] ≤ e^(ε·|x1 − x2|) Pr[y | x2]`` for every ``y`` other than ``x1`` and ``x2``: conditioning on a
    non-zero noise divides every input's pmf by the same normaliser, so the Laplace ratios are unchanged. At
    ``y = x2`` the ratio is unbounded (``Pr[x2 | x2] = 0``): that is the δ of :func:`delta`."""
    for x1 in range(0, 12):
        for x2 in range(0, 12):
            if x1 == x2:
                continue
            bound = math.exp(epsilon * abs(x1 - x2))
            for y in range(-60, 72):
                if y in (x1, x2):
                    continue
                assert pmf(y - x1, epsilon) <= bound * pmf(y - x2, epsilon) * (1 + 1e-9)
            assert pmf(0, epsilon) == 0 and pmf(x2 - x1, epsilon) == delta(abs(x1 - x2), epsilon) > 0


@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_the_unconditioned_laplace_is_the_conditioned_one_times_a_constant(epsilon):
    """Why the ratios hold: off 0, the conditioned pmf is the discrete Laplace over ``1 − Pr[N = 0]``, whatever x."""
    scale = 1 - laplace_pmf(0, epsilon)
    for k in range(-30, 31):
        if k:
            assert pmf(k, epsilon) == pytest.approx(laplace_pmf(k, epsilon) / scale, rel=1e-12)


def test_near_a_bound_the_ratio_loosens_by_at_most_a_factor_two():
    """A value at the reference day can only move back: its normaliser is half, hence at most ``ln 2`` more."""
    epsilon, ceiling = 0.4, 10
    for x1 in range(0, 11):
        for x2 in range(0, 11):
            if x1 == x2:
                continue
            b1, b2 = Bounds(up=ceiling - x1), Bounds(up=ceiling - x2)
            for y in range(-50, ceiling + 1):
                if y not in (x1, x2):
                    ratio = pmf(y - x1, epsilon, b1) / pmf(y - x2, epsilon, b2)
                    assert ratio <= 2 * math.exp(epsilon * abs(x1 - x2)) * (1 + 1e-9)


@given(value=st.integers(-(10**6), 10**6), epsilon=st.floats(0.001, 50), scope=st.text(max_size=8))
@settings(max_examples=200, deadline=None)
def test_never_the_original_memoised_and_keyed(value, epsilon, scope):
    once = perturb(KEY, scope, "date:full", value, epsilon)
    assert once != value
    assert perturb(KEY, scope, "date:full", value, epsilon) == once  # memoised: the same value, the same surrogate


def test_another_key_or_patient_draws_anew():
    ours = [perturb(KEY, "patient:P1", "date:full", v, 0.2) for v in range(200)]
    assert ours == [perturb(KEY, "patient:P1", "date:full", v, 0.2) for v in range(200)]
    another = Keyring(b"another-key-not-secret-012345678")
    theirs = [perturb(another, "patient:P1", "date:full", v, 0.2) for v in range(200)]
    other_patient = [perturb(KEY, "patient:P2", "date:full", v, 0.2) for v in range(200)]
    assert sum(a != b for a, b in zip(ours, theirs)) > 100 and sum(a != b for a, b in zip(ours, other_patient)) > 100


@given(
    u=st.floats(0, 1, exclude_max=True),
    v=st.floats(0, 1, exclude_max=True),
    down=st.integers(0, 40),
    up=st.integers(1, 40),
    epsilon=st.floats(0.001, 800),
)
def test_noise_stays_within_its_bounds(u, v, down, up, epsilon):
    k = noise(u, v, epsilon, Bounds(down=down, up=up))
    assert k != 0 and -down <= k <= up


def test_no_room_at_all_is_an_overflow():
    with pytest.raises(OverflowError):
        noise(0.5, 0.5, 1.0, Bounds(0, 0))


# ------------------------------------------------------------------------------------------------ dates


@given(
    day=st.dates(dt.date(1900, 1, 1), dt.date(2026, 11, 27)),
    kind=st.sampled_from(["full", "month_year", "year"]),
    epsilon=st.floats(0.01, 3),
)
@settings(max_examples=300, deadline=None)
def test_a_date_not_after_the_reference_day_never_ends_after_it(day, kind, epsilon):
    reference = dt.date(2026, 11, 27)
    placed = {"full": day, "month_year": day.replace(day=15), "year": dt.date(day.year, 7, 2)}[kind]
    new = perturb_date(KEY, "patient:P1", kind, placed, epsilon, reference)
    assert date_value(kind, new) <= date_value(kind, reference)
    assert date_value(kind, new) != date_value(kind, placed)


def test_a_date_after_the_reference_day_has_no_bound_and_a_day_and_month_none():
    reference = dt.date(2020, 1, 1)
    assert date_bounds("full", date_value("full", dt.date(2021, 1, 1)), reference) == Bounds()
    assert date_bounds("day_month", date_value("day_month", dt.date(2001, 3, 12)), reference) == Bounds()
    assert date_bounds("year", 2019, reference) == Bounds(up=1)


def test_units_are_the_ones_the_date_is_written_in():
    assert date_value("month_year", dt.date(2021, 3, 15)) - date_value("month_year", dt.date(2021, 2, 15)) == 1
    assert date_value("year", dt.date(2021, 7, 2)) == 2021
    assert value_date("month_year", date_value("month_year", dt.date(2021, 3, 15)) + 10, dt.date(2021, 3, 15)) == (
        dt.date(2022, 1, 15)
    )
    with pytest.raises(OverflowError):
        value_date("full", 0, dt.date(2021, 1, 1))


def test_a_day_alone_paired_with_its_date_is_that_date():
    """``du 8 au 10 mars 2021``: the ``8``, read with its pair's month and year, is the full date (one draw, one
    cost), for the dates forms that read a day alone."""
    day = dt.date(2021, 3, 8)
    alone, full = (perturb_date(KEY, "patient:P1", kind, day, 0.3, None) for kind in ("day", "full"))
    assert alone == full
    assert date_key("day", day) == date_key("full", day)
