"""``deidentify`` as the engines run it: its batch function (:class:`DeidBatch`), its tables, the spans
joined on each note (:class:`SpanJoin`, on either engine), and the sink that writes the output.

* **The input's columns named by** ``--keep-column`` are read with the notes (the stage's
  :attr:`~deid_ds.engine.stage.Stage.keep`) and each batch gets its rows of them, written back unchanged
  beside the de-identified HTML; the other columns are dropped.
* **The spans** reach each note as a column beside it (:class:`SpanJoin`): locally, read whole by the
  driver (:func:`~deid_ds.deidentification.batch.read_spans_by_document`) and looked up per batch;
  on Spark, read by Spark (Parquet, a directory holding ``spans.parquet``, or JSONL), grouped by
  ``id_document`` (in the spans table's row order, as the local reader lists them) and left-joined to
  the notes: each note travels to its executor with its own spans, and no process ever holds the
  whole spans table. A span without a label or an id, or with a missing or fractional offset, is
  refused on both. One difference, an edge case: a note *without* an id is named ``FILE#rowN`` by the reader,
  and locally spans under that name would reach it; on Spark the join is on the id column, so it gets none.
* **Before the run**, :meth:`SpanJoin.coverage` counts the distinct documents of the spans, of the
  notes and of both (locally from the spans read whole, kept for the run; on Spark three counts), for
  the refusal of spans that are not about the notes (:mod:`.span_coverage`).
* **The entities of each note's patient** (the (label, text) of every span of the patient's notes:
  what no surrogate may be) are joined the same way (``surrogate`` mode).
* **The secret key** travels inside the batch function: to each local worker process through a pipe
  when it starts; to Spark's executors inside the pickled task, never written to a file by deid-ds,
  never logged (:class:`~deid_ds.deidentification.keyed.Keyring`'s repr hides it). On a real cluster,
  turn Spark's encryption on so that it does not cross the network or reach local disks in clear:
  ``spark.network.crypto.enabled=true`` (and ``spark.authenticate``), ``spark.io.encryption.enabled=true``.
* The knowledge base (surrogate places) is shipped to Spark's executors once.

``notes.parquet``, ``audit.parquet`` and ``documents.parquet`` come out in input order on both engines;
the report's counts are summed from the ``documents`` tables and one ``stats`` row per batch (with
``--privacy dp``, the ε each patient's values cost, keyed by HMACs: :mod:`.dp_accounting`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from deid_ds.deidentification.batch import (
    BatchResult,
    DeidJob,
    DeidOptions,
    audit_schema,
    deidentify_batch,
    documents_by_scope,
    documents_schema,
    notes_table,
    read_spans_by_document,
    scope_entities,
)
from deid_ds.deidentification.context import scope_of
from deid_ds.deidentification.document import SpanIn
from deid_ds.deidentification.dp_accounting import merge_spending
from deid_ds.deidentification.leaks import LeakCounts
from deid_ds.deidentification.span_coverage import SpanCoverage, coverage_of
from deid_ds.errors import InputError
from deid_ds.model import PATIENT_FIELDS

SPANS = "_spans"  # the column of each note's spans, joined on
SCOPE_ENTITIES = "_scope_entities"  # the (label, text) of every span of the note's patient, joined on
#: Columns written under our names, in this order, before the input's kept columns.
OWN_COLUMNS = ("id_document", "id_patient", "doc_type", "html")


def stats_schema():
    """One row per batch: what :class:`~deid_ds.deidentification.batch.BatchResult` counts beside its tables."""
    return pa.schema(
        [
            ("per_label", pa.string()),
            ("fallbacks", pa.string()),
            ("leaks", pa.string()),
            ("per_view", pa.string()),
            ("blanked", pa.string()),
            ("spans", pa.string()),
            ("span_fallbacks", pa.string()),
            ("dp_spent", pa.string()),
        ]
    )


def notes_schema(present, keep_metadata: str, kept_fields, id_fields=None):
    """``notes.parquet``'s schema: our columns (those ``present`` in the input; strings, but the ids with the
    input's types given by ``id_fields``: :mod:`.kept_columns`), then the input's kept columns (``kept_fields``,
    with their types)."""
    id_fields = id_fields or {}
    fields = [
        id_fields.get(name, pa.field(name, pa.string()))
        for name in OWN_COLUMNS
        if name in ("id_document", "id_patient", "html") or name in present
    ]
    if keep_metadata == "surrogate":
        fields += [pa.field(name, pa.string()) for name in PATIENT_FIELDS if name in present]
    return pa.schema(fields + list(kept_fields))


@dataclass(frozen=True)
class DeidBatch:
    """The stage's batch function: :func:`deidentify_batch` on a batch and its joined spans, as tables."""

    options: DeidOptions  # the key inside (module docstring)
    notes_schema: object  # pyarrow.Schema of notes.parquet

    def __call__(self, notes, duplicates: frozenset[int], others) -> dict:
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
        options = self.options
        result = deidentify_batch(DeidJob(list(notes), extras, spans, duplicates, options, entities))
        stats = {
            "per_label": [json.dumps(result.per_label)],
            "fallbacks": [json.dumps(result.fallbacks)],
            "leaks": [json.dumps(result.leaks.to_dict())],
            "per_view": [json.dumps(result.per_view)],
            "blanked": [json.dumps(result.blanked)],
            "spans": [json.dumps(result.spans)],
            "span_fallbacks": [json.dumps(result.span_fallbacks)],
            "dp_spent": [json.dumps(result.dp_spent)],
        }
        return {
            "notes": notes_table(result, self.notes_schema),
            "documents": pa.Table.from_pydict(result.documents, schema=documents_schema()),
            "audit": pa.Table.from_pydict(result.audit, schema=audit_schema(options.audit_originals)),
            "stats": pa.Table.from_pydict(stats, schema=stats_schema()),
        }


