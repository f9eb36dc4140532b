"""Segment a notes table into sentences and tokens, with both offset pairs — ``deid-ds segment``.

Output directory (written atomically: a failed run leaves the previous output, or none):

* ``sentences.parquet``: one row per sentence — ``id_document``, ``id_patient``, ``sentence_index``,
  ``text_start``/``text_end`` (into the note's extracted text), ``html_start``/``html_end`` (into the
  note's HTML), ``text``, and ``tokens``, a list of ``{text, start, end, html_start, html_end, ws}``;
* ``documents.parquet``: one row per input note — every note is accounted for, with its ``status``
  (``ok``, ``empty``: no text, ``failed``: with the reason), counts, and parser warnings;
* ``report.json``: the totals printed at the end of the command.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from deid_ds.engine.parallel import relaxed_gc
from deid_ds.errors import DocumentError
from deid_ds.io.notes import DEFAULT_BATCH_SIZE, open_notes
from deid_ds.io.schemas import document_schema
from deid_ds.model import MISSING_ID_WARNING, DocumentStatus, DocumentTotals, InvalidText, Note
from deid_ds.segmentation.html_text import ParsedHtml, html_to_text
from deid_ds.segmentation.limits import (
    DEFAULT_MAX_NOTE_BYTES,
    DEFAULT_NOTE_TIMEOUT,
    NoteLimits,
    NoteTimer,
    size_error,
    timeout_error,
)
from deid_ds.segmentation.segmenter import DEFAULT_MAX_TOKENS, SPACES, Segmenter, TokenSpans


@dataclass(frozen=True)
class SegmentOptions:
    """What a worker needs to rebuild the same segmenter (picklable)."""

    punkt_path: str | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS


@dataclass
class SegmentReport(DocumentTotals):
    """Totals of a ``segment`` run."""

    html_bytes: int = 0
    warnings: dict[str, int] = field(default_factory=dict)

    def add(self, status: DocumentStatus, html_bytes: int) -> None:
        self.documents += 1
        setattr(self, status.status, getattr(self, status.status) + 1)
        self.sentences += status.n_sentences
        self.tokens += status.n_tokens
        self.html_bytes += html_bytes
        for kind, n in status.warnings.items():
            self.warnings[kind] = self.warnings.get(kind, 0) + n
        self.documents_without_id += MISSING_ID_WARNING in status.warnings
        if status.error:
            self.failures[status.error] = self.failures.get(status.error, 0) + 1


def note_html(note: Note) -> str | bytes:
    """The note's HTML, or a :class:`DocumentError` saying why there is none (no content quoted)."""
    html = note.html
    if html is None:
        raise DocumentError("html is null")
    if isinstance(html, InvalidText):
        raise DocumentError(html.reason)
    if not isinstance(html, (str, bytes)):
        raise DocumentError(f"html is of type {type(html).__name__}, expected text")
    return html


_SEGMENTERS: dict[SegmentOptions, Segmenter] = {}


def segmenter_for(options: SegmentOptions) -> Segmenter:
    """One segmenter per process and options (Punkt parameters are loaded once)."""
    segmenter = _SEGMENTERS.get(options)
    if segmenter is None:
        from deid_ds.segmentation.punkt import load_parameters

        parameters = load_parameters(options.punkt_path) if options.punkt_path else None
        segmenter = Segmenter(parameters, max_tokens=options.max_tokens)
        _SEGMENTERS[options] = segmenter
    return segmenter


def segment_note(note: Note, segmenter: Segmenter) -> tuple[DocumentStatus, ParsedHtml | None, TokenSpans | None]:
    """Parse and segment one note; never raises for a bad note, the status says what happened (and, in its
    warnings, that the note had no id: every command that segments says so the same way)."""
    status, parsed, compact = _segment_note(note, segmenter)
    return with_id_warning(note, status), parsed, compact


def with_id_warning(note: Note, status: DocumentStatus) -> DocumentStatus:
    """``status``, warned of a note the table gave no id (:data:`~deid_ds.model.MISSING_ID_WARNING`)."""
    if note.id_missing:
        status.warnings[MISSING_ID_WARNING] = 1
    return status


def _segment_note(note: Note, segmenter: Segmenter) -> tuple[DocumentStatus, ParsedHtml | None, TokenSpans | None]:
    try:
        parsed = html_to_text(note_html(note))
        compact = segmenter.token_spans(parsed.text)
    except DocumentError as error:
        return DocumentStatus(note.id_document, note.id_patient, "failed", str(error)), None, None
    except Exception as error:
        reason = f"internal error during segmentation ({type(error).__name__})"
        return DocumentStatus(note.id_document, note.id_patient, "failed", reason), None, None
    n_tokens = len(compact.starts)
    status = DocumentStatus(
        note.id_document,
        note.id_patient,
        "ok" if n_tokens else "empty",
        None,
        len(parsed.text),
        len(compact),
        n_tokens,
        dict(parsed.warnings),
    )
    return status, parsed, compact


