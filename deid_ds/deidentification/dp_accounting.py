"""The privacy accounting of ``--privacy dp`` in the report: ε per value, and per patient by composition.

**The budget.** ``--epsilon`` is the ε of *each distinct value* (a date in its unit, an age, a duration, a
commune), not a global budget split across a patient's values as in the seed (Tchouka, Couchot, Laiymani): a
uniform split needs the number of the patient's values before the first is perturbed, which changes whenever a
note is added (and with it every surrogate of the patient), and which no batch of a distributed run knows. The
per-patient total is reported instead, by sequential composition: a patient whose ``n`` distinct values were
perturbed with ε each is ``n·ε``·d-private as a whole. A release under a patient budget ``B`` is one with
``--epsilon B/n`` for the largest ``n`` the report shows.

**What costs, what does not.** Each distinct (kind, value) of a patient costs ε once: the same value written again
in this note or another of the patient's (``12/03/2021`` and ``12 mars 2021``, a kept date column, the NIR's
birth year and month of the birthdate) reuses its memoised surrogate, and re-rendering it (its form, a weekday,
``--birthdate-year``) is post-processing: neither costs more. Distinct values compose.

**What is not protected.** A value replaced outside the mechanisms (a commune the knowledge base does not place, a
city abroad drawn within its country: :mod:`.places`) is recorded with an infinite ε. It is counted apart
(``unprotected_values_per_kind``, ``patients_with_unprotected_values``) and left out of the ε sums, so that the
figures stay finite (and the JSON valid) while saying which part of the release no ε covers.

The batches send their spending up keyed by HMACs of the scope and the value (:func:`batch_spending`): no value
and no patient id leaves a worker in clear; the report holds only counts and ε.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping

from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.privacy import Privacy

#: ``ctx.memory`` key of a note's spending (:meth:`deid_ds.deidentification.context.Context.spend`).
SPENT = "dp_spent"


def batch_spending(keyring: Keyring, scope: str, spent: Mapping[tuple[str, str], float]) -> dict[str, dict]:
    """One note's spending as ``{scope hash: {kind: {value hash: ε}}}`` (module docstring; JSON-ready)."""
    if not spent:
        return {}
    values: dict[str, dict[str, float]] = {}
    for (kind, key), eps in spent.items():
        values.setdefault(kind, {})[_hashed(keyring, kind, key)] = eps
    return {_hashed(keyring, "scope", scope): values}


def _hashed(keyring: Keyring, *parts: str) -> str:
    """16 hex digits of an HMAC: a collision between two values of one patient (about n²/2⁶⁵) is negligible."""
    return keyring.digest("dp accounting", *parts).hex()[:16]


def merge_spending(into: dict[str, dict], spending: Mapping[str, Mapping[str, Mapping[str, float]]]) -> None:
    """Add a batch's spending: a value already counted for its patient is not counted again (memoised). The
    driver keeps every patient's distinct values until the end (a 64-bit integer and ε each, ~100 bytes)."""
    for scope, kinds in spending.items():
        mine = into.setdefault(scope, {})
        for kind, values in kinds.items():
            mine.setdefault(kind, {}).update((int(h, 16), eps) for h, eps in values.items())


def accounting(privacy: Privacy, spent: Mapping[str, Mapping[str, Mapping[int, float]]]) -> dict:
    """The report's ``privacy`` entry: the mode, and with ``dp`` the ε per value and per patient (module docstring)."""
    if not privacy.is_dp:
        return {"mode": privacy.mode}
    totals, counts, per_kind, unprotected = [], [], {}, {}
    exposed_patients = 0
    for kinds in spent.values():
        total, count, exposed = 0.0, 0, False
        for kind, values in kinds.items():
            finite = [eps for eps in values.values() if math.isfinite(eps)]
            total += sum(finite)
            count += len(finite)
            if finite:
                per_kind[kind] = per_kind.get(kind, 0) + len(finite)
            if len(finite) < len(values):
                unprotected[kind] = unprotected.get(kind, 0) + len(values) - len(finite)
                exposed = True
        totals.append(total)
        counts.append(count)
        exposed_patients += exposed
    return {
        "mode": "dp",
        "epsilon_per_value": privacy.epsilon,
        "k": privacy.k,
        "reference_day": privacy.reference.isoformat() if privacy.reference else None,
        "patients": len(totals),
        "values": sum(counts),
        "values_per_kind": dict(sorted(per_kind.items())),
        "values_per_patient": _summary(sorted(counts)),
        "epsilon_per_patient": _summary(sorted(totals)),
        "unprotected_values_per_kind": dict(sorted(unprotected.items())),
        "patients_with_unprotected_values": exposed_patients,
        "composition": (
            "sequential over each patient's distinct values (kind, value); the same value again (memoised), its "
            "re-rendering, weekday or year-only form cost nothing more"
        ),
    }


def _summary(values: list) -> dict:
    if not values:
        return {"max": 0, "median": 0, "mean": 0}
    return {
        "max": round(values[-1], 6),
        "median": round(statistics.median(values), 6),
        "mean": round(statistics.fmean(values), 6),
    }
