"""What the benchmark scripts record of the machine they ran on (imported by them, not run)."""

from __future__ import annotations

import platform
from collections.abc import Callable
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), for the machine line of docs/benchmarks.md."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def alternated(trees: dict[str, Path], rounds: int, run: Callable[[Path], dict]) -> dict[str, list[dict]]:
    """``run(tree)`` for each side in turn (before, after, before, after...), ``rounds`` times: the drift of a loaded
    machine falls on both sides alike."""
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for _ in range(rounds):
        for name, tree in trees.items():
            runs[name].append(run(tree))
    return runs