def segment_within_limits(
    note: Note, segmenter: Segmenter, max_bytes: int | None, timer: NoteTimer
) -> tuple[DocumentStatus, ParsedHtml | None, TokenSpans | None]:
    """:func:`segment_note`, or a failed note with its reason when it is larger than ``max_bytes`` (not
    parsed) or still being parsed and segmented after the ``timer``'s seconds (interrupted): see
    :mod:`deid_ds.segmentation.limits`."""
    reason = size_error(note.html, max_bytes)
    if reason is None:
        result = timer.run(lambda: segment_note(note, segmenter))
        if result is not None:
            return result
        reason = timeout_error(timer.seconds)
    return with_id_warning(note, DocumentStatus(note.id_document, note.id_patient, "failed", reason)), None, None


def token_offsets(parsed: ParsedHtml, compact: TokenSpans) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Text starts, text ends, HTML starts and HTML ends of a note's tokens, as int64 arrays.

    One vectorised lookup in the offset map per note instead of a Python call per token: writers of
    sentence tables spend most of their time here otherwise.
    """
    starts = np.fromiter(compact.starts, dtype=np.int64, count=len(compact.starts))
    ends = np.fromiter(compact.ends, dtype=np.int64, count=len(compact.ends))
    html_starts = np.frombuffer(parsed.offsets.starts, dtype=np.int64)[starts]
    html_ends = np.frombuffer(parsed.offsets.ends, dtype=np.int64)[ends - 1]
    return starts, ends, html_starts, html_ends


def token_ws(text: str, ends: list[int]) -> list[bool]:
    """Whether whitespace (or the end of the text) follows each token: Prodigy's ``ws``."""
    n = len(text)
    return [e >= n or text[e] in SPACES for e in ends]


class SentenceColumns:
    """Columns of ``sentences.parquet``, filled note by note and turned into Arrow in one go.

    Building Arrow arrays from flat lists is an order of magnitude faster than from nested row dicts,
    and plain lists pickle cheaply from worker processes.
    """

    TOKEN_FIELDS = ("text", "start", "end", "html_start", "html_end", "ws")

    def __init__(self) -> None:
        self.sentence: dict[str, list] = {
            name: []
            for name in (
                "id_document",
                "id_patient",
                "sentence_index",
                "text_start",
                "text_end",
                "html_start",
                "html_end",
                "text",
            )
        }
        self.token: dict[str, list] = {name: [] for name in self.TOKEN_FIELDS}
        self.token_offsets: list[int] = [0]

    def __len__(self) -> int:
        return len(self.sentence["text"])

    def add(self, note: Note, parsed: ParsedHtml, compact: TokenSpans) -> None:
        """Add one note's sentences, from its compact segmentation (vectorised offset lookups)."""
        if not len(compact):
            return
        text = parsed.text
        starts, ends, html_starts, html_ends = token_offsets(parsed, compact)
        token = self.token
        token["text"].extend([text[s:e] for s, e in zip(compact.starts, compact.ends)])
        token["start"].extend(compact.starts)
        token["end"].extend(compact.ends)
        token["html_start"].extend(html_starts.tolist())
        token["html_end"].extend(html_ends.tolist())
        token["ws"].extend(token_ws(text, compact.ends))

        first = compact.bounds[:-1]
        last = [b - 1 for b in compact.bounds[1:]]
        sentence_starts = starts[first].tolist()
        sentence_ends = ends[last].tolist()
        sentence = self.sentence
        k = len(compact)
        sentence["id_document"].extend([note.id_document] * k)
        sentence["id_patient"].extend([note.id_patient] * k)
        sentence["sentence_index"].extend(range(k))
        sentence["text_start"].extend(sentence_starts)
        sentence["text_end"].extend(sentence_ends)
        sentence["html_start"].extend(html_starts[first].tolist())
        sentence["html_end"].extend(html_ends[last].tolist())
        sentence["text"].extend([text[s:e] for s, e in zip(sentence_starts, sentence_ends)])
        base = self.token_offsets[-1]
        self.token_offsets.extend(base + b for b in compact.bounds[1:])

    def to_table(self):
        schema = _sentence_schema()
        token_type = schema.field("tokens").type.value_type
        tokens = pa.StructArray.from_arrays(
            [pa.array(self.token[f.name], type=f.type) for f in token_type], fields=list(token_type)
        )
        columns = [pa.array(self.sentence[f.name], type=f.type) for f in schema if f.name != "tokens"]
        columns.append(pa.ListArray.from_arrays(pa.array(self.token_offsets, type=pa.int32()), tokens))
        return pa.Table.from_arrays(columns, schema=schema)


