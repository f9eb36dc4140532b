"""Assembly of the final directory from the batch parts, once all exist (whichever engine made them).

The split is computed here (it needs every patient), then the split-dependent files are streamed
from the parts into a temporary directory that replaces ``OUT`` in one move, with the report.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from deid_ds.io_utils import atomic_directory
from deid_ds.weak_labelling.gold import score_gold
from deid_ds.weak_labelling.report import WeakLabelReport
from deid_ds.weak_labelling.resume import part_name
from deid_ds.weak_labelling.schemas import documents_schema, gold_tokens_schema, sentences_schema, spans_schema
from deid_ds.weak_labelling.split import SPLITS, patient_group


class Parts(Protocol):
    """Where the assembly reads the batches' tables from, in input order, a table (chunk) at a time.

    ``tables(name)`` yields the chunks of the table ``name`` (``documents``, ``spans``, ``sentences``,
    ``lines``, ``gold_tokens``: :meth:`~deid_ds.weak_labelling.columns.BatchColumns.tables`), in the
    order of the input notes, with the schema of :mod:`.schemas`; ``sentences`` and ``lines`` are
    chunked alike (row ``i`` of a ``lines`` chunk renders row ``i`` of the ``sentences`` chunk).
    """

    def tables(self, name: str) -> Iterator: ...


@dataclass(frozen=True)
class BatchParts:
    """The local engine's parts: one directory per batch in the work directory (:func:`part_name`)."""

    work: Path
    n_batches: int

    def tables(self, name: str) -> Iterator:
        from deid_ds.weak_labelling.batch import PART_SUFFIX, read_part_table

        for index in range(self.n_batches):
            yield read_part_table(self.work / part_name(index) / f"{name}{PART_SUFFIX}")


def _concat_parts(parts: Parts, name: str, schema):
    import pyarrow as pa

    tables = list(parts.tables(name))
    return pa.concat_tables(tables) if tables else schema.empty_table()


def _write_sentences(parts: Parts, tmp: Path, doc_split: Mapping[str, str]) -> tuple[dict[str, int], int]:
    """Stream the parts' sentences into the Parquet, JSONL and Flair outputs (the workers already
    kept each split's share of sentences without entity: the split was known before labelling).

    The text files are written a part at a time from the rendered columns' UTF-8 data (:func:`_utf8`),
    with no Python string per sentence: this runs in the one process that all workers wait for.
    Returns the number of sentences per split and the number of kept sentences without entity.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    schema = sentences_schema()
    quoted = {name: json.dumps(name) for name in SPLITS}  # as jsonl_line writes the split
    counts: Counter[str] = Counter()
    without_entity = 0
    writer = pq.ParquetWriter(tmp / "sentences.parquet", schema)
    handles = {name: (tmp / f"{name}.txt").open("wb") for name in SPLITS}
    try:
        with (tmp / "sentences.jsonl").open("wb") as jsonl:
            for part, lines in zip(parts.tables("sentences"), parts.tables("lines")):
                documents = pc.struct_field(part.column("meta"), "id_document").to_pylist()
                splits = [doc_split[d] for d in documents]
                split_column = pa.array(splits, type=pa.string())
                writer.write_table(part.append_column(schema.field("split"), split_column))
                jsonl.write(_utf8(_jsonl_lines(lines.column("jsonl"), pa.array([quoted[s] for s in splits], type=pa.string()))))
                present = Counter(splits)
                counts.update(present)
                for name in present:
                    handles[name].write(_utf8(pc.filter(lines.column("flair"), pc.equal(split_column, name))))
                without_entity += pc.sum(pc.equal(pc.list_value_length(part.column("spans")), 0)).as_py() or 0
    finally:
        writer.close()
        for handle in handles.values():
            handle.close()
    return dict(counts), without_entity


def _jsonl_lines(bodies, splits):
    """:func:`jsonl_line` of every sentence at once: its body without the closing brace (one character), the split
    (``splits``: each one already as JSON) as last key, the brace and the newline."""
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(pc.utf8_slice_codeunits(bodies, 0, -1), ',"split":', splits, "}\n", "")


def _utf8(strings) -> memoryview:
    """The UTF-8 bytes of a string array's values, one after the other (what writing each gives)."""
    import numpy as np
    import pyarrow as pa

    array = strings.combine_chunks() if isinstance(strings, pa.ChunkedArray) else strings
    if len(array) == 0:
        return memoryview(b"")
    if array.null_count:  # pragma: no cover - rendered lines are never null
        raise ValueError("null rendered line")
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64 if pa.types.is_large_string(array.type) else np.int32)
    offsets = offsets[array.offset : array.offset + len(array) + 1]
    return memoryview(array.buffers()[2])[offsets[0] : offsets[-1]]


@dataclass
class _SpanTotals:
    """Entity counts gathered while the spans are streamed to ``spans.parquet``."""

    entities: int = 0
    per_label: Counter = field(default_factory=Counter)
    per_source: Counter = field(default_factory=Counter)
    per_label_and_split: Counter = field(default_factory=Counter)
    per_split: Counter = field(default_factory=Counter)
    evaluated: list = field(default_factory=list)  # the gold documents' spans, when there is a gold


