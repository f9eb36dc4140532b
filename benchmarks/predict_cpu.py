"""Benchmark: ``deid-ds predict`` on CPU, in 3 KB notes per second per core, and where the time goes.

Target: at least 100 notes of ~3 KB per second per core, the whole command, on CPU.

    .venv/bin/python benchmarks/predict_cpu.py --model out/demo/model [--notes data/notes.parquet]
        [--kb out/demo/kb] [--min-notes 600] [--unpaired] [--repeat 2] [--workdir /tmp/deid-predict-bench]
        [--skip-command | --only-command | --paths-only] [--runs 1x1,2x1,1x2] [--model OTHER ...]

``--kb``: the knowledge base a model with knowledge features needs (``predict --kb``); with ``--with-rules``
the command runs are hybrid (``predict --with-rules KB``: the rules and the features share one lookup per
note). ``--before CHECKOUT`` (a directory holding another revision's ``deid_ds``, e.g. ``git archive``'d):
each command run is made with it and with this tree, alternated. ``--model`` may be
given several times (a full model and its fast student, say): the in-process tables are for the first; the
"direct or Flair" table and the command's are for each, the models' runs alternated.

Notes: the notes of ``--notes`` (default: the 300-note sample, ~1.9 KB of HTML each) joined two by two
within each patient (``weak_label.py``'s :func:`paired`: the same HTML in notes ~1.75 times longer; the
mean size is printed; ``--unpaired``: as they are, for notes of ~3 KB already), copied under new ids until there
are ``--min-notes``.

In this process, one torch thread, CPU time (``time.process_time``: a neighbour's load on the other core
does not inflate it), best of ``--repeat``, notes in batches of 256 as the command reads them:

* ``tagging, Flair as is``: ``SequenceTagger.predict`` on each batch's sentences, mini-batches of 32, on
  a tagger loaded by Flair alone: what ``predict`` did before its own tagging loop;
* ``tagging, deid-ds``: :func:`deid_ds.ner.speed.tag_sentences` on a tagger from
  :func:`deid_ds.ner.predict.load_tagger`, for several mini-batch sizes (the outputs are compared with
  Flair's: "same spans" counts the sentences whose spans are identical);
* ``tagging, int8 LSTMs``: the same with every LSTM quantised (``torch.ao.quantization.quantize_dynamic``);
* the breakdown of ``predict_batch`` (the worker's whole job on a batch): reading the notes is not in it,
  parse + segment + Flair ``Sentence`` objects, each embedding alone (fastText, each Flair language
  model, the character BiLSTM), the tagger's BiLSTM + linear + CRF (``forward``) and Viterbi decoding,
  and the rest (Flair's bookkeeping, spans back to offsets, the output columns).

Then ``predict_batch`` through :mod:`deid_ds.ner.direct` (the default) and through Flair's ``Sentence`` objects
(``PredictOptions(direct=False)``: the code before the direct path), alternated ``--repeat`` times in this
process on each model, with the number of notes whose spans differ (``--paths-only``: only this table).

Then the command end to end (``python -m deid_ds predict``, ``--quiet``), in a fresh interpreter each time,
at 1 worker × 1 thread, 2 workers × 1 thread and 1 worker × 2 threads: wall seconds and CPU seconds (its
own and its workers'), and the fixed cost (imports, loading the model, writing the output) measured on
a one-note input, so that the per-note figure of a large input can be read off.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model  # noqa: E402
from weak_label import paired  # noqa: E402

from deid_ds.report import format_table  # noqa: E402

BATCH = 256


def corpus(notes: Path, work: Path, min_notes: int, unpaired: bool = False) -> Path:
    """``paired(notes)`` (``notes`` as they are with ``unpaired``) copied under new ids (``id~k``) until it has
    at least ``min_notes`` notes."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    out = work / f"{notes.stem}-{'unpaired' if unpaired else 'paired'}-{min_notes}.parquet"
    if not out.exists():
        table = pq.read_table(notes if unpaired else paired(notes, work / f"{notes.stem}-paired.parquet"))
        copies = []
        k = 0
        while sum(t.num_rows for t in copies) < min_notes:
            ids = pc.binary_join_element_wise(table["id_document"], pa.scalar(f"~{k}"), "")
            copies.append(table.set_column(table.schema.get_field_index("id_document"), "id_document", ids))
            k += 1
        pq.write_table(pa.concat_tables(copies), out)
    return out


