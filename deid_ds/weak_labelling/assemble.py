"""Assembly of the final directory from the batches' tables (whichever engine made them).

:class:`Assembly` is the stage's sink: it streams the tables, each output in input order, into the
output files of a temporary directory, then writes the documents table and the report: the split was
decided before labelling (from the patient ids), so each table can be written as soon as it exists.
The local engine feeds it each batch as its worker finishes (the assembly overlaps the labelling
instead of running after it on one core); the Spark engine feeds it every batch's documents, then
every batch's sentences, and so on, once all exist.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deid_ds.label.functions import counts_per_function
from deid_ds.model import MISSING_ID_WARNING
from deid_ds.weak_labelling.batch import lines_schema
from deid_ds.weak_labelling.gold import score_gold
from deid_ds.weak_labelling.report import WeakLabelReport
from deid_ds.weak_labelling.schemas import documents_schema, gold_tokens_schema, sentences_schema, spans_schema
from deid_ds.weak_labelling.split import SPLITS, patient_group


def _jsonl_lines(bodies, splits):
    """:func:`jsonl_line` of every sentence at once: its body without the closing brace (one character), the split
    (``splits``: each one already as JSON) as last key, the brace and the newline."""
    return pc.binary_join_element_wise(pc.utf8_slice_codeunits(bodies, 0, -1), ',"split":', splits, "}\n", "")


def _utf8(strings) -> memoryview:
    """The UTF-8 bytes of a string array's values, one after the other (what writing each gives)."""
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


@dataclass(frozen=True)
class Run:
    """What the assembly needs to know of the run that produced the parts."""

    n_notes: int
    shares: tuple[float, float, float]
    seed: int
    started: float
    labelled: int
    group_split: Mapping[str, str]  # the split of each patient group, decided before labelling


