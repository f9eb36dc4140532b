"""Benchmark: searching a note's other views (``view_edits``), this tree against an earlier checkout, alternately.

    .venv/bin/python benchmarks/deidentify_views.py --before DIR [--after DIR] --notes N.parquet --spans GOLD.parquet
        [--repeat 3] [--warm]

Each side runs in its own process with its own code (``PYTHONPATH`` set to its tree; ``git archive main | tar -x -C
DIR`` makes one): it de-identifies every note once (surrogate mode, a fixed key), recording the arguments of each
``view_edits`` call (the parsed note and the replacer its ``deidentify_document`` built), then times replaying those
calls: CPU seconds, best of ``--repeat``, the caches of the views emptied before each replay (``--warm``: kept, as
a second note of the same template finds them). The sides alternate (before, after, before, after) and each prints
a digest of its edits: both must be equal. The whole command's figures come from ``benchmarks/deidentify_command.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child(notes_path: str, spans_path: str, repeat: int, warm: bool) -> None:
    """The side run in this process: time the replayed ``view_edits`` calls, print JSON."""
    import re

    from deid_ds.deidentification import document, other_views
    from deid_ds.deidentification import regions as R
    from deid_ds.deidentification.batch import read_spans_by_document
    from deid_ds.deidentification.context import Context
    from deid_ds.deidentification.keyed import Keyring
    from deid_ds.deidentification.pools import load_pools
    from deid_ds.io.notes import open_notes
    from deid_ds.segmentation.html_text import html_to_text

    notes = [n for batch in open_notes(notes_path).iter_batches(4096) for n in batch]
    spans = read_spans_by_document(spans_path)
    keyring, pools = Keyring(b"benchmark key of 32 bytes at least"), load_pools(None)
    calls: list[tuple] = []
    view_edits = other_views.view_edits
    document.view_edits = lambda *args: calls.append(args) or view_edits(*args)
    for note in notes:
        ctx = Context(keyring, pools, f"patient:{note.id_patient}", note.patient)
        document.deidentify_document(html_to_text(note.html), spans.get(note.id_document, []), ctx, "surrogate")
    document.view_edits = view_edits
    best, edits = float("inf"), None
    for _ in range(repeat):
        if not warm:
            re.purge()
            for cached in (other_views._phrase, other_views._text_matches):
                cached.cache_clear()
            for name in ("_markup_pieces", "_rewritable_pieces", "_gap_reading"):
                if hasattr(R, name):
                    getattr(R, name).cache_clear()
        started = time.process_time()
        edits = [view_edits(*args) for args in calls]
        best = min(best, time.process_time() - started)
    digest = hashlib.sha256(repr(edits).encode()).hexdigest()[:16]
    print(json.dumps({"cpu": best, "calls": len(calls), "edits": sum(map(len, edits)), "digest": digest}))


def side(tree: Path, args) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    command = [sys.executable, __file__, "--child", args.notes, args.spans, "--repeat", str(args.repeat)]
    done = subprocess.run(command + (["--warm"] if args.warm else []), env=env, capture_output=True, text=True, cwd="/")
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[sys.argv.index("--repeat") + 1]), "--warm" in sys.argv)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, type=Path)
    parser.add_argument("--after", default=REPO, type=Path)
    parser.add_argument("--notes", required=True)
    parser.add_argument("--spans", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2, help="before/after pairs, alternated")
    parser.add_argument("--warm", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from machine import alternated, cpu_model

    print(f"machine: {cpu_model()}, load average {os.getloadavg()[0]:.1f}")
    runs = alternated({"before": args.before, "after": args.after}, args.rounds, lambda tree: side(tree, args))
    digests = {r["digest"] for rs in runs.values() for r in rs}
    first = runs["before"][0]
    print(f"{first['calls']} notes, {first['edits']} edits; edits {'identical' if len(digests) == 1 else 'DIFFERENT'}")
    for name, rs in runs.items():
        print(
            f"{name:<7} view_edits CPU s (best of {args.repeat}, per run): " + " ".join(f"{r['cpu']:.3f}" for r in rs)
        )
    if len(digests) != 1:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