def _write_spans(parts: Parts, tmp: Path, doc_split: Mapping[str, str], gold_ids: frozenset[str] | None) -> _SpanTotals:
    """Stream the parts' spans into ``spans.parquet`` (a national corpus has tens of millions).

    The counts are taken from plain lists with :class:`Counter` (C loops), not a data frame per part:
    this runs in the one process all workers wait for, and the frames' fixed cost per part was most of
    it. Entities without a label or source are left out of those counts (as value counts would).
    """
    import pyarrow.parquet as pq

    totals = _SpanTotals()
    with pq.ParquetWriter(tmp / "spans.parquet", spans_schema()) as writer:
        for part in parts.tables("spans"):
            writer.write_table(part)
            labels, sources = part.column("label").to_pylist(), part.column("source").to_pylist()
            splits = [doc_split[d] for d in part.column("id_document").to_pylist()]
            totals.entities += part.num_rows
            totals.per_label.update(labels)
            totals.per_source.update(sources)
            totals.per_split.update(splits)
            totals.per_label_and_split.update(zip(labels, splits))
            if gold_ids is not None:
                totals.evaluated.append(part.to_pandas().loc[lambda spans: spans["id_document"].isin(gold_ids)])
    for counter in (totals.per_label, totals.per_source, totals.per_split):
        counter.pop(None, None)
    for key in [key for key in totals.per_label_and_split if None in key]:
        del totals.per_label_and_split[key]
    return totals


@dataclass(frozen=True)
class Run:
    """What the assembly needs to know of the run that produced the parts."""

    parts: Parts
    n_notes: int
    shares: tuple[float, float, float]
    seed: int
    started: float
    labelled: int
    group_split: Mapping[str, str]  # the split of each patient group, decided before labelling


def assemble(run: Run, out: Path, gold_frame, report: WeakLabelReport) -> None:
    """Build OUT from the batch parts (split, split-dependent files, report) and swap it in."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    documents = _concat_parts(run.parts, "documents", documents_schema(with_split=False))
    if documents.num_rows != run.n_notes:  # pragma: no cover - a reader bug or a damaged part, never silent
        raise RuntimeError(f"the batch parts hold {documents.num_rows} notes but the input declares {run.n_notes}")
    ids, patients = documents.column("id_document").to_pylist(), documents.column("id_patient").to_pylist()
    groups = [patient_group(d, p) for d, p in zip(ids, patients)]
    group_split = run.group_split
    doc_split: dict[str, str] = {}
    for d, g in zip(ids, groups):  # the first note of an id is the labelled one (a later one is failed)
        doc_split.setdefault(d, group_split[g])
    documents = documents.append_column(documents_schema().field("split"), pa.array([group_split[g] for g in groups], type=pa.string()))
    gold_ids = frozenset(gold_frame["id_document"]) if gold_frame is not None else None
    with atomic_directory(out) as tmp:
        sentences_per_split, report.sentences_kept_without_entity = _write_sentences(run.parts, tmp, doc_split)
        pq.write_table(documents, tmp / "documents.parquet")
        spans = _write_spans(run.parts, tmp, doc_split, gold_ids)
        frame = documents.to_pandas().assign(group=groups)
        _fill_report(report, frame, spans, sentences_per_split)
        if gold_frame is not None:
            tokens = _concat_parts(run.parts, "gold_tokens", gold_tokens_schema()).to_pandas()
            score_gold(report, gold_frame, frame, spans.evaluated, tokens)
        report.seconds = time.perf_counter() - run.started
        report.notes_per_second = run.labelled / report.seconds if report.seconds else 0.0
        (tmp / "report.json").write_text(json.dumps(report.to_dict(), indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def _fill_report(report: WeakLabelReport, documents, spans: _SpanTotals, sentences_per_split: Mapping[str, int]) -> None:
    status = documents["status"].value_counts()
    report.documents = len(documents)
    report.ok, report.empty, report.failed = (int(status.get(name, 0)) for name in ("ok", "empty", "failed"))
    report.failures = {str(k): int(v) for k, v in documents["error"].dropna().value_counts().items()}
    report.documents_without_patient = int(documents["id_patient"].isna().sum())
    report.sentences = int(documents["n_sentences"].sum())
    report.sentences_kept = int(documents["n_sentences_kept"].sum())
    report.tokens = int(documents["n_tokens"].sum())
    report.entities = spans.entities
    report.entities_per_label = {str(k): int(v) for k, v in spans.per_label.items()}
    report.entities_per_source = {str(k): int(v) for k, v in spans.per_source.items()}
    report.entities_per_label_and_split = {}
    for (label, name), n in sorted(spans.per_label_and_split.items()):
        report.entities_per_label_and_split.setdefault(str(label), {})[str(name)] = int(n)
    written = documents[documents["n_sentences_kept"] > 0]
    report.written = len(written)
    report.splits = {
        name: {
            "patients": int(written.loc[written["split"] == name, "group"].nunique()),
            "documents": int((written["split"] == name).sum()),
            "sentences": int(sentences_per_split.get(name, 0)),
            "entities": int(spans.per_split.get(name, 0)),
        }
        for name in SPLITS
    }
