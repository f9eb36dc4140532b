"""Benchmark: seconds to parse, segment and label one large note dense with entities, by size.

    .venv/bin/python benchmarks/large_note.py [--sizes 0.25,0.5,1,2,4] [--repeat 2] [--kb DIR] [--workdir DIR]

The note is the committed sample's notes (``data/notes.parquet``: letters, reports, prescriptions, each
with names, dates, phones and addresses) joined one after another until it has the size asked for, in
MB of HTML, labelled with the first note's patient metadata. The knowledge base is ``--kb``, else the one
built from ``kb/sources`` into ``--workdir`` (kept there for later runs). Nothing is downloaded.

Stages, each timed ``--repeat`` times in this process (best kept), with the cyclic garbage collector
paused as the command does:

* ``parse``: ``html_to_text``;
* ``segment``: ``Segmenter.token_spans``;
* ``label``: ``WeakLabeller.label_offsets``;
* ``worker``: ``label_notes`` on the note alone: what a weak-label worker does with it, parse to output
  tables, within the default limits (a note that a limit fails is reported as such).

Time per MB that stays flat as the size grows is labelling linear in the note's size.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model  # noqa: E402

from deid_ds.io.notes import open_notes  # noqa: E402
from deid_ds.label.labeller import LabelConfig, WeakLabeller  # noqa: E402
from deid_ds.report import format_table  # noqa: E402
from deid_ds.segmentation.html_text import html_to_text  # noqa: E402
from deid_ds.segmentation.notes import SegmentOptions, segmenter_for  # noqa: E402
from deid_ds.weak_labelling.batch import WeakLabelOptions, label_notes  # noqa: E402


def sample_kb(workdir: Path) -> Path:
    """The knowledge base of the committed sample's sources, built once into ``workdir``."""
    from deid_ds.kb.build import build_kb

    out = workdir / "kb"
    if not (out / "manifest.json").exists():
        sources = REPO / "kb" / "sources"
        build_kb(
            out,
            ban=sorted(str(p) for p in sources.glob("adresses-*.csv.gz")),
            health_directory=sorted(str(p) for p in sources.glob("PS_LibreAcces_Personne_activite_*.txt")),
            progress=False,
        )
    return out


def large_html(htmls: list[str], size: int) -> str:
    """The notes' HTML joined, cycling through them, until ``size`` characters at least."""
    parts, total = [], 0
    while total < size:
        html = htmls[len(parts) % len(htmls)]
        parts.append(html)
        total += len(html) + 1
    return "\n".join(parts)


def time_stages(note, options: WeakLabelOptions, repeat: int) -> dict[str, float]:
    """Best seconds of each stage on ``note`` (see the module docstring)."""
    segmenter = segmenter_for(options.segment)
    labeller = WeakLabeller.from_kb(options.label.kb_dir)
    best: dict[str, float] = {}
    for _ in range(repeat):
        gc.disable()
        try:
            t0 = time.perf_counter()
            parsed = html_to_text(note.html)
            t1 = time.perf_counter()
            spans = segmenter.token_spans(parsed.text)
            t2 = time.perf_counter()
            labeller.label_offsets(parsed.text, spans.starts, spans.ends, note.patient)
            t3 = time.perf_counter()
            tables = label_notes([note], options, ["train"])
            t4 = time.perf_counter()
        finally:
            gc.enable()
        status = tables["documents"].column("status")[0].as_py()
        for stage, seconds in (("parse", t1 - t0), ("segment", t2 - t1), ("label", t3 - t2), ("worker", t4 - t3)):
            best[stage] = min(best.get(stage, float("inf")), seconds)
        best["status"] = status
        del parsed, spans, tables
        gc.collect()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="0.25,0.5,1,2,4", help="note sizes, in MB of HTML")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--kb", type=Path, help="a built knowledge base (default: the sample's, built in --workdir)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/deid-large-note-bench"))
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    kb = args.kb or sample_kb(args.workdir)
    notes = [note for batch in open_notes(REPO / "data" / "notes.parquet").iter_batches(1000) for note in batch]
    options = WeakLabelOptions(SegmentOptions(), LabelConfig(str(kb), True))
    label_notes(notes[:20], options, ["train"] * 20)  # load the matcher, warm the memos
    print(f"machine: {cpu_model()}; Python {sys.version.split()[0]}; best of {args.repeat}")
    rows = []
    for mb in (float(s) for s in args.sizes.split(",")):
        note = replace(notes[0], id_document=f"large-{mb}", html=large_html([n.html for n in notes], int(mb * 1e6)))
        best = time_stages(note, options, args.repeat)
        total = best["parse"] + best["segment"] + best["label"]
        rows.append(
            [
                f"{mb:g}",
                *(f"{best[s]:.2f}" for s in ("parse", "segment", "label", "worker")),
                f"{total / mb:.2f}",
                best["status"],
            ]
        )
        print(
            format_table(["MB", "parse s", "segment s", "label s", "worker s", "s/MB (3 stages)", "status"], rows[-1:]),
            flush=True,
        )
    print()
    print(format_table(["MB", "parse s", "segment s", "label s", "worker s", "s/MB (3 stages)", "status"], rows))


if __name__ == "__main__":
    main()
