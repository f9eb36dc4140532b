"""Benchmark: what ``deidentify --privacy dp`` does to dates (utility and one attack), against the keyed shift.

    .venv/bin/python benchmarks/dp_dates.py [--notes 400] [--patients 60] [--epsilon 1 0.3 0.1]
                                            [--corpus DIR] [--reference 2024-01-01]

Generates an export-style corpus (``deid-ds synth --phrasing exports``, gold spans) unless ``--corpus`` holds one,
runs ``deidentify`` with the shift and with ``--privacy dp`` at each ε (``--audit-originals``, in a temporary
directory), reads each DATE span's original and surrogate back (:func:`date_pairs`) and reports per patient:

* the error ``|surrogate − original|`` in the date's unit (day-precise dates in days, ``mars 2021`` in months, a
  year in years), median, 90th percentile and max, and for day-precise dates by age of the date (the seed's
  categories: under 2 months, under 2 years, older, before the reference day);
* the share of intervals between two distinct day-precise dates of a patient kept within ±7 days;
* the reordering rate: pairs of distinct day-precise dates of a patient whose order flips or ties;
* the attack: knowing one true date of a patient and its surrogate (the earliest), the share of the patient's
  other distinct day-precise dates recovered exactly by assuming a shift (:func:`one_known_date_attack`);
* the AGE errors (years) and the per-patient ε of the report.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from deid_ds.deidentification.dates_shift import _WEEKDAY, parse_date  # noqa: E402
from deid_ds.deidentification.dp_dates import DATE_UNITS, date_value  # noqa: E402

KEY = "benchmark-key-not-secret-0123456789"
TOLERANCE_DAYS = 7


def read_date(text: str):
    """A DATE span's text as (kind, date), the weekday dropped; ``None`` when it is not a date read here."""
    weekday = _WEEKDAY.match(text)
    parsed = parse_date(text[weekday.end() :] if weekday else text)
    return (parsed.kind, parsed.date) if parsed else None


def date_pairs(rows: Iterable[tuple[str, str, str]]) -> dict[str, dict[tuple[str, dt.date], dt.date]]:
    """Per patient, each distinct (kind, original date) and its surrogate date, from (patient, original,
    replacement) rows (masked fallbacks and unread forms left out)."""
    out: dict[str, dict[tuple[str, dt.date], dt.date]] = {}
    for patient, original, replacement in rows:
        before, after = read_date(original), read_date(replacement)
        if before and after and before[0] == after[0]:
            out.setdefault(patient, {})[before] = after[1]
    return out


def one_known_date_attack(days: dict[dt.date, dt.date]) -> tuple[int, int]:
    """Knowing the earliest true day-precise date and its surrogate, assume a shift and recover the others:
    (recovered exactly, tried)."""
    if len(days) < 2:
        return 0, 0
    known = min(days)
    offset = days[known] - known
    others = [d for d in days if d != known]
    return sum(days[d] - offset == d for d in others), len(others)


def day_pairs(days: dict[dt.date, dt.date]) -> list[tuple[dt.date, dt.date]]:
    ordered = sorted(days)
    return [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :]]


def reordered(days: dict[dt.date, dt.date]) -> tuple[int, int]:
    """(pairs of distinct true dates whose surrogates tie or flip order, pairs)."""
    pairs = day_pairs(days)
    return sum(days[b] <= days[a] for a, b in pairs), len(pairs)


def intervals_kept(days: dict[dt.date, dt.date], tolerance: int = TOLERANCE_DAYS) -> tuple[int, int]:
    pairs = day_pairs(days)
    return sum(abs((days[b] - days[a]).days - (b - a).days) <= tolerance for a, b in pairs), len(pairs)


def quantiles(values: list[int]) -> str:
    """``median / p90 / max`` of ``values`` (``–`` for none): the figures the dp benchmarks print."""
    if not values:
        return "–"
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
    return f"{statistics.median(values):g} / {p90} / {values[-1]}"


def _age_bucket(day: dt.date, reference: dt.date) -> str:
    age = (reference - day).days
    return "< 2 months" if age < 61 else "< 2 years" if age < 730 else "older"


