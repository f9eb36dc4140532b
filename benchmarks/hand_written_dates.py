"""Benchmark: how many dates of hand-written and scanned forms ``deid-ds deidentify`` masks instead of shifting.

The generated corpora hold few of the forms letters and scans write (a month in Roman numerals ``12.IV.2019``,
``1° mars``, ``04 09 1947``, ``12/04/ 2019``, ``lun 12/04/2021``, a school year ``2018/2019``, look-alike letters
``l2/O4/2019``, a misread month ``26 jui1let 1979``), so this script writes invented letters holding them (one
form a line, no real data), finds their spans with ``deid-ds weak-label`` and de-identifies them in surrogate mode
with those spans, as a user would run the commands:

    .venv/bin/python benchmarks/hand_written_dates.py [--notes 60] [--seed 3] [--workdir /tmp/deid-hand-dates]

Prints the machine line, the DATE spans of the text view and the fallbacks by reason (``unparsed_date->mask``:
a date the shift could not read). Run it from a copy of another revision to compare.
"""

from __future__ import annotations

import argparse
import platform
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model  # noqa: E402

ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")
#: One line of a letter per form, filled with a random day, month and year.
FORMS = (
    lambda d, m, y: f"Vu en consultation le {d}.{ROMAN[m - 1]}.{y} pour un contrôle.",
    lambda d, m, y: f"Opéré le {d}-{ROMAN[m - 1]}-{y} sans complication.",
    lambda d, m, y: f"Courrier du {d} {ROMAN[m - 1]} {y}, adressé au Dr Vernoux.",
    lambda d, m, y: f"Revu le 1er.{ROMAN[m - 1]}.{y % 100:02d} en hôpital de jour.",
    lambda d, m, y: f"Bilan fait le 1° mars {y}, normal.",
    lambda d, m, y: f"Patient né le {d:02d} {m:02d} {y}, suivi depuis.",
    lambda d, m, y: f"Scanner du {d:02d}/{m:02d}/ {y} sans anomalie.",
    lambda d, m, y: f"RDV lun {d:02d}/{m:02d}/{y} pour la suite.",
    lambda d, m, y: f"Scolarisé en {y}/{y + 1} en CE2.",
    lambda d, m, y: f"Hospitalisé le l2/O4/{y} pour une pneumopathie.",
    lambda d, m, y: "Sortie le O3/1O/2O21 au domicile.",
    lambda d, m, y: f"Appendicectomie le 26 jui1let {y}.",
    lambda d, m, y: f"Fracture le 14 novembrc {y}, plâtre six semaines.",
    lambda d, m, y: f"Dernière visite le {d:02d}/{m:02d}/{y}.",
)
KEY = "hand-written-dates-benchmark-key"


def write_notes(path: Path, notes: int, seed: int) -> None:
    """``notes`` invented letters of five lines, each line one of FORMS, twenty patients."""
    rng = random.Random(seed)
    rows = []
    for i in range(notes):
        lines = [form(rng.randint(1, 28), rng.randint(1, 12), rng.randint(1950, 2023)) for form in rng.sample(FORMS, 5)]
        html = "<p>" + "</p><p>".join(lines) + "</p>"
        rows.append({"id_document": f"D{i}", "id_patient": f"P{i % 20}", "doc_type": "courrier", "html": html})
    pq.write_table(pa.Table.from_pylist(rows), path)


def _deid_ds(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "deid_ds", *args], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"deid-ds {args[0]} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")


def date_fallbacks(audit: Path) -> tuple[int, Counter[str]]:
    """(DATE spans of the text view, their fallbacks by reason) in ``audit``."""
    table = pq.read_table(audit, columns=["label", "fallback", "view"]).to_pydict()
    dates = [
        f
        for label, f, view in zip(table["label"], table["fallback"], table["view"])
        if label == "DATE" and view == "text"
    ]
    return len(dates), Counter(f for f in dates if f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=60)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/deid-hand-dates"))
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    notes, labelled, out = args.workdir / "notes.parquet", args.workdir / "weak", args.workdir / "out"
    write_notes(notes, args.notes, args.seed)
    _deid_ds("weak-label", str(notes), "--out", str(labelled), "--no-metadata", "--overwrite", "--quiet")
    _deid_ds(
        "deidentify", str(notes), "--spans", str(labelled / "spans.parquet"), "--out", str(out), "--key", KEY,
        "--overwrite", "--quiet",
    )  # fmt: skip
    spans, reasons = date_fallbacks(out / "audit.parquet")
    print(f"machine: {cpu_model()}, Python {platform.python_version()}; {args.notes} notes, seed {args.seed}")
    print(f"DATE spans {spans}, masked {sum(reasons.values())}: {dict(reasons)}")


if __name__ == "__main__":
    main()
