"""``deidentify --engine spark``: the local engine's batch function
(:func:`~deid_ds.deidentification.pipeline.deidentify_batch`) run by Spark's executors, the outputs
streamed into the same files on the driver.

* **The input's columns named by** ``--keep-column`` are read with the notes
  (:func:`~deid_ds.engine.spark.read_notes` with ``others``) and each batch gets its rows of them, written
  back unchanged beside the de-identified HTML; the other columns are dropped, as locally.
* **The spans** are read by Spark (Parquet, a directory holding ``spans.parquet``, or JSONL), grouped
  by ``id_document`` (in the spans table's row order, as the local reader lists them) and left-joined
  to the notes: each note travels to its executor with its own spans, and no process ever holds the
  whole spans table. Rows without a label or start offset are skipped and missing offsets refused, as
  locally. One difference, an edge case: a note *without* an id is named ``FILE#rowN`` by the reader,
  and locally spans under that name would reach it; here the join is on the id column, so it gets none.
* **The secret key** travels to the executors inside the pickled batch function (the task's closure),
  never written to a file by deid-ds, never logged (:class:`~deid_ds.deidentification.keyed.Keyring`'s
  repr hides it). On a real cluster, turn Spark's encryption on so that it does not cross the network
  or reach local disks in clear: ``spark.network.crypto.enabled=true`` (and ``spark.authenticate``),
  ``spark.io.encryption.enabled=true``.
* The knowledge base (surrogate places) is shipped to the executors once (``SparkContext.addFile``).
* ``--model`` is refused for now: run ``predict --engine spark`` first, then ``deidentify --spans``.

``notes.parquet``, ``audit.parquet`` and ``documents.parquet`` come out in input order, like the local
engine's; the report's counts are summed from one ``stats`` row per batch. The output directory is
replaced atomically, the work directory ``OUT.spark-partial`` removed. With ``--fail-on-leak``, the
batches' leak counts are summed first, and an output with leaks goes to ``OUT.leaks`` instead of ``OUT``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from deid_ds.deidentification.context import scope_of
from deid_ds.deidentification.document import SpanIn
from deid_ds.deidentification.leaks import LeakCounts
from deid_ds.deidentification.pipeline import (
    BatchResult,
    DeidentifyReport,
    DeidJob,
    DeidOptions,
    _notes_table,
    audit_schema,
    check_keep_columns,
    deidentify_batch,
    documents_schema,
    leaks_path,
    new_report,
    own_columns,
)
from deid_ds.engine import spark as engine
from deid_ds.errors import InputError
from deid_ds.io.output_dir import check_output_dir, signed_directory
from deid_ds.model import PATIENT_FIELDS

SPANS = "_spans"  # the column of each note's spans, joined on
SCOPE_ENTITIES = "_scope_entities"  # the (label, text) of every span of the note's patient, joined on


def stats_schema():
    """One row per batch: what :class:`~deid_ds.deidentification.pipeline.BatchResult` counts beside its tables."""
    import pyarrow as pa

    return pa.schema(
        [
            ("per_label", pa.string()),
            ("fallbacks", pa.string()),
            ("leaks", pa.string()),
            ("per_view", pa.string()),
            ("blanked", pa.string()),
        ]
    )


@dataclass(frozen=True)
class DeidBatch:
    """The batch function run in the executors: :func:`deidentify_batch` on a batch and its spans, as tables."""

    options: DeidOptions  # the knowledge base as a shipped name; the key inside (module docstring)
    notes_schema: object  # pyarrow.Schema of notes.parquet

    def __call__(self, notes, duplicates: frozenset[int], others) -> dict:
        import pyarrow as pa

        spans = [
            [SpanIn(s["label"], s["html_start"], s["html_end"], s["source"], s["text"]) for s in row or ()]
            for row in others.column(SPANS).to_pylist()
        ]
        entities = {
            scope_of(note.id_patient, note.id_document): tuple((e["label"], e["text"]) for e in row)
            for note, row in zip(notes, others.column(SCOPE_ENTITIES).to_pylist())
            if row
        }
        extras = others.drop_columns([SPANS, SCOPE_ENTITIES])
        options = replace(self.options, kb=engine.shipped(self.options.kb))
        result = deidentify_batch(DeidJob(list(notes), extras, spans, duplicates, options, entities))
        stats = {
            "per_label": [json.dumps(result.per_label)],
            "fallbacks": [json.dumps(result.fallbacks)],
            "leaks": [json.dumps(result.leaks.to_dict())],
            "per_view": [json.dumps(result.per_view)],
            "blanked": [json.dumps(result.blanked)],
        }
        return {
            "notes": _notes_table(result, self.notes_schema),
            "documents": pa.Table.from_pydict(result.documents, schema=documents_schema()),
            "audit": pa.Table.from_pydict(result.audit, schema=audit_schema(options.audit_originals)),
            "stats": pa.Table.from_pydict(stats, schema=stats_schema()),
        }


def read_spans(spark, path: str | Path):
    """The spans table as Spark reads it: ``id_document`` (string), ``label``, offsets, ``source``, ``text``,
    with the file and row of each span (the order the local reader keeps)."""
    from pyspark.sql import functions as F

    if engine.is_local(path) and Path(path).is_dir() and (Path(path) / "spans.parquet").exists():
        path = Path(path) / "spans.parquet"
    jsonl = str(path).lower().endswith((".jsonl", ".json"))
    try:
        frame = (spark.read.json if jsonl else spark.read.parquet)(engine.spark_path(path))
    except Exception as error:
        raise InputError(
            f"{path}: Spark cannot read it as a spans table (Parquet or JSONL; {type(error).__name__})"
        ) from None
    missing = [c for c in ("id_document", "label", "html_start", "html_end") if c not in frame.columns]
    if missing:
        raise InputError(
            f"{path}: spans column(s) {', '.join(missing)} not found (columns: {', '.join(frame.columns)})"
        )
    nulls = frame.select(*(F.count_if(F.col(name).isNull()).alias(name) for name in ("html_start", "html_end"))).first()
    for name in ("html_start", "html_end"):
        if nulls[name]:
            raise InputError(f"{path}: column {name} has missing values")
    # a JSON file has no row index: its splits are read in file order, which the increasing id keeps
    row = F.monotonically_increasing_id() if jsonl else F.col("_metadata.row_index")
    optional = {
        name: F.col(name).cast("string") if name in frame.columns else F.lit(None).cast("string")
        for name in ("source", "text")
    }
    return frame.select(
        F.col("id_document").cast("string").alias("id_document"),
        F.col("label").cast("string").alias("label"),
        F.col("html_start").cast("long").alias("html_start"),
        F.col("html_end").cast("long").alias("html_end"),
        optional["source"].alias("source"),
        optional["text"].alias("text"),
        F.col("_metadata.file_path").alias(engine.FILE),
        row.alias(engine.ROW),
    ).where(F.col("label").isNotNull())


def with_scope_entities(notes: engine.SparkNotes, spans) -> engine.SparkNotes:
    """The notes with a column of the (label, text) of every span of their scope's notes (the patient's,
    else the note's own): what :func:`deid_ds.deidentification.pipeline.scope_entities` gives locally."""
    from pyspark.sql import functions as F

    patient, document = F.col("id_patient").cast("string"), F.col("id_document").cast("string")
    scope = F.when(patient.isNotNull() & (patient != ""), F.concat(F.lit("patient:"), patient)).otherwise(
        F.concat(F.lit("document:"), document)
    )
    scopes = notes.frame.select(document.alias("_scope_doc"), scope.alias("_scope"))
    pairs = spans.where(F.col("text").isNotNull() & (F.col("text") != "")).select("id_document", "label", "text")
    per_scope = (
        pairs.join(scopes, pairs["id_document"] == scopes["_scope_doc"])
        .groupBy("_scope")
        .agg(F.array_sort(F.collect_set(F.struct("label", "text"))).alias(SCOPE_ENTITIES))
    )
    frame = notes.frame.withColumn("_note_scope", scope)
    frame = frame.join(per_scope, frame["_note_scope"] == per_scope["_scope"], "left").drop("_note_scope", "_scope")
    return engine.SparkNotes(frame, notes.columns, (*notes.others, SCOPE_ENTITIES))