def measure(pairs: dict[str, dict[tuple[str, dt.date], dt.date]], reference: dt.date) -> dict:
    errors: dict[str, list[int]] = {"day": [], "month": [], "year": []}
    by_age: dict[str, list[int]] = {"< 2 months": [], "< 2 years": [], "older": []}
    attack, order, kept = [0, 0], [0, 0], [0, 0]
    for values in pairs.values():
        for (kind, before), after in values.items():
            error = abs(date_value(kind, after) - date_value(kind, before))
            if kind == "day_month":  # no year: 28/12 for 05/01 is 8 days away, not 357
                error = min(error, 365 - error)
            errors[DATE_UNITS[kind]].append(error)
            if kind == "full":
                by_age[_age_bucket(before, reference)].append(error)
        days = {before: after for (kind, before), after in values.items() if kind == "full"}
        for total, (hit, tried) in ((attack, one_known_date_attack(days)), (order, reordered(days))):
            total[0] += hit
            total[1] += tried
        hit, tried = intervals_kept(days)
        kept[0] += hit
        kept[1] += tried
    share = lambda c: c[0] / c[1] if c[1] else 0.0  # noqa: E731
    return {
        "errors": {unit: quantiles(v) for unit, v in errors.items()},
        "n": {unit: len(v) for unit, v in errors.items()},
        "by_age": {bucket: quantiles(v) for bucket, v in by_age.items()},
        "attack_recovered": share(attack),
        "attack_tried": attack[1],
        "reordered": share(order),
        "pairs": order[1],
        "intervals_kept": share(kept),
    }


def _count(text: str) -> int:
    """The number of an age as written: ``45 ans``, ``soixante-trois ans``."""
    from deid_ds.deidentification.ages_durations import find_quantities

    (found,) = find_quantities(f"âgé de {text}")
    return found.value


def _run(corpus: Path, out: Path, reference: str, privacy: str, epsilon: float) -> tuple[dict, dict, list[int]]:
    import pandas as pd

    from deid_ds.deidentification import deidentify

    report = deidentify(
        corpus / "notes.parquet",
        out,
        spans=corpus / "gold.parquet",
        key=KEY,
        audit_originals=True,
        progress=False,
        workers=1,
        log=lambda message: None,
        privacy=privacy,
        epsilon=epsilon,
        dp_reference=reference,
    )
    audit = pd.read_parquet(out / "audit.parquet")
    dates = audit[(audit["label"] == "DATE") & audit["fallback"].isna()]
    pairs = date_pairs(zip(dates["id_patient"].astype(str), dates["original"], dates["replacement"]))
    ages = audit[audit["label"] == "AGE"]
    age_errors = [abs(_count(a) - _count(b)) for a, b in zip(ages["original"], ages["replacement"])]
    return pairs, report.privacy, age_errors


def main() -> None:
    from machine import cpu_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=400)
    parser.add_argument("--patients", type=int, default=60)
    parser.add_argument("--epsilon", nargs="+", default=["1", "0.3", "0.1"])
    parser.add_argument("--corpus", type=Path, help="A synth output directory (notes.parquet, gold.parquet).")
    parser.add_argument(
        "--reference",
        default="2024-01-01",
        help="--dp-reference of the runs, and the day the ages of the dates are counted from (the generated notes "
        "run to 2023: a release soon after them).",
    )
    args = parser.parse_args()
    reference = dt.date.fromisoformat(args.reference)
    with tempfile.TemporaryDirectory(prefix="deid-ds-dp-") as scratch:
        corpus = args.corpus
        if corpus is None:
            from click.testing import CliRunner

            from deid_ds.cli import main as cli

            corpus = Path(scratch) / "corpus"
            synth = ["synth", "-n", str(args.notes), "-p", str(args.patients), "--phrasing", "exports"]
            synth += ["-o", str(corpus)]
            result = CliRunner().invoke(cli, synth)
            if result.exit_code:
                raise SystemExit(result.output)
        print(f"machine: {cpu_model()}; corpus: {corpus.name} ({args.notes} notes, {args.patients} patients)")
        header = (
            "| privacy | day err. med/p90/max | month err. | year err. | day err. < 2 months / < 2 years / older "
            "| intervals ±7 d | reordered | attack recovered | AGE err. (years) med/p90/max "
            "| ε per patient max/median |"
        )
        print(header)
        print("|" + "---|" * (header.count("|") - 1))
        for privacy, epsilon in [("shift", 1.0), *(("dp", float(e)) for e in args.epsilon)]:
            name = "shift" if privacy == "shift" else f"dp ε={epsilon:g}"
            out = Path(scratch) / f"{privacy}-{epsilon:g}"
            pairs, accounting, ages = _run(corpus, out, args.reference, privacy, epsilon)
            m = measure(pairs, reference)
            per_patient = accounting.get("epsilon_per_patient")
            print(
                f"| {name} | {m['errors']['day']} | {m['errors']['month']} | {m['errors']['year']} | "
                f"{m['by_age']['< 2 months']}; {m['by_age']['< 2 years']}; {m['by_age']['older']} | "
                f"{m['intervals_kept']:.1%} | {m['reordered']:.1%} of {m['pairs']} | "
                f"{m['attack_recovered']:.1%} of {m['attack_tried']} | {quantiles(ages)} | "
                f"{json.dumps([per_patient['max'], per_patient['median']]) if per_patient else '–'} |"
            )


if __name__ == "__main__":
    main()
