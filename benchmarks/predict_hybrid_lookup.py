"""Benchmark: ``predict --with-rules`` with one lookup per note shared by the knowledge features and the rules,
against the two lookups it made before (issue 30), in ``predict_batch`` (a worker's whole job), alternated.

    .venv/bin/python benchmarks/predict_hybrid_lookup.py --model out/demo/model --kb out/demo/kb \
        --notes /tmp/deid-predict-bench/notes-paired-600.parquet [--repeat 4]

The two-pass side is the same run with the features' labeller given the knowledge base under another path
(``KB/.``: another configuration, so another labeller and its own lookup). One torch thread, CPU time
(``time.process_time``), batches of 256 notes, after one warm-up run of each side; the spans are compared.
The whole command: ``predict_cpu.py --with-rules --before CHECKOUT --only-command``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from pathlib import Path

from deid_ds.io.notes import open_notes
from deid_ds.label.labeller import LabelConfig
from deid_ds.ner.predict import PredictJob, PredictOptions, model_file, predict_batch
from deid_ds.ner.runtime import set_threads
from deid_ds.segmentation.notes import SegmentOptions

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a model with knowledge features (directory or .pt)")
    parser.add_argument("--kb", required=True, help="its knowledge base, also the rules'")
    parser.add_argument("--notes", type=Path, default=REPO / "data" / "notes.parquet")
    parser.add_argument("--repeat", type=int, default=4)
    args = parser.parse_args()
    set_threads(1)
    notes = list(open_notes(args.notes).iter_notes())
    batches = [notes[i : i + 256] for i in range(0, len(notes), 256)]
    kb = str(Path(args.kb).resolve())
    shared = PredictOptions(
        str(model_file(args.model).resolve()),
        SegmentOptions(),
        "cpu",
        rules=LabelConfig(kb, True),
        features=LabelConfig(kb, True),
    )
    sides = {"two lookups (before)": replace(shared, features=LabelConfig(kb + "/.", True)), "one lookup": shared}

    def run(options: PredictOptions) -> tuple[float, list]:
        started = time.process_time()
        results = [predict_batch(PredictJob(batch, options)) for batch in batches]
        return time.process_time() - started, [result.spans for result in results]

    for options in sides.values():
        run(options)  # the models and the matchers loaded, caches warm
    seconds: dict[str, list[float]] = {name: [] for name in sides}
    spans: dict[str, list] = {}
    for _ in range(args.repeat):
        for name, options in sides.items():
            cpu, spans[name] = run(options)
            seconds[name].append(cpu)
    before, after = seconds.values()
    print(f"{len(notes)} notes, predict_batch CPU s, median of {args.repeat}, alternated:")
    for name, values in seconds.items():
        print(f"  {name}: {statistics.median(values):.3f} ({', '.join(f'{v:.2f}' for v in values)})")
    print(f"  ratio after/before: {statistics.median(a / b for a, b in zip(after, before)):.3f}")
    print(f"  same spans: {len(set(map(repr, spans.values()))) == 1}")


if __name__ == "__main__":
    main()
