"""Benchmark: the start-up of each command, in CPU seconds of fresh processes.

Targets (issue 30): ``deid-ds weak-label`` on one note ≤ 1 s of CPU; ``deid-ds --help`` ≤ 0.3 s.

    .venv/bin/python benchmarks/startup.py [--repeat 9] [--before e23eab7] [--workdir /tmp/deid-startup]

Each command runs ``--repeat`` times as a fresh ``python -m deid_ds`` process on one note of the sample
(``data/notes.parquet``), and the figure is the median CPU time (user + system) of the process and of
the worker processes it waited for, from ``getrusage(RUSAGE_CHILDREN)``: CPU, not wall time, so that a
neighbour's load on the machine does not count. A process's start-up is its imports: a command on one
note does little else, so this measures what every run, and every worker of the local engine (started
with ``spawn``, so it imports the job's modules again), pays before its first note.

``--before REV`` also measures the git revision ``REV`` (extracted with ``git archive`` into
``--workdir``; nothing of this checkout changes), alternating the two in each round so that both see the
same load, and prints the ratio of the medians. Each side builds its own knowledge base and spans (from
``kb/sources``, with its own code) before timing.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model  # noqa: E402

from deid_ds.report import format_table  # noqa: E402

#: label -> arguments of ``deid-ds`` (``{one}``: one note; ``{two}``: two notes; ``{kb}``, ``{spans}``,
#: ``{out}``: a fresh output directory per run).
COMMANDS: dict[str, list[str]] = {
    "--help": ["--help"],
    "--version": ["--version"],
    "weak-label --help": ["weak-label", "--help"],
    "weak-label, one note": ["weak-label", "{one}", "--kb", "{kb}", "--out", "{out}", "--workers", "1", "-q"],
    "weak-label, 2 notes, 2 workers": [
        "weak-label",
        "{two}",
        "--kb",
        "{kb}",
        "--out",
        "{out}",
        "--workers",
        "2",
        "--batch-size",
        "1",
        "-q",
    ],
    "segment, one note": ["segment", "{one}", "--out", "{out}", "--workers", "1", "-q"],
    "deidentify, one note": ["deidentify", "{one}", "--kb", "{kb}", "--spans", "{spans}", "--out", "{out}", "-q"],
    "campaign --help": ["campaign", "--help"],
    "evaluate --help": ["evaluate", "--help"],
    "predict --help": ["predict", "--help"],
    "train --help": ["train", "--help"],
}


def run_cpu(checkout: Path, args: list[str], cwd: Path) -> float:
    """CPU seconds (user + system) of ``python -m deid_ds ARGS`` run from ``checkout``, workers included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    result = subprocess.run([sys.executable, "-m", "deid_ds", *args], cwd=cwd, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"{checkout}: deid-ds {' '.join(args)} failed:\n{result.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def extract(revision: str, into: Path) -> Path:
    """The files of ``revision`` in ``into`` (``git archive``: no worktree, no checkout touched)."""
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def prepare(checkout: Path, workdir: Path) -> dict[str, str]:
    """Inputs for the commands, made with the checkout's own code: one and two notes, a KB, spans."""
    import pyarrow.parquet as pq

    workdir.mkdir(parents=True, exist_ok=True)
    notes = pq.read_table(REPO / "data" / "notes.parquet")
    one, two = workdir / "one.parquet", workdir / "two.parquet"
    pq.write_table(notes.slice(0, 1), one)
    pq.write_table(notes.slice(0, 2), two)
    kb = workdir / "kb"
    if kb.exists():
        shutil.rmtree(kb)
    run_cpu(checkout, ["build-kb", "--sources", str(REPO / "kb" / "sources"), "--out", str(kb), "-q"], workdir)
    labelled = workdir / "labelled"
    if labelled.exists():
        shutil.rmtree(labelled)
    run_cpu(checkout, ["weak-label", str(one), "--kb", str(kb), "--out", str(labelled), "-q"], workdir)
    return {"one": str(one), "two": str(two), "kb": str(kb), "spans": str(labelled / "spans.parquet")}


def time_command(checkout: Path, args: list[str], inputs: dict[str, str], workdir: Path) -> float:
    out = Path(tempfile.mkdtemp(dir=workdir)) / "out"
    try:
        return run_cpu(checkout, [a.format(out=out, **inputs) for a in args], workdir)
    finally:
        shutil.rmtree(out.parent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=9, help="fresh processes per command and side (default 9)")
    parser.add_argument("--before", help="git revision to compare with, alternated in the same run")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "deid-startup")
    parser.add_argument("--only", action="append", help="only the commands whose label starts so (repeatable)")
    options = parser.parse_args()

    sides: dict[str, Path] = {"this tree": REPO}
    if options.before:
        sides = {options.before: extract(options.before, options.workdir / "before"), "this tree": REPO}
    commands = {k: v for k, v in COMMANDS.items() if not options.only or any(k.startswith(o) for o in options.only)}
    inputs = {side: prepare(path, options.workdir / f"inputs-{i}") for i, (side, path) in enumerate(sides.items())}
    times: dict[tuple[str, str], list[float]] = {(side, label): [] for side in sides for label in commands}
    for round_ in range(options.repeat):
        order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
        for label, args in commands.items():
            for side in order:
                times[side, label].append(time_command(sides[side], args, inputs[side], options.workdir))
        print(f"round {round_ + 1}/{options.repeat} done", file=sys.stderr)

    names = list(sides)
    header = ["command"] + [f"{side}: median CPU s (min)" for side in names]
    if len(names) == 2:
        header.append("after / before")
    rows = []
    for label in commands:
        row = [label]
        medians = []
        for side in names:
            values = times[side, label]
            medians.append(statistics.median(values))
            row.append(f"{medians[-1]:.2f} ({min(values):.2f})")
        if len(names) == 2:
            row.append(f"{medians[1] / medians[0]:.2f}")
        rows.append(row)
    print(format_table(header, rows))
    print(f"{options.repeat} fresh processes per command and side; machine: {cpu_model()}, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
