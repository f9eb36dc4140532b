"""Benchmark: finding the direct identifiers (``find_identifiers``), this tree against an earlier checkout, alternately.

    .venv/bin/python benchmarks/deidentify_identifiers.py --before DIR [--after DIR] --notes N.parquet
        [--repeat 3] [--rounds 3]

Each side runs in its own process with its own code (``PYTHONPATH`` set to its tree; ``git archive main | tar -x -C
DIR`` makes one): it reads every note's two texts that ``note_identifiers`` reads (the visible text and the whole
file decoded), then times ``find_identifiers`` of all of them: CPU seconds, best of ``--repeat``, the regex cache
emptied before each run. The sides alternate (before, after, before, after...: ``--rounds`` pairs) and each prints
a digest of what it found and the count per kind: the two sides' are equal unless the kinds or cues changed. The
whole command's figures come from ``benchmarks/deidentify_command.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child(notes_path: str, repeat: int) -> None:
    """The side run in this process: time ``find_identifiers`` of every text, print JSON."""
    import re
    from html import unescape

    from deid_ds.deidentification.identifiers import find_identifiers
    from deid_ds.deidentification.regions import INVISIBLE_RE
    from deid_ds.io.notes import open_notes
    from deid_ds.segmentation.html_text import html_to_text

    texts = []
    for batch in open_notes(notes_path).iter_batches(4096):
        for note in batch:
            parsed = html_to_text(note.html)
            texts += [parsed.text, INVISIBLE_RE.sub("", unescape(parsed.html))]
    best, found = float("inf"), []
    for _ in range(repeat):
        re.purge()
        started = time.process_time()
        found = [find_identifiers(text) for text in texts]
        best = min(best, time.process_time() - started)
    kinds = Counter(i.kind for identifiers in found for i in identifiers)
    digest = hashlib.sha256(repr(found).encode()).hexdigest()[:16]
    print(json.dumps({"cpu": best, "texts": len(texts), "kinds": dict(sorted(kinds.items())), "digest": digest}))


def side(tree: Path, args) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    command = [sys.executable, __file__, "--child", args.notes, "--repeat", str(args.repeat)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd="/")
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[sys.argv.index("--repeat") + 1]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, type=Path)
    parser.add_argument("--after", default=REPO, type=Path)
    parser.add_argument("--notes", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3, help="before/after pairs, alternated")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from machine import alternated, cpu_model

    print(f"machine: {cpu_model()}, load average {os.getloadavg()[0]:.1f}")
    runs = alternated({"before": args.before, "after": args.after}, args.rounds, lambda tree: side(tree, args))
    same = len({r["digest"] for rs in runs.values() for r in rs}) == 1
    print(f"{runs['before'][0]['texts']} texts; found {'identical' if same else 'DIFFERENT'}")
    for name, rs in runs.items():
        cpus = sorted(r["cpu"] for r in rs)
        print(f"{name:<7} kinds {rs[0]['kinds']}")
        print(
            f"{name:<7} find_identifiers CPU s (best of {args.repeat}, per run): " + " ".join(f"{c:.3f}" for c in cpus)
        )
    before = sorted(r["cpu"] for r in runs["before"])[len(runs["before"]) // 2]
    after = sorted(r["cpu"] for r in runs["after"])[len(runs["after"]) // 2]
    print(f"median before {before:.3f} s, after {after:.3f} s: after/before {after / before:.2f}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