def note_sentences(notes, segmenter):
    """Parse, segment and build the Flair sentences of ``notes`` as ``predict_batch`` does."""
    from flair.data import Sentence

    from deid_ds.segmentation.notes import segment_note
    from deid_ds.weak_labelling.render import flair_token

    sentences = []
    for note in notes:
        status, parsed, compact = segment_note(note, segmenter)
        if status.status != "ok":
            continue
        text, bounds = parsed.text, compact.bounds
        for k in range(len(bounds) - 1):
            a, b = bounds[k], bounds[k + 1]
            sentences.append(Sentence([flair_token(text[s:e]) for s, e in zip(compact.starts[a:b], compact.ends[a:b])]))
    return sentences


def spans_of(sentences, label_type: str) -> list[list[tuple[int, int, str]]]:
    from deid_ds.ner.predict import sentence_entities

    return [sentence_entities(sentence, label_type) for sentence in sentences]


class Timer:
    """CPU seconds spent in wrapped callables, by name (instance attributes: Flair calls them through ``self``)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, owner, attribute: str, name: str) -> None:
        inner = getattr(owner, attribute)

        def timed(*args, **kwargs):
            started = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.process_time() - started

        setattr(owner, attribute, timed)


def embedding_name(embedding) -> str:
    kind = type(embedding).__name__
    if kind == "FlairEmbeddings":
        return f"Flair LM, {'forward' if embedding.is_forward_lm else 'backward'}"
    return {
        "FastTextEmbeddings": "fastText",
        "BatchedCharacterEmbeddings": "characters (BiLSTM)",
        "CharacterEmbeddings": "characters (BiLSTM)",
    }.get(kind, kind)


def features_for(model_path: str, kb: str | None):
    """The ``PredictOptions.features`` of a model: its knowledge base's labeller config, None without features."""
    from deid_ds.label.labeller import LabelConfig
    from deid_ds.ner.knowledge import knowledge_embedding_of
    from deid_ds.ner.predict import load_tagger

    if knowledge_embedding_of(load_tagger(model_path, "cpu")) is None:
        return None
    if kb is None:
        raise SystemExit(f"{model_path}: a model with knowledge features: give --kb")
    return LabelConfig(str(Path(kb).resolve()), True)


def paths(models: list[str], notes_path: Path, kb: str | None, repeat: int) -> list[list]:
    """CPU seconds of ``predict_batch`` on every batch, direct and through Flair, alternated (median of ``repeat``)."""
    from dataclasses import replace

    import torch

    from deid_ds.defaults import DEFAULT_MAX_TOKENS
    from deid_ds.io.notes import open_notes
    from deid_ds.ner.predict import PredictJob, PredictOptions, predict_batch
    from deid_ds.segmentation.notes import SegmentOptions

    torch.set_num_threads(1)
    notes = list(open_notes(notes_path).iter_notes())
    batches = [notes[i : i + BATCH] for i in range(0, len(notes), BATCH)]
    runs = []
    for model in models:
        segment = SegmentOptions(None, DEFAULT_MAX_TOKENS)
        options = PredictOptions(model, segment, "cpu", features=features_for(model, kb))
        predict_batch(PredictJob(batches[0][:4], options))  # load the model and the knowledge base first
        runs += [(model, replace(options, direct=direct)) for direct in (False, True)]
    seconds: dict[tuple[str, bool], list[float]] = {}
    spans: dict[tuple[str, bool], list] = {}
    for _ in range(repeat):
        for model, options in runs:
            started = time.process_time()
            results = [predict_batch(PredictJob(batch, options)) for batch in batches]
            seconds.setdefault((model, options.direct), []).append(time.process_time() - started)
            spans[model, options.direct] = [list(zip(*r.spans.values())) for r in results]
    rows = []
    for model, options in runs:
        key = (model, options.direct)
        cpu = statistics.median(seconds[key])
        direct, through_flair = _by_note(spans[model, True]), _by_note(spans[model, False])
        differ = sum(direct.get(note) != through_flair.get(note) for note in direct.keys() | through_flair.keys())
        name = f"{Path(model).parent.name}, {'direct' if options.direct else 'through Flair'}"
        rows.append([name, cpu, len(notes) / cpu, f"{differ} notes differ" if options.direct else "reference"])
    return rows