class Assembly:
    """The output files of a run, written part by part in input order (see the module docstring).

    A part's documents must be added before its sentences and spans (they give each document's
    split). The text files are written from the rendered columns' UTF-8 data (:func:`_utf8`), with
    no Python string per sentence, and the counts are taken from plain lists: this runs in the one
    process that also feeds the workers.
    """

    def __init__(
        self, tmp: Path, group_split: Mapping[str, str], gold_ids: frozenset[str] | None, sentences_jsonl: bool = False
    ) -> None:
        """``sentences_jsonl``: also write ``sentences.jsonl``. Off by default: every kept sentence again,
        as JSON with each token's offsets, is the largest output by far (2.15 GB per 100,000 generated
        notes of 1.9 KB of HTML: 11 times the HTML, 10 times ``sentences.parquet``; docs/weak-label.md, "What each
        output costs"), and ``sentences.parquet`` holds the same rows for every reader of this package.
        """
        self.tmp = tmp
        self.group_split = group_split
        self.gold_ids = gold_ids
        self.documents: list = []  # the parts' documents tables
        self.groups: list[str] = []  # each document's patient group
        self.doc_split: dict[str, str] = {}  # the split of each id (its first note's: a later one is failed)
        self.sentences_per_split: Counter[str] = Counter()
        self.without_entity = 0
        self.spans = _SpanTotals()
        self.gold_tokens: list = []
        self._quoted = {name: json.dumps(name) for name in SPLITS}  # as jsonl_line writes the split
        self._sentences = pq.ParquetWriter(tmp / "sentences.parquet", sentences_schema())
        self._spans = pq.ParquetWriter(tmp / "spans.parquet", spans_schema())
        self._jsonl = (tmp / "sentences.jsonl").open("wb") if sentences_jsonl else None
        self._flair = {name: (tmp / f"{name}.txt").open("wb") for name in SPLITS}
        self._sentence_columns = sentences_schema(with_split=False).names

    def add(self, name: str, table) -> None:
        """The next table of the stage's output ``name`` (:func:`~deid_ds.weak_labelling.batch.weak_label_stage`),
        as an engine delivers it: ``sentences`` carries its rendered lines as columns."""
        if name == "documents":
            self.add_documents(table)
        elif name == "sentences":
            self.add_sentences(table.select(self._sentence_columns), table.select(lines_schema().names))
        elif name == "spans":
            self.add_spans(table)
        else:
            self.add_gold_tokens(table)

    def add_documents(self, table) -> None:
        """The next documents (their rows of ``documents.parquet`` are written by :meth:`finish`)."""
        ids, patients = table.column("id_document").to_pylist(), table.column("id_patient").to_pylist()
        groups = [patient_group(d, p) for d, p in zip(ids, patients)]
        group_split, doc_split = self.group_split, self.doc_split
        for d, g in zip(ids, groups):
            doc_split.setdefault(d, group_split[g])
        self.groups += groups
        self.documents.append(table)

    def add_sentences(self, part, lines) -> None:
        """The next sentences into the Parquet, JSONL (when asked for) and Flair outputs (``lines`` renders ``part``,
        row for row; the workers already kept each split's share of sentences without entity)."""
        schema = sentences_schema()
        documents = pc.struct_field(part.column("meta"), "id_document").to_pylist()
        splits = [self.doc_split[d] for d in documents]
        split_column = pa.array(splits, type=pa.string())
        self._sentences.write_table(part.append_column(schema.field("split"), split_column))
        if self._jsonl is not None:
            quoted = self._quoted
            self._jsonl.write(
                _utf8(_jsonl_lines(lines.column("jsonl"), pa.array([quoted[s] for s in splits], type=pa.string())))
            )
        present = Counter(splits)
        self.sentences_per_split.update(present)
        for name in present:
            self._flair[name].write(_utf8(pc.filter(lines.column("flair"), pc.equal(split_column, name))))
        self.without_entity += pc.sum(pc.equal(pc.list_value_length(part.column("spans")), 0)).as_py() or 0

    def add_spans(self, part) -> None:
        """The next spans into ``spans.parquet`` (a national corpus has tens of millions), counted
        with :class:`Counter` over plain lists (C loops), not a data frame per part."""
        totals = self.spans
        self._spans.write_table(part)
        labels, sources = part.column("label").to_pylist(), part.column("source").to_pylist()
        splits = [self.doc_split[d] for d in part.column("id_document").to_pylist()]
        totals.entities += part.num_rows
        totals.per_label.update(labels)
        totals.per_source.update(sources)
        totals.per_split.update(splits)
        totals.per_label_and_split.update(zip(labels, splits))
        if self.gold_ids is not None:
            totals.evaluated.append(part.to_pandas().loc[lambda spans: spans["id_document"].isin(self.gold_ids)])

    def add_gold_tokens(self, table) -> None:
        """The next tokens of the gold's documents (scored by :meth:`finish`)."""
        self.gold_tokens.append(table)

    def close(self) -> None:
        """Close the output files (after the last part, or on failure)."""
        self._sentences.close()
        self._spans.close()
        if self._jsonl is not None:
            self._jsonl.close()
        for handle in self._flair.values():
            handle.close()

    def finish(self, run: Run, gold_frame, report: WeakLabelReport) -> None:
        """Close the files, write ``documents.parquet`` and ``report.json`` (and score the gold)."""
        self.close()
        documents = (
            pa.concat_tables(self.documents) if self.documents else documents_schema(with_split=False).empty_table()
        )
        if documents.num_rows != run.n_notes:  # pragma: no cover - a reader bug or a damaged part, never silent
            raise RuntimeError(f"the batch parts hold {documents.num_rows} notes but the input declares {run.n_notes}")
        group_split = self.group_split
        documents = documents.append_column(
            documents_schema().field("split"), pa.array([group_split[g] for g in self.groups], type=pa.string())
        )
        report.sentences_kept_without_entity = self.without_entity
        pq.write_table(documents, self.tmp / "documents.parquet")
        totals = self.spans
        for counter in (totals.per_label, totals.per_source, totals.per_split):
            counter.pop(None, None)  # entities without a label or source are not counted (as value counts would)
        for key in [key for key in totals.per_label_and_split if None in key]:
            del totals.per_label_and_split[key]
        frame = documents.to_pandas().assign(group=self.groups)
        _fill_report(report, frame, totals, self.sentences_per_split)
        if gold_frame is not None:
            tokens = (
                pa.concat_tables(self.gold_tokens) if self.gold_tokens else gold_tokens_schema().empty_table()
            ).to_pandas()
            score_gold(report, gold_frame, frame, totals.evaluated, tokens)
        report.seconds = time.perf_counter() - run.started
        report.notes_per_second = run.labelled / report.seconds if report.seconds else 0.0
        (self.tmp / "report.json").write_text(
            json.dumps(report.to_dict(), indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
        )


def _fill_report(
    report: WeakLabelReport, documents, spans: _SpanTotals, sentences_per_split: Mapping[str, int]
) -> None:
    status = documents["status"].value_counts()
    report.documents = len(documents)
    report.ok, report.empty, report.failed = (int(status.get(name, 0)) for name in ("ok", "empty", "failed"))
    report.failures = {str(k): int(v) for k, v in documents["error"].dropna().value_counts().items()}
    report.documents_without_patient = int(documents["id_patient"].isna().sum())
    report.documents_without_id = int(documents["warnings"].str.contains(f'"{MISSING_ID_WARNING}"', regex=False).sum())
    report.sentences = int(documents["n_sentences"].sum())
    report.sentences_kept = int(documents["n_sentences_kept"].sum())
    report.tokens = int(documents["n_tokens"].sum())
    report.entities = spans.entities
    report.entities_per_label = {str(k): int(v) for k, v in spans.per_label.items()}
    report.entities_per_source = {str(k): int(v) for k, v in spans.per_source.items()}
    report.entities_per_function = counts_per_function(report.entities_per_source)
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
