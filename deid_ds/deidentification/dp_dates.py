"""ε·d-private dates, ages and durations (``--privacy dp``): keyed discrete Laplace noise in a value's own unit.

After Tchouka, Couchot and Laiymani: a date is a number in the unit it is written in (a day-precise date, or a day
and month without a year, in days; ``mars 2021`` or ``03/2021`` in months; a year alone in years), and so is an age
(years, or months for ``18 mois``) or a duration (``depuis 3 semaines``: weeks). Its surrogate is that number plus
two-sided geometric noise (the discrete Laplace on ℤ) of parameter ``α = e^(-ε)``, ``Pr[N = k] ∝ α^|k|``: two
values ``d`` units apart give each output with probabilities within a factor ``e^(ε·d)`` of each other
(ε·d-privacy with ``d`` the distance in the value's unit), so a recent date moves by days and a year alone by
years, as written.

**Never the original.** The noise is drawn conditioned on ``N ≠ 0``: the house rule is that a surrogate is never
its original (an unchanged date is masked; the residual-leak check counts a birthdate left as it was). The
conditioned mechanism keeps ``Pr[y | x1] ≤ e^(ε·d(x1, x2)) Pr[y | x2]`` for every output ``y`` other than
``x1`` and ``x2`` (the normaliser ``1 − Pr[N = 0]`` is the same for every ``x``, so ratios of the Laplace pmf are
unchanged), but it is no longer *pure* ε·d-private: the output ``y = x2`` has probability 0 under ``x2`` and
``δ(d) = (1 − α) α^(d−1) / 2`` under ``x1`` (it tells that the original is not the published value). No
mechanism that never returns its input can be pure ε·d-private; what holds is (ε·d, δ(d))-privacy, with
:func:`delta` the δ. docs/privacy.md states both.

**Bounds.** A value is kept within bounds (:class:`Bounds`): a date that was not after the run's reference day
stays on or before it (a note never gets a date in the future of its release), an age or a duration stays at 1 or
more. The noise is then conditioned on the allowed range too; the normaliser of a value within a few ``1/ε``
units of a bound is smaller (at worst half of it, at the bound itself), which loosens its guarantee by at most
``ln 2`` (:func:`pmf` gives the exact distribution).

**Memoised and keyed.** The uniform draws come from the key, the patient's scope, the value's kind and the value
(:func:`perturb`), so the same value gets the same surrogate in every note of the patient (no averaging attack)
and a run is reproducible with its key. The bounds are not part of the draw: another reference day changes only
the surrogates that cross one of the two days.

Pure functions: no I/O, no clock.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from deid_ds.deidentification.keyed import Keyring

#: The unit of each kind of date read by :func:`deid_ds.deidentification.dates_shift.parse_date` (``day``: a day
#: alone read with the month and year of the date it is paired with, ``du 8 au 10 mars 2021``).
DATE_UNITS = {"full": "day", "day": "day", "day_month": "day", "month_year": "month", "year": "year"}
#: Kinds that are the same value as another: a day alone, once paired, is that full date (one draw, one cost).
_SAME_AS = {"day": "full"}


@dataclass(frozen=True, slots=True)
class Bounds:
    """How far a value's noise may go: ``down`` units below it, ``up`` units above it (``None``: no bound)."""

    down: int | None = None
    up: int | None = None


def _mass(epsilon: float, room: int | None) -> float:
    """``Σ α^(k−1)`` for ``k`` in ``1..room`` (``room`` ``None``: to infinity), ``α = e^(-ε)``: one side's weight,
    divided by ``α`` so that a large ε does not underflow to 0."""
    if room is None:
        return 1 / -math.expm1(-epsilon)
    if room <= 0:
        return 0.0
    return -math.expm1(-epsilon * room) / -math.expm1(-epsilon)


def _magnitude(u: float, epsilon: float, room: int | None) -> int:
    """Inverse CDF of ``Pr[K = k] ∝ α^k`` on ``1..room``, at ``u`` in [0, 1)."""
    if room is not None:
        u *= -math.expm1(-epsilon * room)  # 1 - α^room: the truncated CDF's range
    return 1 + math.floor(math.log1p(-u) / -epsilon)