def note_html_size(note: Note) -> int:
    """Size of the note's HTML in bytes (UTF-8), for throughput figures; 0 when there is none."""
    html = note.html
    if isinstance(html, str):
        return len(html.encode("utf-8", errors="surrogatepass"))
    if isinstance(html, bytes):
        return len(html)
    return 0


def _segment_batch(
    job: tuple[list[Note], SegmentOptions, NoteLimits],
) -> tuple[list[tuple[DocumentStatus, int]], SentenceColumns]:
    notes, options, limits = job
    segmenter = segmenter_for(options)
    statuses = []
    columns = SentenceColumns()
    with relaxed_gc(), NoteTimer(limits.timeout) as timer:
        for note in notes:
            status, parsed, compact = segment_within_limits(note, segmenter, limits.max_bytes, timer)
            if compact is not None:
                columns.add(note, parsed, compact)
            statuses.append((status, note_html_size(note)))
    return statuses, columns


def _sentence_schema():
    token = pa.struct(
        [
            ("text", pa.string()),
            ("start", pa.int64()),
            ("end", pa.int64()),
            ("html_start", pa.int64()),
            ("html_end", pa.int64()),
            ("ws", pa.bool_()),
        ]
    )
    return pa.schema(
        [
            ("id_document", pa.string()),
            ("id_patient", pa.string()),
            ("sentence_index", pa.int32()),
            ("text_start", pa.int64()),
            ("text_end", pa.int64()),
            ("html_start", pa.int64()),
            ("html_end", pa.int64()),
            ("text", pa.string()),
            ("tokens", pa.list_(token)),
        ]
    )


@dataclass(frozen=True)
class SegmentBatch:
    """The stage's batch function: :func:`_segment_batch` on a batch, as tables (``stats``: its HTML bytes)."""

    options: SegmentOptions
    limits: NoteLimits

    def __call__(self, notes, duplicates: frozenset[int] = frozenset(), others=None) -> dict:
        results, columns = _segment_batch((list(notes), self.options, self.limits))
        documents = [{**asdict(s), "warnings": json.dumps(s.warnings, sort_keys=True)} for s, _ in results]
        return {
            "sentences": columns.to_table() if len(columns) else _sentence_schema().empty_table(),
            "documents": pa.Table.from_pylist(documents, schema=document_schema()),
            "stats": pa.Table.from_pydict({"html_bytes": [sum(n for _, n in results)]}, schema=_stats_schema()),
        }


def _stats_schema():
    return pa.schema([("html_bytes", pa.int64())])


def segment_files(batch: SegmentBatch, where) -> SegmentBatch:
    """``batch`` with the Punkt path replaced by ``where(path)`` (shipped on Spark)."""
    return SegmentBatch(SegmentOptions(where(batch.options.punkt_path), batch.options.max_tokens), batch.limits)


def segment_stage(options: SegmentOptions, limits: NoteLimits):
    """``segment`` as the engines run it (:class:`deid_ds.engine.stage.Stage`)."""
    from deid_ds.engine.stage import Stage

    outputs = {"sentences": _sentence_schema(), "documents": document_schema(), "stats": _stats_schema()}
    return Stage("segment", SegmentBatch(options, limits), outputs, segment_files)


class SegmentSink:
    """Writes ``sentences.parquet`` and ``documents.parquet`` as the engine delivers them, and counts the
    report from the documents (and the ``stats`` rows)."""

    def __init__(self, tmp: Path, report: SegmentReport) -> None:
        self.report = report
        self.writers = {
            "sentences": pq.ParquetWriter(tmp / "sentences.parquet", _sentence_schema()),
            "documents": pq.ParquetWriter(tmp / "documents.parquet", document_schema()),
        }

    def add(self, name: str, table) -> None:
        report = self.report
        if name == "stats":
            report.html_bytes += sum(table.column("html_bytes").to_pylist())
            return
        if name == "sentences":
            if table.num_rows:  # a batch without sentences writes no row group
                self.writers[name].write_table(table)
            return
        self.writers[name].write_table(table)
        for row in table.select(["status", "error", "n_sentences", "n_tokens", "warnings"]).to_pylist():
            report.add(
                DocumentStatus(
                    "",
                    None,
                    row["status"],
                    row["error"],
                    0,
                    row["n_sentences"],
                    row["n_tokens"],
                    json.loads(row["warnings"]),
                ),
                0,
            )

    def close(self) -> None:
        from deid_ds.io.files import close_writers

        close_writers(list(self.writers.values()))


