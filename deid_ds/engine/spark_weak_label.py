"""``weak-label --engine spark``: the local engine's batch function and assembly, the batches on Spark.

1. The identifiers are read first (a column projection): the patient split is decided from the set of
   patient groups by :func:`~deid_ds.weak_labelling.split.assign_splits` on the driver — the very
   function the local engine calls, so the split does not depend on partitioning — and the notes whose
   id an earlier note had are found (they are failed, as locally).
2. The knowledge base (with its compiled ``matcher.npz``) and the Punkt parameters are shipped to the
   executors once; each Python worker loads its labeller once (:func:`labeller_for`'s cache).
3. :func:`~deid_ds.weak_labelling.batch.label_notes` labels each batch in the executors
   (:func:`~deid_ds.engine.spark.run_batches`); its tables are written by Spark in input order.
4. The driver streams them through :func:`~deid_ds.weak_labelling.assemble.assemble` — the local
   engine's assembly — into the output directory, which appears atomically.

No resumption: Spark retries failed tasks itself; a failed job is run again from the start (the work
directory ``OUT.spark-partial`` is overwritten, and ``OUT`` stays as it was until the new one is complete).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from deid_ds.engine import spark as engine
from deid_ds.segmentation.notes import SegmentOptions
from deid_ds.weak_labelling.assemble import Run, assemble
from deid_ds.weak_labelling.batch import label_notes
from deid_ds.weak_labelling.options import WeakLabelOptions
from deid_ds.weak_labelling.report import WeakLabelReport
from deid_ds.weak_labelling.schemas import documents_schema, gold_tokens_schema, sentences_schema, spans_schema
from deid_ds.weak_labelling.split import assign_splits, patient_group


def lines_schema():
    """The rendered columns of a sentence (:func:`deid_ds.weak_labelling.render.render_lines`)."""
    import pyarrow as pa

    return pa.schema([("jsonl", pa.string()), ("flair", pa.string())])


def ship_options(spark, options: WeakLabelOptions) -> WeakLabelOptions:
    """``options`` with the knowledge base and Punkt paths replaced by the names they are shipped under."""
    punkt, kb = options.segment.punkt_path, options.label.kb_dir
    return replace(
        options,
        segment=replace(options.segment, punkt_path=engine.ship(spark, punkt) if punkt else None),
        label=replace(options.label, kb_dir=engine.ship(spark, kb) if kb else None),
    )


@dataclass(frozen=True)
class LabelBatch:
    """The batch function run in the executors: :func:`label_notes` with each note's split from the
    broadcast patient split; a batch's ``lines`` travel as columns of its ``sentences`` (row for row)."""

    options: WeakLabelOptions  # with shipped names (:func:`ship_options`)
    group_split: object  # Broadcast of {patient group: split}
    gold_ids: frozenset[str] | None = None

    def __call__(self, notes, duplicates: frozenset[int]) -> dict:
        options = replace(
            self.options,
            segment=SegmentOptions(engine.shipped(self.options.segment.punkt_path), self.options.segment.max_tokens),
            label=replace(self.options.label, kb_dir=engine.shipped(self.options.label.kb_dir)),
        )
        group_split = self.group_split.value
        splits = [group_split[patient_group(note.id_document, note.id_patient)] for note in notes]
        tables = label_notes(notes, options, splits, duplicates, self.gold_ids)
        lines = tables.pop("lines")
        for name in lines.column_names:
            tables["sentences"] = tables["sentences"].append_column(name, lines.column(name))
        return tables


def weak_label_spark(
    notes: str | Path,
    out: str | Path,
    options: WeakLabelOptions,
    *,
    column_map: Mapping[str, str] | None,
    batch_size: int,
    shares: tuple[float, float, float],
    seed: int,
    gold_frame,
    spark_master: str | None,
    log: Callable[[str], None],
    sentences_jsonl: bool = False,
) -> WeakLabelReport:
    """:func:`deid_ds.weak_labelling.weak_label` on Spark (options checked by it; module docstring)."""
    import pyarrow as pa

    started = time.perf_counter()
    read = engine.open_input("weak-label", notes, column_map, spark_master, log, groups=True)
    spark, n_notes = read.spark, read.n_notes
    group_split = assign_splits(read.groups, shares, seed)
    gold_ids = frozenset(gold_frame["id_document"]) if gold_frame is not None else None
    split_broadcast = spark.sparkContext.broadcast(group_split)
    outputs = {
        "documents": documents_schema(with_split=False),
        "spans": spans_schema(),
        "sentences": pa.schema(list(sentences_schema(with_split=False)) + list(lines_schema())),
    }
    if gold_ids is not None:
        outputs["gold_tokens"] = gold_tokens_schema()
    work = engine.work_path(out)
    try:
        datasets = engine.run_batches(
            read.notes,
            LabelBatch(ship_options(spark, options), split_broadcast, gold_ids),
            outputs,
            work,
            batch_size,
            read.duplicates,
            log,
        )
        report = WeakLabelReport(split_shares=list(shares), seed=seed, batches=0, batches_resumed=0)
        with engine.local_datasets(spark, datasets) as local:
            sources = {name: (local[name], schema) for name, schema in outputs.items() if name != "sentences"}
            sources["sentences"] = (local["sentences"], sentences_schema(with_split=False))
            sources["lines"] = (local["sentences"], lines_schema())
            if "gold_tokens" not in sources:
                sources["gold_tokens"] = (local["documents"].parent / "no-gold", gold_tokens_schema())
            run = Run(engine.DatasetParts(sources), n_notes, shares, seed, started, n_notes, group_split)
            assembling = time.perf_counter()
            with engine.output_directory(spark, out) as target:
                assemble(run, target, gold_frame, report, sentences_jsonl)
            log(f"outputs assembled in {time.perf_counter() - assembling:.1f} s")
    finally:
        split_broadcast.unpersist()
    engine.remove(spark, work)
    return report
