"""Benchmark: what caching from note to note could still earn, at most: every note de-identified twice in one process.

    .venv/bin/python benchmarks/deidentify_warm.py --notes N.parquet --spans GOLD.parquet [--passes 3]

Each pass parses every note, runs ``deidentify_document`` (surrogate mode, a fixed key, the patient's entities as
the command gives them) and the residual-leak check on its output, and prints its CPU seconds. The first pass is
what the command does; the later ones find every cache filled (each patient's needles and names, the keyed digests,
the regions and texts seen, the compiled patterns): as if every note were a later note of a patient, and of a
template, already seen. The difference bounds what any cache kept from note to note can earn; what is left is the
work each note costs on its own. Start-up, reading and writing are not in it (``benchmarks/deidentify_command.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model

from deid_ds.deidentification.batch import read_spans_by_document, scope_entities
from deid_ds.deidentification.context import Context
from deid_ds.deidentification.document import deidentify_document
from deid_ds.deidentification.identifiers import note_identifiers
from deid_ds.deidentification.keyed import Keyring
from deid_ds.deidentification.leaks import find_leaks
from deid_ds.deidentification.pools import load_pools
from deid_ds.io.notes import open_notes
from deid_ds.segmentation.html_text import html_to_text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", required=True)
    parser.add_argument("--spans", required=True)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    notes = [n for batch in open_notes(args.notes).iter_batches(4096) for n in batch]
    spans = read_spans_by_document(args.spans)
    keyring, pools = Keyring(b"benchmark key of 32 bytes at least"), load_pools(None)
    documents: dict[str | None, list[str]] = {}
    for note in notes:
        documents.setdefault(note.id_patient, []).append(note.id_document)
    entities = {patient: scope_entities(ids, spans) for patient, ids in documents.items()}

    def one_pass() -> float:
        started = time.process_time()
        for note in notes:
            parsed = html_to_text(note.html)
            ctx = Context(keyring, pools, f"patient:{note.id_patient}", note.patient)
            outcome = deidentify_document(
                parsed, spans.get(note.id_document, []), ctx, "surrogate", scope_entities=entities[note.id_patient]
            )
            if outcome.html is not None:
                find_leaks(outcome.html, note.patient, note_identifiers(parsed))
        return time.process_time() - started

    print(f"machine: {cpu_model()}, load average {os.getloadavg()[0]:.1f}")
    print(f"{len(notes)} notes, {len(documents)} patients; CPU s of each pass (the first cold, then warm)")
    times = [one_pass() for _ in range(args.passes)]
    print(
        " ".join(f"{t:.2f}" for t in times),
        f"-> {len(notes) / times[0]:.0f} then {len(notes) / min(times[1:] or times):.0f} notes/s",
    )


if __name__ == "__main__":
    main()