def deid_files(batch: DeidBatch, where) -> DeidBatch:
    """``batch`` with the knowledge base path replaced by ``where(path)`` (shipped on Spark)."""
    return replace(batch, options=replace(batch.options, kb=where(batch.options.kb)))


def deidentify_stage(options: DeidOptions, schema, join: SpanJoin):
    """``deidentify`` as the engines run it (:class:`deid_ds.engine.stage.Stage`)."""
    from deid_ds.engine.stage import Stage

    outputs = {
        "notes": schema,
        "documents": documents_schema(),
        "audit": audit_schema(options.audit_originals),
        "stats": stats_schema(),
    }
    return Stage("deidentify", DeidBatch(options, schema), outputs, deid_files, options.keep_columns, join)


# ----------------------------------------------------------------------------------------- the spans


class SpanJoin:
    """Each note's spans and its patient's entities, as two columns beside it (module docstring);
    :attr:`unknown` counts the spans of documents that are not in the notes."""

    columns = (SPANS, SCOPE_ENTITIES)

    def __init__(self, spans: str | Path, surrogate: bool) -> None:
        self.spans = spans
        self.surrogate = surrogate  # the entities of each patient matter to surrogates only (locally)
        self._unknown = lambda: 0
        self._by_document: dict[str, list[SpanIn]] | None = None  # read whole by the local engine, once

    def coverage(self, source) -> SpanCoverage:
        """The distinct documents of the spans, of the notes and of both (:mod:`.span_coverage`), before the
        run: locally from the spans read whole (kept for :meth:`local`) and the notes' id column; on Spark
        (``source`` an opened :class:`~deid_ds.engine.spark.Input`) with three counts."""
        if hasattr(source, "spark"):
            return self._spark_coverage(source)
        self._by_document = read_spans_by_document(self.spans)
        return coverage_of(self._by_document, (d for d, _ in source.source.iter_identifiers()))

    def _spark_coverage(self, source) -> SpanCoverage:
        from pyspark.sql import functions as F

        spans = read_spans(source.spark, self.spans).select("id_document").where(F.col("id_document").isNotNull())
        spans = spans.distinct().cache()
        notes = source.notes.frame.select(F.col("id_document").cast("string").alias("id_document"))
        notes = notes.where(F.col("id_document").isNotNull()).distinct().cache()
        try:
            return SpanCoverage(spans.count(), notes.count(), spans.join(notes, "id_document").count())
        finally:
            spans.unpersist()
            notes.unpersist()

    @property
    def unknown(self) -> int:
        """The spans of documents not in the notes (once the engine ran)."""
        return self._unknown()

    def local(self, source):
        """Per batch of notes, the two columns: the spans read whole here, the entities per scope."""
        by_document = self._by_document if self._by_document is not None else read_spans_by_document(self.spans)
        by_scope = documents_by_scope(source) if self.surrogate else {}
        seen: set[str] = set()
        self._unknown = lambda: sum(len(v) for k, v in by_document.items() if k not in seen)

        def columns(notes) -> dict[str, list]:
            seen.update(note.id_document for note in notes if note.id_document in by_document)
            entities: dict[str, list] = {}
            for note in notes:
                scope = scope_of(note.id_patient, note.id_document)
                if scope in by_scope and scope not in entities:
                    pairs = scope_entities(by_scope[scope], by_document)
                    entities[scope] = [{"label": label, "text": text} for label, text in pairs]
            return {
                SPANS: [
                    [
                        {
                            "label": s.label,
                            "html_start": s.html_start,
                            "html_end": s.html_end,
                            "source": s.source,
                            "text": s.text,
                        }
                        for s in by_document.get(note.id_document, ())
                    ]
                    for note in notes
                ],
                SCOPE_ENTITIES: [entities.get(scope_of(note.id_patient, note.id_document)) for note in notes],
            }

        return columns

    def spark(self, notes):
        """The notes table with the two columns, joined by Spark; the unknown spans counted first."""
        from pyspark.sql import functions as F

        spans = read_spans(notes.frame.sparkSession, self.spans)
        known = (
            notes.frame.select(F.col("id_document").cast("string").alias("id_document"))
            .where(F.col("id_document").isNotNull())
            .distinct()
        )
        unknown = spans.join(known, "id_document", "left_anti").count()
        self._unknown = lambda: unknown
        return with_spans(with_scope_entities(notes, spans), spans)


