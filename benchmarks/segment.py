"""Benchmark: HTML parsing and segmentation throughput, in MB of HTML per second per core.

Target: at least 2 MB/s per core for parse + segment.

    .venv/bin/python benchmarks/segment.py [--notes data/notes.parquet] [--min-notes 3000] [--repeat 3]

The notes of the input table are cycled until at least ``--min-notes`` notes are processed, in one
process (one core), so the figure is per core. Three stages are timed separately on the same notes:
``parse`` (html_to_text), ``parse + segment`` (sentences and ``Token`` objects: the Python API),
``parse + segment, compact`` (token offsets without per-token objects: what weak-label, predict and the
segment command run before labelling or writing), and the ``segment`` command end to end (Parquet in,
Parquet out, one worker). The best of ``--repeat`` runs of each stage is reported, as usual for
throughput on a shared machine, on two clocks: wall time, and the process's CPU time (``--clock cpu``,
the default figure), which a neighbour's load on another core does not inflate.

To compare two versions of the code, run this script from each checkout in turn on the same notes (or
time ``html_to_text`` of both in one process, each imported from its own checkout).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model  # noqa: E402

from deid_ds.engine.parallel import relaxed_gc  # noqa: E402
from deid_ds.io.notes import open_notes  # noqa: E402
from deid_ds.report import format_table  # noqa: E402
from deid_ds.segmentation.html_text import html_to_text  # noqa: E402
from deid_ds.segmentation.segmenter import Segmenter  # noqa: E402


def load_html(path: Path, min_notes: int) -> list[str]:
    notes = [n.html for n in open_notes(path).iter_notes() if isinstance(n.html, str)]
    if not notes:
        raise SystemExit(f"{path}: no note with HTML")
    out = []
    while len(out) < min_notes:
        out.extend(notes)
    return out


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def best_of(repeat: int, fn, clock: str = "cpu", parsers: tuple[str, ...] = ("scanner",)) -> dict[str, float]:
    """Best time of ``repeat`` runs of ``fn``."""
    now = CLOCKS[clock]
    best = {name: float("inf") for name in parsers}
    for run in range(repeat):
        order = parsers if run % 2 == 0 else parsers[::-1]
        for name in order:
            started = now()
            fn()
            best[name] = min(best[name], now() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=Path, default=REPO / "data" / "notes.parquet")
    parser.add_argument("--min-notes", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="cpu", help="cpu: this process's CPU time; wall: elapsed time"
    )
    args = parser.parse_args()
    parsers = ("scanner",)

    htmls = load_html(args.notes, args.min_notes)
    megabytes = sum(len(h.encode("utf-8")) for h in htmls) / 1e6
    segmenter = Segmenter()
    segmenter.segment(html_to_text(htmls[0]))  # warm-up: regexes, Punkt parameters

    # As in the commands, notes are processed in batches under relaxed_gc (see deid_ds.engine.parallel). With
    # two parsers, both run each batch in turn (alternating which goes first), so that a change of the
    # neighbours' load during a pass weighs on both alike; each pass is the sum of its batches.
    now = CLOCKS[args.clock]

    def batched(fn):
        def run() -> dict[str, float]:
            best = {name: float("inf") for name in parsers}
            for _ in range(args.repeat):
                total = dict.fromkeys(parsers, 0.0)
                for batch, i in enumerate(range(0, len(htmls), 256)):
                    for name in parsers if batch % 2 == 0 else parsers[::-1]:
                        started = now()
                        with relaxed_gc():
                            [fn(h) for h in htmls[i : i + 256]]
                        total[name] += now() - started
                for name in parsers:
                    best[name] = min(best[name], total[name])
            return best

        return run

    def compact(html: str):
        parsed = html_to_text(html)
        spans = segmenter.token_spans(parsed.text)
        starts, ends = parsed.offsets.starts, parsed.offsets.ends
        return spans, [starts[s] for s in spans.starts], [ends[e - 1] for e in spans.ends]

    parse_s = batched(html_to_text)()
    segment_s = batched(lambda h: segmenter.segment(html_to_text(h)))()
    compact_s = batched(compact)()

    # The command end to end on a table of the same notes, one worker.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from deid_ds.segmentation.notes import segment_notes

    with tempfile.TemporaryDirectory() as tmp:
        table = pa.table(
            {"id_document": [str(i) for i in range(len(htmls))], "id_patient": ["p"] * len(htmls), "html": htmls}
        )
        pq.write_table(table, Path(tmp) / "notes.parquet")
        runs = iter(range(args.repeat * len(parsers)))
        command_s = best_of(
            args.repeat,
            lambda: segment_notes(
                Path(tmp) / "notes.parquet", Path(tmp) / f"out{next(runs)}", progress=False, workers=1
            ),
            args.clock,
            parsers,
        )

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stages = [
        ("parse (html_to_text)", "parse", parse_s),
        ("parse + segment", "segment", segment_s),
        ("parse + segment, compact", "compact", compact_s),
        ("segment command (Parquet→Parquet)", "command", command_s),
    ]
    rows = []
    for label, _, seconds in stages:
        for name in parsers:
            s = seconds[name]
            rows.append(
                [
                    label if len(parsers) == 1 else f"{label} [{name}]",
                    len(htmls),
                    megabytes,
                    s,
                    megabytes / s,
                    len(htmls) / s,
                ]
            )
    print(format_table(["stage", "notes", "MB", f"seconds ({args.clock})", "MB/s/core", "notes/s"], rows))
    print(
        f"machine: {cpu_model()} ({platform.machine()}, {os.cpu_count()} cores), "
        f"Python {platform.python_version()}, peak RSS {peak_mb:.0f} MB"
    )
    summary = {"clock": args.clock}
    for _, key, seconds in stages:
        for name in parsers:
            summary[f"{key}_mb_s" if name == parsers[0] else f"{key}_mb_s_{name}"] = round(megabytes / seconds[name], 2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
