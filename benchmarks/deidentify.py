"""Benchmark: ``deid-ds deidentify`` throughput (documents per second) on the embedded sample.

    .venv/bin/python benchmarks/deidentify.py [--notes data/notes.parquet] [--spans data/gold.parquet]
                                              [--kb DIR] [--repeat 3] [--workers 1] [--cpu]

Stages, each timed ``--repeat`` times (best and median reported):

* ``document``: ``deidentify_document`` on notes parsed beforehand (surrogates + HTML replacement);
* ``leak check``: ``find_leaks`` on the de-identified notes (parsing them again);
* ``command``: ``deid_ds.deidentification.deidentify`` end to end (Parquet in, notes/audit/documents out),
  surrogate mode, ``--workers`` processes.

``--cpu`` times this process's CPU seconds instead of the wall clock (a loaded machine). The stages run in one
process, one after the other, so the later repeats (and ``command``) find the caches of the earlier ones warm:
``benchmarks/deidentify_command.py`` measures the command as a user runs it, in a fresh process.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model  # noqa: E402

from deid_ds.deidentification import deidentify  # noqa: E402
from deid_ds.deidentification.batch import read_spans_by_document  # noqa: E402
from deid_ds.deidentification.context import Context, scope_of  # noqa: E402
from deid_ds.deidentification.document import deidentify_document  # noqa: E402
from deid_ds.deidentification.keyed import Keyring  # noqa: E402
from deid_ds.deidentification.leaks import find_leaks  # noqa: E402
from deid_ds.deidentification.pools import load_pools  # noqa: E402
from deid_ds.io.notes import open_notes  # noqa: E402
from deid_ds.segmentation.html_text import html_to_text  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", default=str(REPO / "data" / "notes.parquet"))
    parser.add_argument("--spans", default=str(REPO / "data" / "gold.parquet"))
    parser.add_argument("--kb")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--cpu", action="store_true", help="time this process's CPU seconds, not wall-clock (a loaded machine)"
    )
    args = parser.parse_args()

    notes = [note for batch in open_notes(args.notes).iter_batches() for note in batch]
    spans = read_spans_by_document(args.spans)
    pools = load_pools(str(Path(args.kb).resolve()) if args.kb else None)
    keyring = Keyring(b"benchmark")
    parsed = [html_to_text(note.html) for note in notes]
    n_spans = sum(len(spans.get(note.id_document, [])) for note in notes)
    outputs: list[str] = []

    def documents() -> None:
        outputs.clear()
        for note, page in zip(notes, parsed):
            ctx = Context(keyring, pools, scope_of(note.id_patient, note.id_document), note.patient)
            outputs.append(deidentify_document(page, spans.get(note.id_document, []), ctx, "surrogate").html)

    def leaks() -> None:
        for note, html in zip(notes, outputs):
            find_leaks(html, note.patient)

    timer = time.process_time if args.cpu else time.perf_counter
    with tempfile.TemporaryDirectory() as tmp:

        def command() -> None:
            deidentify(
                args.notes,
                Path(tmp) / "out",
                spans=args.spans,
                kb=args.kb,
                key="benchmark-key-not-secret",
                workers=args.workers,
                progress=False,
            )

        stages = {
            name: timeit.repeat(fn, number=1, repeat=args.repeat, timer=timer)
            for name, fn in (("document", documents), ("leak check", leaks), ("command", command))
        }
    megabytes = sum(len(note.html.encode("utf-8")) for note in notes) / 1e6
    print(
        f"machine: {cpu_model()}, Python {platform.python_version()}; {len(notes)} notes, {n_spans} spans, "
        f"{megabytes:.2f} MB of HTML; "
        f"places: {'kb ' + args.kb if args.kb else 'fallback list'}; command workers: {args.workers}; "
        f"timer: {'CPU' if args.cpu else 'wall-clock'}"
    )
    print(f"{'stage':<12} {'best s':>8} {'median s':>9} {'documents/s (best)':>19} {'spans/s (best)':>15}")
    for name, times in stages.items():
        best = min(times)
        print(
            f"{name:<12} {best:>8.3f} {statistics.median(times):>9.3f} {len(notes) / best:>19,.0f} "
            f"{n_spans / best:>15,.0f}"
        )


if __name__ == "__main__":
    main()