def read_spans(spark, path: str | Path):
    """The spans table as Spark reads it: ``id_document`` (string), ``label``, offsets, ``source``, ``text``,
    with the file and row of each span (the order the local reader keeps)."""
    from pyspark.sql import functions as F

    from deid_ds.engine import spark as engine

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
    # what the local reader refuses too (batch.read_spans_by_document): a span skipped or moved is an entity left
    label = F.col("label").cast("string")
    bad = frame.select(
        *(
            F.count_if(F.col(name).cast("double") != F.floor(F.col(name).cast("double"))).alias(name)
            for name in ("html_start", "html_end")
        ),
        F.count_if(label.isNull() | (label == "")).alias("label"),
        F.count_if(F.col("id_document").isNull()).alias("id_document"),
    ).first()
    for name, what in (
        ("html_start", "column html_start holds offsets that are not integers"),
        ("html_end", "column html_end holds offsets that are not integers"),
        ("label", "span(s) without a label"),
        ("id_document", "span(s) without an id_document"),
    ):
        if bad[name]:
            raise InputError(f"{path}: {bad[name]} {what}; fix the spans table")
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
    )


def with_scope_entities(notes, spans):
    """The notes with a column of the (label, text) of every span of their scope's notes (the patient's,
    else the note's own): what :func:`deid_ds.deidentification.batch.scope_entities` gives locally."""
    from pyspark.sql import functions as F

    from deid_ds.engine import spark as engine

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


def with_spans(notes, spans):
    """The notes with a column of their spans (in the spans table's order), cut back into runs of
    consecutive rows of one file (the join shuffles them)."""
    from pyspark.sql import functions as F

    from deid_ds.engine import spark as engine

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


# ------------------------------------------------------------------------------------------- the sink


class DeidSink:
    """Writes ``notes.parquet``, ``documents.parquet`` and ``audit.parquet`` as the engine delivers
    them, and counts the report (and the leaks) from the ``documents`` tables and the ``stats`` rows."""

    def __init__(self, tmp: Path, outputs, report, leaks: LeakCounts) -> None:
        """``report``: the :class:`~deid_ds.deidentification.pipeline.DeidentifyReport` counted into."""
        self.report, self.leaks = report, leaks
        self.dp_spent: dict[str, dict] = {}  # ``--privacy dp``: per patient, the values perturbed (HMACs) and their ε
        self.writers = {name: pq.ParquetWriter(tmp / f"{name}.parquet", outputs[name]) for name in _WRITTEN}

    def add(self, name: str, table) -> None:
        if name == "stats":
            for row in table.to_pylist():
                counts = json.loads(row["leaks"])
                batch = BatchResult(
                    [],
                    {},
                    [],
                    {},
                    None,
                    _NO_DOCUMENTS,
                    {},
                    json.loads(row["per_label"]),
                    json.loads(row["fallbacks"]),
                    LeakCounts(
                        counts["per_field"], counts["per_view"], unreadable=counts.get("metadata_unreadable", {})
                    ),
                    json.loads(row["per_view"]),
                    json.loads(row["blanked"]),
                    spans=json.loads(row["spans"]),
                    span_fallbacks=json.loads(row["span_fallbacks"]),
                )
                self.report.add(batch, self.leaks)
                merge_spending(self.dp_spent, json.loads(row.get("dp_spent") or "{}"))
            return
        self.writers[name].write_table(table)
        if name == "documents":
            documents = table.select(list(_NO_DOCUMENTS)).to_pydict()
            self.report.add(BatchResult([], {}, [], {}, None, documents, {}), self.leaks)

    def close(self) -> None:
        from deid_ds.io.files import close_writers

        close_writers(list(self.writers.values()))


_WRITTEN = ("notes", "documents", "audit")
#: What the report reads of a batch's documents.
_NO_DOCUMENTS: dict[str, list] = {
    "status": [],
    "error": [],
    "n_leaks": [],
    "leak_check": [],
    "n_replacements": [],
    "id_patient": [],
}
