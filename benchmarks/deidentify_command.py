"""Benchmark and check: the whole ``deid-ds deidentify`` command, one worker, against an earlier checkout.

    .venv/bin/python benchmarks/deidentify_command.py --before DIR [--after DIR] --workdir /tmp/deid-cmd
        [--large-notes 3000] [--phrasing exports] [--repeat 3] [--no-check] [--no-timing]

``--before`` (and ``--after``, by default this tree) is a directory holding a checkout, e.g.
``git archive e23eab7 | tar -x -C DIR``. Each side runs its own code: ``sys.executable -m deid_ds`` with
``PYTHONPATH`` set to its tree, from a directory outside both, with a fixed key.

Inputs (made once in ``--workdir`` and reused): ``one``, the sample's first note alone (the start-up);
``sample``, the embedded sample (300 notes, its gold spans); ``large``, ``deid-ds synth --notes N --seed 7``
(``--phrasing P`` when given: ``exports`` makes 3-KB export-style notes) with its gold spans.

* **check** (unless ``--no-check``): both sides run ``deidentify --spans GOLD`` in ``--mode mask`` and in
  ``--mode surrogate --keep-metadata surrogate --audit-originals`` on ``sample`` and ``large``; every output
  file must be the same (:func:`compare_dirs` of ``tools/compare_revisions.py``: Parquet tables cell by cell,
  ``report.json`` without its timings and key fingerprint). One line per run: ``identical`` or ``DIFFERENT``.
* **timing** (unless ``--no-timing``): ``deidentify --workers 1 --mode surrogate`` on each input, the two
  sides alternately (before, after, before, after...) ``--repeat`` times; the CPU seconds (user + system)
  of each command process, from ``getrusage``. Printed per input and side: median CPU seconds and notes per
  CPU second (notes/s/core, the whole command), the ratio before/after of the medians, and the *marginal*
  rate of a note: ``(N - 1) / (cpu(large) - cpu(one))``, start-up excluded.

Exit status 0 when every check is identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare_revisions import VOLATILE_JSON_KEYS, compare_dirs  # noqa: E402
from machine import cpu_model  # noqa: E402

KEY = "deidentify-benchmark-fixed-key-01"
CHECKS = {
    "mask": ["--mode", "mask"],
    "surrogate": ["--mode", "surrogate", "--keep-metadata", "surrogate", "--audit-originals"],
}


def run_cli(tree: Path, cwd: Path, *args) -> float:
    """``deid-ds ARGS`` with the code of ``tree``; the CPU seconds (user + system) the process used."""
    env = dict(os.environ, PYTHONPATH=str(tree), DEID_DS_KEY=KEY)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "deid_ds", *map(str, args)], env=env, cwd=cwd, capture_output=True, text=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: deid-ds {' '.join(map(str, args))} exited {done.returncode}\n{done.stderr[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def make_inputs(workdir: Path, tree: Path, large_notes: int, phrasing: str | None) -> dict[str, tuple[Path, Path, int]]:
    """Input name -> (notes, spans, number of notes), made once."""
    inputs = workdir / "inputs"
    one = inputs / "one"
    if not (one / "notes.parquet").exists():
        one.mkdir(parents=True, exist_ok=True)
        note = pq.read_table(REPO / "data" / "notes.parquet").slice(0, 1)
        pq.write_table(note, one / "notes.parquet")
        gold = pq.read_table(REPO / "data" / "gold.parquet")
        mine = pc.equal(gold.column("id_document"), note.column("id_document")[0])
        pq.write_table(gold.filter(mine), one / "gold.parquet")
    large = inputs / (f"large-{large_notes}" + (f"-{phrasing}" if phrasing else ""))
    if not (large / "notes.parquet").exists():
        style = ("--phrasing", phrasing) if phrasing else ()
        run_cli(tree, workdir, "synth", "--notes", large_notes, *style, "--seed", 7, "--out", large, "--quiet")
    gold = REPO / "data" / "gold.parquet"
    return {
        "one": (one / "notes.parquet", one / "gold.parquet", 1),
        "sample": (REPO / "data" / "notes.parquet", gold, pq.read_metadata(REPO / "data" / "notes.parquet").num_rows),
        "large": (large / "notes.parquet", large / "gold.parquet", large_notes),
    }


def check(sides: dict[str, Path], inputs, workdir: Path) -> bool:
    """Both sides' outputs on ``sample`` and ``large`` in each mode of :data:`CHECKS`; True when all are identical."""
    same = True
    for name in ("sample", "large"):
        notes, spans, _ = inputs[name]
        for mode, options in CHECKS.items():
            dirs = []
            for side, tree in sides.items():
                out = workdir / "out" / side / f"{name}-{mode}"
                args = ("deidentify", notes, "--spans", spans, *options, "-j", 1, "-q", "--overwrite", "-o", out)
                run_cli(tree, workdir, *args)
                dirs.append(out)
            diff = compare_dirs(*dirs, keys=VOLATILE_JSON_KEYS)
            print(f"check {name:<7} {mode:<10} {'identical' if diff is None else 'DIFFERENT  ' + diff}", flush=True)
            same &= diff is None
    return same


def timing(sides: dict[str, Path], inputs, workdir: Path, repeat: int) -> None:
    cpu: dict[tuple[str, str], list[float]] = {}
    for name, (notes, spans, _) in inputs.items():
        for _ in range(repeat):
            for side, tree in sides.items():
                out = workdir / "out" / side / f"time-{name}"
                args = ("deidentify", notes, "--spans", spans, "-j", 1, "-q", "--overwrite", "-o", out)
                cpu.setdefault((name, side), []).append(run_cli(tree, workdir, *args))
    header = " ".join(f"{s + ' CPU s':>13} {s + ' notes/s':>15}" for s in sides)
    print(f"{'input':<8} {'notes':>6} {header}  speed-up (CPU before / after)")
    for name, (_, _, n) in inputs.items():
        medians = {side: statistics.median(cpu[name, side]) for side in sides}
        cells = " ".join(f"{medians[s]:>13.2f} {n / medians[s]:>15.0f}" for s in sides)
        print(f"{name:<8} {n:>6} {cells}  {medians['before'] / medians['after']:.2f}x")
    n = inputs["large"][2]
    for side in sides:
        marginal = statistics.median(cpu["large", side]) - statistics.median(cpu["one", side])
        print(f"marginal ({side}): {(n - 1) / marginal:.0f} notes per CPU second (large minus one)")
    print("all CPU seconds: " + "; ".join(f"{k[0]} {k[1]} " + " ".join(f"{s:.2f}" for s in v) for k, v in cpu.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, type=Path, help="directory of the reference checkout")
    parser.add_argument("--after", default=REPO, type=Path, help="directory of the checkout measured (this tree)")
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--large-notes", type=int, default=3000)
    parser.add_argument("--phrasing", help="synth --phrasing of the large input (default: synth's)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--no-timing", action="store_true")
    args = parser.parse_args()

    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    started = time.perf_counter()
    load, python = os.getloadavg()[0], sys.version.split()[0]
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs, load average {load:.1f}; Python {python}")
    inputs = make_inputs(workdir, sides["before"], args.large_notes, args.phrasing)
    ok = True
    if not args.no_check:
        ok = check(sides, inputs, workdir)
    if not args.no_timing:
        timing(sides, inputs, workdir, args.repeat)
    print(f"{'OK' if ok else 'FAILED'} in {time.perf_counter() - started:.0f} s; load average {os.getloadavg()[0]:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
