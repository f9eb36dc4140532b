"""Benchmark: ``deid-ds synth`` at the study's scale: notes per second and peak memory.

The study's corpus has 878,217 notes. ``synth`` streams notes and gold to disk in row groups, so what it
holds in memory is one chunk of notes plus the world (patients, streets, professionals the knowledge-base
files list), which grows with the number of patients, not with the text of the notes.

    .venv/bin/python benchmarks/synth_scale.py [--notes 5000 50000 200000] [--seed 1] [--workdir /tmp/deid-synth-bench]

Each size runs ``deid-ds synth --quiet`` in its own child process, so its peak resident memory (``ru_maxrss``
from ``wait4``) is its own. The output directory is removed after each run unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STUDY_NOTES = 878_217


def run_synth(notes: int, seed: int, out: Path) -> dict[str, float]:
    """Run one ``deid-ds synth`` and return its wall time, peak RSS and output size."""
    command = [
        sys.executable,
        "-m",
        "deid_ds",
        "synth",
        "--notes",
        str(notes),
        "--seed",
        str(seed),
        "--out",
        str(out),
        "--quiet",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"synth --notes {notes} --seed {seed} failed (exit {os.waitstatus_to_exitcode(status)})")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return {
        "notes": notes,
        "seconds": round(seconds, 1),
        "notes_per_s": round(notes / seconds, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "output_mb": round(size / 2**20, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, nargs="+", default=[5000, 50000])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/deid-synth-bench"))
    parser.add_argument("--keep", action="store_true", help="keep the generated samples")
    args = parser.parse_args()
    print(
        json.dumps({"machine": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version()}),
        flush=True,
    )
    rows = []
    for notes in args.notes:
        out = args.workdir / f"synth-{notes}"
        shutil.rmtree(out, ignore_errors=True)
        row = run_synth(notes, args.seed, out)
        rows.append(row)
        print(json.dumps(row), flush=True)
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
    if len(rows) >= 2:  # memory per note between the two largest runs, and what the study's size would take
        small, large = sorted(rows, key=lambda r: r["notes"])[-2:]
        per_note_kb = (large["peak_rss_mb"] - small["peak_rss_mb"]) * 1024 / (large["notes"] - small["notes"])
        rate = large["notes_per_s"]
        print(
            json.dumps(
                {
                    "rss_kb_per_note": round(per_note_kb, 2),
                    "study_rss_mb_linear": round(
                        large["peak_rss_mb"] + per_note_kb * (STUDY_NOTES - large["notes"]) / 1024
                    ),
                    "study_minutes_at_largest_rate": round(STUDY_NOTES / rate / 60, 1),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