def segment_notes(
    notes: str | Path,
    out: str | Path,
    *,
    column_map: Mapping[str, str] | None = None,
    punkt: str | Path | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int = 1,
    progress: bool = True,
    overwrite: bool = False,
    max_note_bytes: int | None = DEFAULT_MAX_NOTE_BYTES,
    note_timeout: float | None = DEFAULT_NOTE_TIMEOUT,
    engine: str = "local",
    spark_master: str | None = None,
) -> SegmentReport:
    """Segment every note of ``notes`` into ``out`` (see the module docstring for the layout).

    ``out`` is replaced only if deid-ds wrote it, or with ``overwrite`` (:mod:`deid_ds.io.output_dir`).
    A note of more than ``max_note_bytes`` bytes of HTML, or still being segmented after
    ``note_timeout`` seconds, is failed with its reason (None or 0: no limit; :mod:`deid_ds.segmentation.limits`).
    ``engine="spark"`` segments the batches on Apache Spark (:mod:`deid_ds.engine`; ``spark_master``, else
    the active or ``spark-submit`` configuration, else ``local[*]``) with the same outputs.
    """
    from deid_ds.engine import engine_for

    runner = engine_for(engine, workers=workers, progress=progress, spark_master=spark_master)
    log = (lambda message: print(message, file=sys.stderr)) if progress else (lambda message: None)
    source = runner.open("segment", notes, column_map, log, batch_size=batch_size)
    options = SegmentOptions(str(Path(punkt).resolve()) if punkt else None, max_tokens)
    segmenter_for(options)  # fail fast on a bad Punkt file, before any output exists
    report = SegmentReport()
    started = time.perf_counter()
    limits = NoteLimits(max_note_bytes or None, note_timeout or None)
    with runner.output(out, "segment", inputs=(notes, punkt), overwrite=overwrite) as output:
        sink = SegmentSink(output.tmp, report)
        try:
            runner.run(segment_stage(options, limits), source, sink, batch_size, out=out, log=log)
        finally:
            sink.close()
        report.seconds = time.perf_counter() - started
        if report.documents != source.n_notes:  # pragma: no cover - a reader bug, never silent
            raise RuntimeError(f"read {report.documents} notes but the input declares {source.n_notes}")
        (output.tmp / "report.json").write_text(
            json.dumps(asdict(report), indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
    return report


def report_table(report: SegmentReport) -> str:
    """The summary printed at the end of ``deid-ds segment``."""
    from deid_ds.report import format_table

    rate = report.html_bytes / 1e6 / report.seconds if report.seconds else 0.0
    rows: list[list[object]] = [
        ["documents", report.documents],
        ["  ok", report.ok],
        ["  empty (no text)", report.empty],
        ["  failed", report.failed],
        ["sentences", report.sentences],
        ["tokens", report.tokens],
        ["HTML MB/s", rate],
    ]
    rows += [[f"warning: {kind}", n] for kind, n in sorted(report.warnings.items())]
    rows += [[f"failure: {reason}", n] for reason, n in sorted(report.failures.items())]
    return format_table(["segment", "count"], rows)


def punkt_train(
    notes: str | Path,
    out: str | Path,
    *,
    column_map: Mapping[str, str] | None = None,
    limit: int | None = None,
    progress: bool = True,
) -> dict[str, int]:
    """Train Punkt parameters on the text of the notes and save them as JSON (``deid-ds punkt-train``).

    Returns counts of what was learned (abbreviations, collocations, sentence starters, notes used).
    """
    from deid_ds.segmentation.punkt import save_parameters
    from deid_ds.segmentation.punkt_training import train_parameters

    source = open_notes(notes, column_map)
    total = min(source.num_notes, limit) if limit else source.num_notes
    used = Counter()

    def texts():
        with tqdm(total=total, unit="note", desc="punkt-train", disable=not progress) as bar:
            for note in source.iter_notes():
                if used["read"] >= total:
                    return
                used["read"] += 1
                bar.update(1)
                try:
                    text = html_to_text(note_html(note)).text
                except DocumentError:
                    used["skipped"] += 1
                    continue
                used["used"] += 1
                yield text

    parameters = train_parameters(texts())
    save_parameters(parameters, out)
    return {
        "notes_read": used["read"],
        "notes_used": used["used"],
        "notes_skipped": used["skipped"],
        "abbreviations": len(parameters.abbrev_types),
        "collocations": len(parameters.collocations),
        "sentence_starters": len(parameters.sent_starters),
    }