def _by_note(batches: list[list[tuple]]) -> dict[str, list[tuple]]:
    """The span rows of every batch grouped by note (``id_document`` first)."""
    notes: dict[str, list[tuple]] = {}
    for rows in batches:
        for row in rows:
            notes.setdefault(row[0], []).append(row)
    return notes


def in_process(model_path: str, notes_path: Path, repeat: int, kb: str | None = None) -> tuple[list[list], dict]:
    import torch
    from flair.models import SequenceTagger
    from torch.ao.quantization import quantize_dynamic

    import deid_ds.ner.knowledge  # noqa: F401 - registers the knowledge embedding for SequenceTagger.load
    from deid_ds.defaults import DEFAULT_MAX_TOKENS
    from deid_ds.io.notes import open_notes
    from deid_ds.ner.predict import PredictJob, PredictOptions, load_tagger, predict_batch
    from deid_ds.ner.speed import tag_sentences
    from deid_ds.segmentation.notes import SegmentOptions, segmenter_for

    torch.set_num_threads(1)
    notes = list(open_notes(notes_path).iter_notes())
    batches = [notes[i : i + BATCH] for i in range(0, len(notes), BATCH)]
    segment = SegmentOptions(None, DEFAULT_MAX_TOKENS)
    segmenter = segmenter_for(segment)
    flair_tagger = SequenceTagger.load(model_path)
    flair_tagger.eval()
    ours = load_tagger(model_path, "cpu")
    quantized = SequenceTagger.load(model_path)
    quantized.eval()
    from deid_ds.ner.speed import speed_up

    speed_up(quantized)
    for name, module in list(quantized.named_children()):
        if name != "linear":  # Flair reads linear.weight.dtype, which a quantised Linear has not
            setattr(quantized, name, quantize_dynamic(module, {torch.nn.LSTM}, dtype=torch.qint8))

    def tag(tagger, mini_batch: int, flair_as_is: bool):
        """CPU seconds tagging every batch (best of ``repeat``), and the spans of the last run."""
        best, found = float("inf"), []
        for _ in range(repeat):
            found, total = [], 0.0
            for batch in batches:
                sentences = note_sentences(batch, segmenter)
                started = time.process_time()
                if flair_as_is:
                    tagger.predict(sentences, mini_batch_size=mini_batch, verbose=False)
                else:
                    tag_sentences(tagger, sentences, mini_batch)
                total += time.process_time() - started
                found += spans_of(sentences, tagger.label_type)
            best = min(best, total)
        return best, found

    n = len(notes)
    rows = []
    reference_s, reference = tag(flair_tagger, 32, True)
    rows.append(["tagging, Flair as is (mini-batch 32)", reference_s, n / reference_s, "reference"])
    for mini_batch in (32, 64, 128, 256):
        seconds, found = tag(ours, mini_batch, False)
        same = sum(a == b for a, b in zip(found, reference))
        rows.append([f"tagging, deid-ds (mini-batch {mini_batch})", seconds, n / seconds, f"{same}/{len(reference)}"])
    seconds, found = tag(quantized, 128, False)
    same = sum(a == b for a, b in zip(found, reference))
    rows.append(["tagging, deid-ds, int8 LSTMs (128)", seconds, n / seconds, f"{same}/{len(reference)}"])

    # The breakdown of predict_batch, wrapped callables timed inside one run of every batch.
    timer = Timer()
    for embedding in ours.embeddings.embeddings:
        timer.wrap(embedding, "embed", "embedding: " + embedding_name(embedding))
    timer.wrap(ours, "forward", "BiLSTM + linear + CRF scores")
    timer.wrap(ours.viterbi_decoder, "decode", "Viterbi decoding")
    options = PredictOptions(model_path, segment, "cpu", features=features_for(model_path, kb), direct=False)
    segment_s = 0.0
    whole = float("inf")
    for _ in range(repeat):
        timer.seconds.clear()
        started = time.process_time()
        for batch in batches:
            predict_batch(PredictJob(batch, options))
        whole = min(whole, time.process_time() - started)
    parts = dict(timer.seconds)
    started = time.process_time()
    for batch in batches:
        note_sentences(batch, segmenter)
    segment_s = time.process_time() - started
    breakdown = [["parse + segment + Flair sentences", segment_s]]
    breakdown += [[name, seconds] for name, seconds in parts.items()]
    breakdown.append(["other (Flair bookkeeping, spans, output columns)", whole - segment_s - sum(parts.values())])
    breakdown.append(["predict_batch, whole", whole])
    for row in breakdown:
        row += [f"{100 * row[1] / whole:.0f}%", n / row[1] if row[1] > 0 else float("inf")]
    sentences = sum(len(note_sentences(batch, segmenter)) for batch in batches)
    return rows, {"breakdown": breakdown, "sentences": sentences}


