"""``predict --engine spark``: the local engine's batch function (:func:`~deid_ds.ner.predict.predict_batch`)
run by Spark's executors, the outputs streamed into the same files on the driver.

The model file (and, in hybrid mode, the knowledge base; a Punkt file) is shipped to the executors once
(``SparkContext.addFile``); each Python worker loads the tagger once and keeps it
(:func:`~deid_ds.ner.predict.load_tagger`'s cache), with as many torch threads as a task has cores
(``spark.task.cpus``). ``spans.parquet`` and ``documents.parquet`` come out in input order, like the
local engine's; the report's counts are summed from one ``stats`` row per batch.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from deid_ds.engine import spark as engine
from deid_ds.io.output_dir import signed_directory
from deid_ds.ner.predict import BatchResult, PredictJob, PredictOptions, PredictReport, documents_schema, predict_batch


def stats_schema():
    """One row per batch: what :class:`~deid_ds.ner.predict.BatchResult` counts beside its tables."""
    import pyarrow as pa

    return pa.schema(
        [
            ("sentences", pa.int64()),
            ("tokens", pa.int64()),
            ("seconds_tagging", pa.float64()),
            ("ignored_labels", pa.string()),
        ]
    )


@dataclass(frozen=True)
class PredictBatch:
    """The batch function run in the executors: :func:`predict_batch` on the shipped files, as tables."""

    options: PredictOptions  # model, Punkt and knowledge base as shipped names

    def __call__(self, notes, duplicates: frozenset[int]) -> dict:
        import pyarrow as pa

        from deid_ds.weak_labelling.schemas import spans_schema

        options = self.options
        rules = options.rules and replace(options.rules, kb_dir=engine.shipped(options.rules.kb_dir))
        segment = replace(options.segment, punkt_path=engine.shipped(options.segment.punkt_path))
        options = replace(options, model=engine.shipped(options.model), segment=segment, rules=rules)
        result = predict_batch(PredictJob(list(notes), options, duplicates))
        stats = {
            "sentences": [result.sentences],
            "tokens": [result.tokens],
            "seconds_tagging": [result.seconds_tagging],
            "ignored_labels": [json.dumps(result.ignored_labels, sort_keys=True)],
        }
        return {
            "documents": pa.Table.from_pydict(result.documents, schema=documents_schema()),
            "spans": pa.Table.from_pydict(result.spans, schema=spans_schema()),
            "stats": pa.Table.from_pydict(stats, schema=stats_schema()),
        }


def ship_options(spark, options: PredictOptions) -> PredictOptions:
    """``options`` with the model, Punkt and knowledge base paths replaced by their shipped names."""
    punkt, rules = options.segment.punkt_path, options.rules
    threads = int(spark.sparkContext.getConf().get("spark.task.cpus", "1"))
    return replace(
        options,
        model=engine.ship(spark, options.model),
        segment=replace(options.segment, punkt_path=engine.ship(spark, punkt) if punkt else None),
        rules=rules and replace(rules, kb_dir=engine.ship(spark, rules.kb_dir) if rules.kb_dir else None),
        threads=threads,
    )


def predict_spark(
    notes: str | Path,
    out: str | Path,
    options: PredictOptions,
    *,
    column_map: Mapping[str, str] | None,
    batch_size: int,
    spark_master: str | None,
    log: Callable[[str], None],
) -> PredictReport:
    """:func:`deid_ds.ner.predict.predict` on Spark (options checked by it; module docstring)."""
    import pyarrow.parquet as pq

    from deid_ds.weak_labelling.schemas import spans_schema

    started = time.perf_counter()
    read = engine.open_input("predict", notes, column_map, spark_master, log)
    spark, n_notes = read.spark, read.n_notes
    outputs = {"documents": documents_schema(), "spans": spans_schema(), "stats": stats_schema()}
    work = engine.work_path(out)
    datasets = engine.run_batches(
        read.notes, PredictBatch(ship_options(spark, options)), outputs, work, batch_size, read.duplicates, log
    )
    report = PredictReport(
        model=options.model,
        device=options.device,
        workers=spark.sparkContext.defaultParallelism,
        hybrid_kb=options.rules.kb_dir if options.rules else None,
        hybrid=options.rules is not None,
    )
    no_documents: dict[str, list] = {"status": [], "error": []}  # what report.add reads of a batch's tables
    no_spans: dict[str, list] = {"label": [], "source": []}
    with engine.local_datasets(spark, datasets) as local:
        parts = engine.DatasetParts({name: (local[name], schema) for name, schema in outputs.items()})
        with engine.output_directory(spark, out) as target, signed_directory(target, "predict") as tmp:
            for name in ("spans", "documents"):
                with pq.ParquetWriter(tmp / f"{name}.parquet", outputs[name]) as writer:
                    for table in parts.tables(name):
                        writer.write_table(table)
                        if name == "documents":
                            report.add(BatchResult(table.select(["status", "error"]).to_pydict(), no_spans))
                        else:
                            report.add(BatchResult(no_documents, table.select(["label", "source"]).to_pydict()))
            for table in parts.tables("stats"):
                for row in table.to_pylist():
                    report.add(
                        BatchResult(
                            no_documents,
                            no_spans,
                            row["sentences"],
                            row["tokens"],
                            json.loads(row["ignored_labels"]),
                            row["seconds_tagging"],
                        )
                    )
            report.seconds = time.perf_counter() - started
            if report.documents != n_notes:  # pragma: no cover - a reader bug, never silent
                raise RuntimeError(f"read {report.documents} notes but the input holds {n_notes}")
            (tmp / "report.json").write_text(
                json.dumps(report.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8"
            )
    engine.remove(spark, work)
    return report
