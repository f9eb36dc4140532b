"""Benchmark: HTML parsing and segmentation throughput, in MB of HTML per second per core.

Target (issue 2): at least 2 MB/s per core for parse + segment.

    .venv/bin/python benchmarks/segment.py [--notes data/notes.parquet] [--min-notes 3000] [--repeat 3]

The notes of the input table are cycled until at least ``--min-notes`` notes are processed, in one
process (one core), so the figure is per core. Three stages are timed separately on the same notes:
``parse`` (html_to_text), ``parse + segment`` (sentences and ``Token`` objects: the Python API),
``parse + segment, compact`` (token offsets without per-token objects: what weak-label, predict and the
segment command run before labelling or writing), and the ``segment`` command end to end (Parquet in,
Parquet out, one worker). The best of ``--repeat`` runs of each stage is reported, as usual for
throughput on a shared machine, on two clocks: wall time, and the process's CPU time (``--clock cpu``,
the default figure), which a neighbour's load on another core does not inflate.
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

from deid_ds.html_text import html_to_text  # noqa: E402
from deid_ds.notes_io import open_notes  # noqa: E402
from deid_ds.parallel import relaxed_gc  # noqa: E402
from deid_ds.report import format_table  # noqa: E402
from deid_ds.segment import Segmenter  # noqa: E402


def load_html(path: Path, min_notes: int) -> list[str]:
    notes = [n.html for n in open_notes(path).iter_notes() if isinstance(n.html, str)]
    if not notes:
        raise SystemExit(f"{path}: no note with HTML")
    out = []
    while len(out) < min_notes:
        out.extend(notes)
    return out


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def best_of(repeat: int, fn, clock: str = "cpu") -> float:
    now = CLOCKS[clock]
    best = float("inf")
    for _ in range(repeat):
        started = now()
        fn()
        best = min(best, now() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=Path, default=REPO / "data" / "notes.parquet")
    parser.add_argument("--min-notes", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu", help="cpu: this process's CPU time; wall: elapsed time")
    args = parser.parse_args()

    htmls = load_html(args.notes, args.min_notes)
    megabytes = sum(len(h.encode("utf-8")) for h in htmls) / 1e6
    segmenter = Segmenter()
    segmenter.segment(html_to_text(htmls[0]))  # warm-up: regexes, Punkt parameters

    # As in the commands, notes are processed in batches under relaxed_gc (see deid_ds.parallel).
    def batched(fn):
        def run():
            for i in range(0, len(htmls), 256):
                with relaxed_gc():
                    [fn(h) for h in htmls[i : i + 256]]

        return run

    def compact(html: str):
        parsed = html_to_text(html)
        spans = segmenter.token_spans(parsed.text)
        starts, ends = parsed.offsets.starts, parsed.offsets.ends
        return spans, [starts[s] for s in spans.starts], [ends[e - 1] for e in spans.ends]

    parse_s = best_of(args.repeat, batched(html_to_text), args.clock)
    segment_s = best_of(args.repeat, batched(lambda h: segmenter.segment(html_to_text(h))), args.clock)
    compact_s = best_of(args.repeat, batched(compact), args.clock)

    # The command end to end on a table of the same notes, one worker.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from deid_ds.segment_notes import segment_notes

    with tempfile.TemporaryDirectory() as tmp:
        table = pa.table({"id_document": [str(i) for i in range(len(htmls))], "id_patient": ["p"] * len(htmls), "html": htmls})
        pq.write_table(table, Path(tmp) / "notes.parquet")
        runs = iter(range(args.repeat))
        command_s = best_of(
            args.repeat,
            lambda: segment_notes(Path(tmp) / "notes.parquet", Path(tmp) / f"out{next(runs)}", progress=False, workers=1),
            args.clock,
        )

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows = [
        ["parse (html_to_text)", len(htmls), megabytes, parse_s, megabytes / parse_s, len(htmls) / parse_s],
        ["parse + segment", len(htmls), megabytes, segment_s, megabytes / segment_s, len(htmls) / segment_s],
        ["parse + segment, compact", len(htmls), megabytes, compact_s, megabytes / compact_s, len(htmls) / compact_s],
        ["segment command (Parquet→Parquet)", len(htmls), megabytes, command_s, megabytes / command_s, len(htmls) / command_s],
    ]
    print(format_table(["stage", "notes", "MB", f"seconds ({args.clock})", "MB/s/core", "notes/s"], rows))
    print(f"machine: {cpu_model()} ({platform.machine()}, {os.cpu_count()} cores), Python {platform.python_version()}, peak RSS {peak_mb:.0f} MB")
    print(json.dumps({"clock": args.clock, "parse_mb_s": round(megabytes / parse_s, 2), "segment_mb_s": round(megabytes / segment_s, 2),
                      "compact_mb_s": round(megabytes / compact_s, 2), "command_mb_s": round(megabytes / command_s, 2)}))


if __name__ == "__main__":
    main()