def noise(u_side: float, u_magnitude: float, epsilon: float, bounds: Bounds = Bounds()) -> int:
    """Discrete Laplace noise, never 0, within ``bounds``, from two uniform draws in [0, 1) (:func:`pmf` is its
    distribution). Raises :class:`OverflowError` when the bounds leave no room."""
    below, above = _mass(epsilon, bounds.down), _mass(epsilon, bounds.up)
    if below + above == 0:
        raise OverflowError("no room for a noise other than 0")
    if u_side * (below + above) < below:
        return -_magnitude(u_magnitude, epsilon, bounds.down)
    return _magnitude(u_magnitude, epsilon, bounds.up)


def pmf(k: int, epsilon: float, bounds: Bounds = Bounds()) -> float:
    """``Pr[N = k]`` of :func:`noise`: ``α^|k| / Z`` on the allowed range, 0 at ``k = 0`` and outside it."""
    if k == 0 or (bounds.down is not None and -k > bounds.down) or (bounds.up is not None and k > bounds.up):
        return 0.0
    return math.exp(-epsilon * (abs(k) - 1)) / (_mass(epsilon, bounds.down) + _mass(epsilon, bounds.up))


def laplace_pmf(k: int, epsilon: float) -> float:
    """The unconditioned discrete Laplace: ``(1 − α)/(1 + α) · α^|k|`` (for the docs and the tests)."""
    alpha = math.exp(-epsilon)
    return (1 - alpha) / (1 + alpha) * alpha ** abs(k)


def delta(distance: int, epsilon: float) -> float:
    """The δ of the never-equal mechanism for two inputs ``distance`` units apart (module docstring):
    the probability, under one, of publishing the other."""
    return pmf(distance, epsilon) if distance else 0.0


def perturb(keyring: Keyring, scope: str, kind: str, value: int, epsilon: float, bounds: Bounds = Bounds()) -> int:
    """``value`` plus keyed noise: the same (key, scope, kind, value) always gives the same result (memoisation)."""
    rng = keyring.rng(scope, "DP", kind, str(value))
    return value + noise(rng.random(), rng.random(), epsilon, bounds)


# ------------------------------------------------------------------------------------------------ dates


def date_value(kind: str, date: dt.date) -> int:
    """A parsed date as a number in its unit (:data:`DATE_UNITS`): days (ordinal), months or years."""
    if DATE_UNITS[kind] == "day":
        return date.toordinal()
    if kind == "month_year":
        return date.year * 12 + date.month - 1
    return date.year


def value_date(kind: str, value: int, like: dt.date) -> dt.date:
    """The date of ``value`` in its unit, as :func:`~deid_ds.deidentification.dates_shift.parse_date` places a
    partial date (the 15th of a month, the 2nd of July of a year); :class:`OverflowError` outside the calendar."""
    try:
        if DATE_UNITS[kind] == "day":
            return dt.date.fromordinal(value)
        if kind == "month_year":
            return dt.date(value // 12, value % 12 + 1, like.day)
        return dt.date(value, like.month, like.day)
    except ValueError:
        raise OverflowError("outside the calendar") from None


def date_bounds(kind: str, value: int, reference: dt.date | None) -> Bounds:
    """A date on or before ``reference`` stays on or before it (a day and month without a year: no bound)."""
    if reference is None or kind == "day_month":
        return Bounds()
    ceiling = date_value(kind, reference)
    return Bounds(up=ceiling - value) if value <= ceiling else Bounds()


def perturb_date(
    keyring: Keyring, scope: str, kind: str, date: dt.date, epsilon: float, reference: dt.date | None
) -> dt.date:
    """The ε·d-private surrogate of a parsed date of ``kind`` (module docstring)."""
    kind = _SAME_AS.get(kind, kind)
    value = date_value(kind, date)
    moved = perturb(keyring, scope, f"date:{kind}", value, epsilon, date_bounds(kind, value, reference))
    return value_date(kind, moved, date)


def date_key(kind: str, date: dt.date) -> tuple[str, str]:
    """The accounting kind (``date:day``...) and the memo key of a date: one value, one cost per patient."""
    kind = _SAME_AS.get(kind, kind)
    return f"date:{DATE_UNITS[kind]}", f"{kind}:{date_value(kind, date)}"
