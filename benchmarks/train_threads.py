"""Benchmark: one epoch of ``deid-ds train`` on CPU with 1 and 2 torch threads (the default thread rule's evidence).

    .venv/bin/python benchmarks/train_threads.py --weak out/demo/weak --fasttext out/demo/fasttext \\
        --flair-lm out/demo/flair-lm [--hidden 64 256] [--threads 1 2] [--max-sentences 1500] [--repeat 3]
        [--busy] [--workdir /tmp/deid-train-threads]

Each run is the whole command (``python -m deid_ds train WEAK --max-epochs 1 --threads T --hidden H --device cpu
--quiet``) in a fresh interpreter; the thread counts and model sizes are alternated within each repeat, so a
neighbour's load falls on every configuration alike. Per configuration, the median of the repeats: the epoch's
wall seconds (the model card's ``seconds_per_epoch``: the training batches and the dev evaluation) and the CPU
seconds of the whole command (``RUSAGE_CHILDREN``: what the threads burn, spinning included).

``--busy`` keeps one core busy with a spinning process for the whole benchmark: the situation of a user whose
machine runs another job (the case ``make demo`` met). The load average before and after is printed: on a
shared machine, say that it was loaded.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
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

COMMAND_CODE = (
    "import json, resource, subprocess, sys, time\n"
    "started = time.perf_counter()\n"
    "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps([time.perf_counter() - started, usage.ru_utime + usage.ru_stime]))\n"
)


def spin() -> None:
    """A busy core: the other job of the user's machine."""
    while True:
        pass


def one_epoch(args: argparse.Namespace, hidden: int, threads: int, work: Path) -> dict:
    """Epoch seconds (model card), wall and CPU seconds of one ``train`` run."""
    out = work / f"model-h{hidden}-t{threads}"
    argv = [sys.executable, "-m", "deid_ds", "train", args.weak, "--out", str(out), "--overwrite", "--quiet"]
    argv += ["--max-epochs", "1", "--hidden", str(hidden), "--threads", str(threads), "--device", "cpu"]
    argv += ["--max-sentences", str(args.max_sentences)]
    if args.fasttext:
        argv += ["--fasttext", args.fasttext]
    if args.flair_lm:
        argv += ["--flair-lm", args.flair_lm]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", COMMAND_CODE, *argv], capture_output=True, text=True, check=True, env=env
    )
    wall, cpu = json.loads(done.stdout.strip().splitlines()[-1])
    card = json.loads((out / "model_card.json").read_text(encoding="utf-8"))
    return {"epoch": card["seconds_per_epoch"], "wall": wall, "cpu": cpu, "threads": card["threads"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weak", required=True, help="a weak-label directory (the demo's: out/demo/weak)")
    parser.add_argument("--fasttext", help="a `deid-ds embeddings fasttext` directory")
    parser.add_argument("--flair-lm", help="a `deid-ds embeddings flair-lm` directory")
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 256], help="tagger hidden sizes")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch thread counts")
    parser.add_argument("--max-sentences", type=int, default=1500, help="sentences per split (a shorter epoch)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--busy", action="store_true", help="keep one core busy while measuring")
    parser.add_argument("--workdir", default=None, help="scratch directory (default: a temporary one)")
    args = parser.parse_args()

    print(f"machine: {cpu_model()}, {len(os.sched_getaffinity(0))} cores available; load {os.getloadavg()}")
    busy = multiprocessing.Process(target=spin, daemon=True) if args.busy else None
    if busy:
        busy.start()
    runs: dict[tuple[int, int], list[dict]] = {(h, t): [] for h in args.hidden for t in args.threads}
    try:
        with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
            for repeat in range(args.repeat):
                for hidden in args.hidden:
                    # alternate the order too, so neither count always runs first
                    for threads in args.threads if repeat % 2 == 0 else reversed(args.threads):
                        result = one_epoch(args, hidden, threads, Path(tmp))
                        runs[(hidden, threads)].append(result)
                        print(f"  repeat {repeat + 1}: hidden {hidden}, {threads} thread(s): {result}", flush=True)
    finally:
        if busy:
            busy.kill()
    print(f"load after: {os.getloadavg()}{' (one core kept busy)' if busy else ''}")
    rows = []
    for (hidden, threads), results in runs.items():
        epoch = statistics.median(r["epoch"] for r in results)
        base = statistics.median(r["epoch"] for r in runs[(hidden, args.threads[0])])
        rows.append(
            [
                hidden,
                threads,
                f"{epoch:.1f}",
                f"{epoch / base:.2f}",
                f"{statistics.median(r['wall'] for r in results):.1f}",
                f"{statistics.median(r['cpu'] for r in results):.1f}",
            ]
        )
    print(
        format_table(
            ["hidden", "threads", "s/epoch (median)", f"vs {args.threads[0]} thread(s)", "command wall s", "CPU s"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