def with_spans(notes: engine.SparkNotes, spans) -> engine.SparkNotes:
    """The notes with a column of their spans (in the spans table's order), cut back into runs of
    consecutive rows of one file (the join shuffles them)."""
    from pyspark.sql import functions as F

    fields = ("label", "html_start", "html_end", "source", "text")
    grouped = spans.groupBy("id_document").agg(
        F.array_sort(F.collect_list(F.struct(engine.FILE, engine.ROW, *fields))).alias("all")
    )
    grouped = grouped.select(
        F.col("id_document").alias("_span_id"),
        F.transform("all", lambda s: F.struct(*(s[f].alias(f) for f in fields))).alias(SPANS),
    )
    spark = notes.frame.sparkSession
    frame = notes.frame
    joined = frame.join(grouped, frame["id_document"].cast("string") == grouped["_span_id"], "left").drop("_span_id")
    joined = joined.repartitionByRange(
        2 * spark.sparkContext.defaultParallelism, engine.FILE, engine.ROW
    ).sortWithinPartitions(engine.FILE, engine.ROW)
    return engine.SparkNotes(joined, notes.columns, (*notes.others, SPANS))


def notes_schema(notes: engine.SparkNotes, keep_metadata: str):
    """``notes.parquet``'s schema: our columns (strings), then the input's other columns with their types."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_type

    fields = [
        pa.field(name, pa.string())
        for name in ("id_document", "id_patient", "doc_type", "html")
        if name in ("id_document", "id_patient", "html") or name in notes.columns
    ]
    if keep_metadata == "surrogate":
        fields += [pa.field(name, pa.string()) for name in PATIENT_FIELDS if name in notes.columns]
    types = {f.name: f.dataType for f in notes.frame.schema.fields}
    fields += [pa.field(name, to_arrow_type(types[name])) for name in notes.others]
    return pa.schema(fields)


def deidentify_spark(
    notes: str | Path,
    spans: str | Path,
    out: str | Path,
    options: DeidOptions,
    *,
    column_map: Mapping[str, str] | None,
    batch_size: int,
    spark_master: str | None,
    log: Callable[[str], None],
    fail_on_leak: bool = False,
    inputs: tuple = (),
    overwrite: bool = False,
) -> DeidentifyReport:
    """:func:`deid_ds.deidentification.pipeline.deidentify` on Spark (options checked by it; module docstring)."""
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    started = time.perf_counter()
    read = engine.open_input("deidentify", notes, column_map, spark_master, log, others=True)
    spark, n_notes, source = read.spark, read.n_notes, read.notes
    dropped = check_keep_columns(
        options.keep_columns, list(source.others), own_columns(dict(column_map or {})), str(notes)
    )
    source = engine.SparkNotes(source.frame, source.columns, options.keep_columns)
    span_frame = read_spans(spark, spans)
    known = (
        source.frame.select(F.col("id_document").cast("string").alias("id_document"))
        .where(F.col("id_document").isNotNull())
        .distinct()
    )
    unknown = span_frame.join(known, "id_document", "left_anti").count()
    schema = notes_schema(source, options.keep_metadata)
    outputs = {
        "notes": schema,
        "documents": documents_schema(),
        "audit": audit_schema(options.audit_originals),
        "stats": stats_schema(),
    }
    shipped = replace(options, kb=engine.ship(spark, options.kb) if options.kb else None)
    work = engine.work_path(out)
    datasets = engine.run_batches(
        with_spans(with_scope_entities(source, span_frame), span_frame),
        DeidBatch(shipped, schema),
        outputs,
        work,
        batch_size,
        read.duplicates,
        log,
    )
    report, leaks = new_report(options), LeakCounts()
    report.dropped_columns, report.fail_on_leak = dropped, fail_on_leak
    no_documents: dict[str, list] = {"status": [], "error": [], "n_leaks": [], "leak_check": [], "n_replacements": []}
    with engine.local_datasets(spark, datasets) as local:
        parts = engine.DatasetParts({name: (local[name], schema) for name, schema in outputs.items()})
        stats = [row for table in parts.tables("stats") for row in table.to_pylist()]
        leak_total = sum(json.loads(row["leaks"])["total"] for row in stats)
        report.written_to = leaks_path(out) if fail_on_leak and leak_total else str(out)
        if report.written_to != str(out):
            check_output_dir(report.written_to, "deidentify", inputs, overwrite)
        with engine.output_directory(spark, report.written_to) as target, signed_directory(target, "deidentify") as tmp:
            for name in ("notes", "documents", "audit"):
                with pq.ParquetWriter(tmp / f"{name}.parquet", outputs[name]) as writer:
                    for table in parts.tables(name):
                        writer.write_table(table)
                        if name == "documents":
                            report.add(
                                BatchResult([], {}, [], {}, None, table.select(list(no_documents)).to_pydict(), {}),
                                leaks,
                            )
            for row in stats:
                counts = json.loads(row["leaks"])
                batch = BatchResult(
                    [],
                    {},
                    [],
                    {},
                    None,
                    no_documents,
                    {},
                    json.loads(row["per_label"]),
                    json.loads(row["fallbacks"]),
                    LeakCounts(counts["per_field"], counts["per_view"]),
                    json.loads(row["per_view"]),
                    json.loads(row["blanked"]),
                )
                report.add(batch, leaks)
            if report.documents != n_notes:  # pragma: no cover - a reader bug, never silent
                raise RuntimeError(f"read {report.documents} notes but the input holds {n_notes}")
            report.spans_for_unknown_documents = unknown
            report.leaks = leaks.to_dict()
            report.seconds = time.perf_counter() - started
            (tmp / "report.json").write_text(
                json.dumps(report.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8"
            )
    engine.remove(spark, work)
    return report