COMMAND_CODE = (
    "import resource, subprocess, sys, time, json\n"
    "started = time.perf_counter()\n"
    "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps([time.perf_counter() - started, usage.ru_utime + usage.ru_stime]))\n"
)


def command(
    model: str,
    notes: Path,
    workers: int,
    threads: int,
    repeat: int,
    kb: str | None = None,
    with_rules: bool = False,
    root: Path = REPO,
):
    """Best wall and CPU seconds of ``deid-ds predict`` (all its processes) over ``repeat`` runs, with the
    ``deid_ds`` of ``root``; ``with_rules``: hybrid, the rules from ``kb``."""
    import json

    best_wall, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            argv = [sys.executable, "-m", "deid_ds", "predict", model, str(notes), "--out", f"{tmp}/out", "--quiet"]
            argv += ["--device", "cpu", "--workers", str(workers), "--threads", str(threads)]
            argv += [("--with-rules" if with_rules else "--kb"), kb] if kb else []
            env = {**os.environ, "PYTHONPATH": str(root)}
            done = subprocess.run(
                [sys.executable, "-c", COMMAND_CODE, *argv], capture_output=True, text=True, check=True, env=env
            )
            wall, cpu = json.loads(done.stdout.strip().splitlines()[-1])
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    return best_wall, best_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", required=True, action="append", help="a predict MODEL (directory or .pt); repeat to compare"
    )
    parser.add_argument("--notes", type=Path, default=REPO / "data" / "notes.parquet")
    parser.add_argument("--kb", help="knowledge base for a model with knowledge features (predict --kb)")
    parser.add_argument("--with-rules", action="store_true", help="the command runs hybrid, the rules from --kb")
    parser.add_argument("--before", type=Path, help="a checkout of the reference revision: alternated with this one")
    parser.add_argument("--min-notes", type=int, default=600)
    parser.add_argument(
        "--unpaired",
        action="store_true",
        help="the notes of --notes as they are, not joined two by two (~3 KB already)",
    )
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "deid-predict-bench")
    parser.add_argument("--skip-command", action="store_true", help="only the in-process figures")
    parser.add_argument("--only-command", action="store_true", help="only the command's figures")
    parser.add_argument("--paths-only", action="store_true", help="only the direct-or-Flair table")
    parser.add_argument(
        "--runs", default="1x1,2x1,1x2", help="the command's WORKERSxTHREADS runs, comma-separated [1x1,2x1,1x2]"
    )
    args = parser.parse_args()

    import pyarrow.parquet as pq

    from deid_ds.ner.predict import model_file

    args.workdir.mkdir(parents=True, exist_ok=True)
    models = [str(model_file(model).resolve()) for model in args.model]
    notes = corpus(args.notes, args.workdir, args.min_notes, args.unpaired)
    html = [h for h in pq.read_table(notes, columns=["html"])["html"].to_pylist() if h]
    size_kb = statistics.mean(len(h.encode("utf-8")) for h in html) / 1000
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}")
    print(f"notes: {len(html)} of {size_kb:.2f} KB of HTML on average ({notes.name}); models {', '.join(models)}\n")

    if not args.only_command and not args.paths_only:
        rows, details = in_process(models[0], notes, args.repeat, args.kb)
        print(f"{details['sentences']} sentences\n")
        print(
            format_table(
                ["in this process, 1 thread", "CPU s", "notes/s", "same spans"],
                rows,
                title="Tagging alone (CPU time, best of --repeat)",
            )
        )
        print()
        print(
            format_table(
                ["predict_batch, 1 thread, mini-batch 128", "CPU s", "share", "notes/s"],
                details["breakdown"],
                title="Where a worker's time goes (through Flair's Sentence objects)",
            )
        )
    if not args.only_command:
        print()
        print(
            format_table(
                ["predict_batch, 1 thread, mini-batch 128", "CPU s", "notes/s", "spans"],
                paths(models, notes, args.kb, args.repeat),
                title="Direct or through Flair (CPU time, median of --repeat, alternated)",
            )
        )
    if args.skip_command or args.paths_only:
        return
    one = args.workdir / "one-note.parquet"
    pq.write_table(pq.read_table(notes).slice(0, 1), one)
    rows = []
    for run in args.runs.split(","):
        workers, threads = (int(n) for n in run.split("x"))
        fixed: dict[tuple[str, str], float] = {}
        best: dict[tuple[str, str], tuple[float, float]] = {}
        sides = {"": REPO} if args.before is None else {"before, ": args.before.resolve(), "after, ": REPO}
        runs = [(side, model) for model in models for side in sides]
        for _ in range(args.repeat):  # the models (and revisions) alternated, best of --repeat each
            for side, model in runs:
                key = (side, model)
                _, fixed_cpu = command(model, one, workers, threads, 1, args.kb, args.with_rules, sides[side])
                wall, cpu = command(model, notes, workers, threads, 1, args.kb, args.with_rules, sides[side])
                fixed[key] = min(fixed.get(key, float("inf")), fixed_cpu)
                best[key] = min(best.get(key, (float("inf"),) * 2), (cpu, wall))
        for side, model in runs:
            cpu, wall = best[(side, model)]
            cores = workers * threads
            rows.append(
                [
                    f"{side}{Path(model).parent.name}: {workers} worker(s) x {threads} thread(s)",
                    wall,
                    cpu,
                    fixed[(side, model)],
                    len(html) / wall / cores,
                    len(html) / cpu,
                    (len(html) - 1) / max(cpu - fixed[(side, model)], 1e-9),
                ]
            )
    print()
    print(
        format_table(
            ["deid-ds predict", "wall s", "CPU s", "CPU s, 1 note", "notes/s/core (wall)", "notes/s/CPU s", "marginal"],
            rows,
            title=f"The command, {len(html)} notes of {size_kb:.2f} KB (best of --repeat; marginal: less a 1-note run)",
        )
    )
    print(f"\npeak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
