"""The gold spans table from a campaign's answers — ``deid-ds gold``.

**Strategies.**

* ``review``: the answers are the adjudicated versions (Prodigy ``deid.review``, or any tool's
  reviewed export), one per item; their spans are the gold. When an item has several answers (two
  review sessions), the latest (Prodigy ``_timestamp``, else the later record) is kept and counted.
* ``majority``: the answers are the annotators' own; each token takes the label most annotators gave
  it, then spans are rebuilt from consecutive tokens of one label (two adjacent tokens of one label
  start separate spans when more annotators put them in different spans than in the same one).
  **Ties** go to the item's *primary* annotator (``meta.annotator``, the one the campaign assigned the
  document to) when that annotator's label is among the tied ones; otherwise to ``O`` when ``O`` is
  among them (no majority for an entity: not gold); otherwise to the first tied label in report order.
  Tied tokens are counted in the summary, to be reviewed.

**HTML offsets** (the gold must point into each note's HTML, like ``synth``'s gold and the weak
labeller's spans). The minimal requirement: every item has a document id (``meta.id_document``), and
either its tokens carry HTML offsets (``html_start``/``html_end``, or ``tokens_parser``: the Prodigy
tasks of ``weak-label`` and ``campaign``) *and* its spans start and end on token boundaries, or
``notes`` is given. With ``notes`` (doccano and Label Studio exports, which keep only the sentence
text), each note is parsed with :func:`deid_ds.segmentation.html_text.html_to_text`, the sentence is located in the
extracted text — ``meta.sentence_start`` when the task has it; else the sentence of index
``meta.sentence_index`` of the default segmentation when its text is the item's; else the only
occurrence of the text in the note (several: the first after the previous item of the document,
counted) — and ``html_span(sentence start + span start, sentence start + span end)`` gives the offsets.
Anything else is an error naming the file and line.

**Output** (written atomically, Parquet and a JSONL of the same rows beside it): ``id_document``,
``label``, ``html_start``, ``html_end`` (end exclusive), ``text`` (the span's extracted text), then
``id_patient``, ``doc_type``, ``annotators`` (comma-separated: the reviewer, or the annotators whose votes
made the span). Readable by :func:`deid_ds.evaluation.scoring.score_spans` and ``deid-ds weak-label --gold``.
A document whose items hold no entity has no row: the summary counts the documents covered.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from deid_ds.agreement.items import OUTSIDE, Item, group_items, label_order, token_labels, token_span_ids
from deid_ds.agreement.model import Annotation, ReadReport, Span
from deid_ds.agreement.readers import read_answers
from deid_ds.errors import InputError
from deid_ds.io.files import atomic_path, atomic_write_text
from deid_ds.report import format_table

STRATEGIES: tuple[str, ...] = ("review", "majority")
GOLD_COLUMNS: tuple[str, ...] = (
    "id_document",
    "label",
    "html_start",
    "html_end",
    "text",
    "id_patient",
    "doc_type",
    "annotators",
)


@dataclass
class GoldSummary:
    """What went into the gold table, for the printed report."""

    strategy: str
    documents: int = 0
    items: int = 0
    spans: Counter = field(default_factory=Counter)
    tied_tokens: Counter = field(default_factory=Counter)  # tie rule -> tokens
    notes: Counter = field(default_factory=Counter)  # how sentences were located in the notes
    read: dict = field(default_factory=dict)
    joined: int = 0  # entities cut by a sentence bound whose pieces were joined back (join_continued)

    def to_dict(self) -> dict:
        return {
            "strategy": self.strategy,
            "spans_joined_across_sentences": self.joined,
            "documents": self.documents,
            "items": self.items,
            "spans": dict(self.spans),
            "tied_tokens": dict(self.tied_tokens),
            "located_in_notes": dict(self.notes),
            "input": self.read,
        }

    def table(self) -> str:
        rows = [[label, self.spans[label]] for label in label_order(self.spans)]
        rows.append(["total", sum(self.spans.values())])
        sections = [
            format_table(
                ["label", "spans"],
                rows,
                title=f"Gold ({self.strategy}): {self.documents:,} documents, {self.items:,} items",
            )
        ]
        extra = [[f"tied tokens: {rule}", n] for rule, n in sorted(self.tied_tokens.items())]
        extra += [[f"sentences located in notes: {how}", n] for how, n in sorted(self.notes.items())]
        if self.joined:
            extra.append(["entities over two sentences, pieces joined (meta.continues)", self.joined])
        extra += [[reason, n] for reason, n in self.read.get("skipped", {}).items()]
        if extra:
            sections.append(format_table(["note", "count"], extra))
        return "\n\n".join(sections)


# --------------------------------------------------------------------------------------------------
# Choosing the gold spans of an item


def reviewed_spans(item: Item, report: ReadReport) -> tuple[list[Span], list[str]]:
    """The adjudicated answer of the item (the latest when there are several)."""
    if len(item.answers) > 1:
        report.skip("item with several reviewed answers (latest kept)")
    answer = max(item.answers.values(), key=lambda a: a.order)
    return list(answer.spans), [answer.annotator]


def majority_spans(item: Item, summary: GoldSummary, report: ReadReport | None = None) -> tuple[list[Span], list[str]]:
    """Token-level majority, then spans rebuilt (rules and tie rule: module docstring)."""
    starts = np.array([s for s, _ in item.tokens], dtype=np.int64)
    ends = np.array([e for _, e in item.tokens], dtype=np.int64)
    names = list(item.answers)
    labels = [token_labels(item.answers[n].spans, starts, ends, report) for n in names]
    span_ids = [token_span_ids(item.answers[n].spans, starts, ends) for n in names]
    primary = item.primary if item.primary in item.answers else None
    chosen: list[str] = []
    for t in range(len(item.tokens)):
        votes = Counter(labels[a][t] for a in range(len(names)))
        top = max(votes.values())
        tied = [label for label, n in votes.items() if n == top]
        if len(tied) == 1:
            chosen.append(tied[0])
            continue
        if primary is not None and labels[names.index(primary)][t] in tied:
            chosen.append(labels[names.index(primary)][t])
            summary.tied_tokens["primary annotator's label"] += 1
        elif OUTSIDE in tied:
            chosen.append(OUTSIDE)
            summary.tied_tokens["O (no majority for an entity)"] += 1
        else:
            chosen.append(label_order(tied)[0])
            summary.tied_tokens["first label in report order"] += 1
    spans: list[Span] = []
    current: tuple[int, int, str] | None = None  # first token, last token, label
    for t, label in enumerate(chosen):
        if label == OUTSIDE:
            if current:
                spans.append(Span(int(starts[current[0]]), int(ends[current[1]]), current[2]))
            current = None
            continue
        if current and current[2] == label and current[1] == t - 1:
            joined = split = 0
            for a in range(len(names)):
                if labels[a][t - 1] == label and labels[a][t] == label:
                    if span_ids[a][t - 1] == span_ids[a][t]:
                        joined += 1
                    else:
                        split += 1
            if split <= joined:
                current = (current[0], t, label)
                continue
        if current:
            spans.append(Span(int(starts[current[0]]), int(ends[current[1]]), current[2]))
        current = (t, t, label)
    if current:
        spans.append(Span(int(starts[current[0]]), int(ends[current[1]]), current[2]))
    return spans, names


# --------------------------------------------------------------------------------------------------
# HTML offsets


class _NoteIndex:
    """The parsed notes of the documents the answers cover, read once, and where each sentence lies."""

    def __init__(self, notes: str | Path, column_map: Mapping[str, str] | None, needed: set[str]) -> None:
        from deid_ds.io.notes import open_notes
        from deid_ds.segmentation.html_text import html_to_text
        from deid_ds.segmentation.notes import SegmentOptions, note_html, segmenter_for

        self.parsed = {}
        for note in open_notes(notes, column_map).iter_notes():
            if note.id_document in needed and note.id_document not in self.parsed and note.html is not None:
                self.parsed[note.id_document] = html_to_text(note_html(note))
        self._segmenter = segmenter_for(SegmentOptions())
        self._bounds: dict[str, object] = {}
        self._cursor: dict[str, int] = {}

    def sentence_start(self, item: Item, summary: GoldSummary) -> int:
        answer = item.first
        parsed = self.parsed.get(answer.id_document)
        if parsed is None:
            raise InputError(f"{answer.source}: its document is not in --notes (or its html is null)")
        text = parsed.text
        start = answer.sentence_start
        if start is not None and text[start : start + len(item.text)] == item.text:
            return self._found(answer.id_document, start, len(item.text), summary, "meta.sentence_start")
        if answer.sentence_index is not None:
            compact = self._bounds.get(answer.id_document)
            if compact is None:
                compact = self._bounds[answer.id_document] = self._segmenter.token_spans(text)
            k = answer.sentence_index
            if 0 <= k < len(compact) and compact.bounds[k + 1] > compact.bounds[k]:
                s, e = compact.starts[compact.bounds[k]], compact.ends[compact.bounds[k + 1] - 1]
                if text[s:e] == item.text:
                    return self._found(answer.id_document, s, e - s, summary, "sentence index")
        first = text.find(item.text)
        if first < 0 or not item.text:
            raise InputError(
                f"{answer.source}: the sentence's text is not in its note (are --notes the notes the tasks were "
                "built from?)"
            )
        if text.find(item.text, first + 1) < 0:
            return self._found(answer.id_document, first, len(item.text), summary, "text search (unique)")
        after = text.find(item.text, self._cursor.get(answer.id_document, 0))
        position = after if after >= 0 else first
        return self._found(
            answer.id_document,
            position,
            len(item.text),
            summary,
            "text search (several occurrences: first after the previous sentence)",
        )

    def _found(self, document: str, start: int, length: int, summary: GoldSummary, how: str) -> int:
        summary.notes[how] += 1
        self._cursor[document] = start + length
        return start


def _aligned_html(item: Item, span: Span) -> tuple[int, int] | None:
    """HTML offsets of a span from its tokens' HTML offsets, or None if it does not fall on token bounds."""
    if item.html is None:
        return None
    first = next((i for i, (s, e) in enumerate(item.tokens) if e > span.start), None)
    last = next((i for i in range(len(item.tokens) - 1, -1, -1) if item.tokens[i][0] < span.end), None)
    if first is None or last is None or first > last:
        return None
    if item.tokens[first][0] != span.start or item.tokens[last][1] != span.end:
        return None
    return item.html[first][0], item.html[last][1]


# --------------------------------------------------------------------------------------------------
# Entry points


def build_gold(
    annotations: Sequence[Annotation],
    report: ReadReport | None = None,
    *,
    strategy: str = "review",
    notes: str | Path | None = None,
    column_map: Mapping[str, str] | None = None,
):
    """The gold spans table (a pandas DataFrame of :data:`GOLD_COLUMNS`) and a :class:`GoldSummary`."""
    if strategy not in STRATEGIES:
        raise InputError(f"strategy '{strategy}': expected {' or '.join(STRATEGIES)}")
    report = report or ReadReport()
    items = group_items(annotations, report)
    summary = GoldSummary(strategy)
    for item in items:
        if item.first.id_document is None:
            raise InputError(f"{item.first.source}: no meta.id_document: the gold needs each item's document")
    index = None
    if notes is not None:
        index = _NoteIndex(notes, column_map, {item.first.id_document for item in items})
    rows = []
    bounds: dict[tuple[str, int], tuple[int | None, int | None, str | None]] = {}  # for join_continued
    for item in items:
        spans, annotators = (
            reviewed_spans(item, report) if strategy == "review" else majority_spans(item, summary, report)
        )
        spans = sorted(spans, key=lambda s: (s.start, s.end, s.label))
        if spans and item.first.sentence_index is not None:
            first_char = item.tokens[0][0] if item.tokens else 0
            last_char = item.tokens[-1][1] if item.tokens else len(item.text.rstrip())
            bounds[(item.first.id_document, item.first.sentence_index)] = (
                len(rows) if spans[0].start <= first_char else None,
                len(rows) + len(spans) - 1 if spans[-1].end >= last_char else None,
                next((a.continues for a in item.answers.values() if a.continues), None),
            )
        sentence_start = None
        for span in spans:
            offsets = _aligned_html(item, span)
            if offsets is None:
                if index is None:
                    if item.html is None:
                        raise InputError(
                            f"{item.first.source}: the answers carry no HTML offsets (tokens without "
                            "html_start/html_end and no "
                            "tokens_parser): pass --notes NOTES to re-derive them from the notes"
                        )
                    raise InputError(
                        f"{item.first.source}: a span does not start and end on token boundaries: pass --notes "
                        "NOTES to map it exactly"
                    )
                if sentence_start is None:
                    sentence_start = index.sentence_start(item, summary)
                offsets = index.parsed[item.first.id_document].html_span(
                    sentence_start + span.start, sentence_start + span.end
                )
            first = item.first
            rows.append(
                (
                    first.id_document,
                    span.label,
                    int(offsets[0]),
                    int(offsets[1]),
                    item.text[span.start : span.end],
                    first.id_patient,
                    item.doc_type,
                    ",".join(annotators),
                )
            )
            summary.spans[span.label] += 1
    rows, joined = join_continued(rows, bounds)
    for label, n in joined.items():
        summary.spans[label] -= n
    summary.joined = sum(joined.values())
    summary.items = len(items)
    summary.documents = len({item.first.id_document for item in items})
    frame = pd.DataFrame(rows, columns=list(GOLD_COLUMNS))
    before = len(frame)
    frame = frame.drop_duplicates(subset=["id_document", "label", "html_start", "html_end"]).sort_values(
        ["id_document", "html_start", "html_end", "label"], kind="stable"
    )
    if len(frame) < before:
        report.skip("the same span found in two items (kept once)", before - len(frame))
    summary.read = report.to_dict()
    return frame.reset_index(drop=True), summary


def join_continued(
    rows: list[tuple], bounds: Mapping[tuple[str, int], tuple[int | None, int | None, str | None]]
) -> tuple[list[tuple], Counter]:
    """Join the pieces of entities cut by a sentence bound (:mod:`deid_ds.campaign.continuation`).

    ``bounds[(document, sentence_index)]`` is (the row of the sentence's first span when it starts the
    sentence, the row of its last span when it ends it, the task's ``meta.continues`` label). The last span of
    a sentence and the first of the next one become one row, from the first's start to the second's end,
    when the task says its entity continues with that label and both pieces still have it (an annotator
    who removed or relabelled a piece decided otherwise). Pieces over three sentences chain. Returns the
    rows and the joins per label.
    """
    into: dict[int, int] = {}  # a row joined into an earlier one
    joined: Counter = Counter()
    rows = list(rows)
    for (document, index), (_, last, label) in sorted(bounds.items()):
        following = bounds.get((document, index + 1))
        if label is None or last is None or following is None or following[0] is None:
            continue
        head, tail = into.get(last, last), following[0]
        if rows[head][1] != label or rows[tail][1] != label:
            continue
        first, second = rows[head], rows[tail]
        annotators = ",".join(sorted(set(first[7].split(",")) | set(second[7].split(","))))
        rows[head] = (first[0], label, first[2], second[3], f"{first[4]} {second[4]}", first[5], first[6], annotators)
        into[tail] = head
        joined[label] += 1
    return [row for i, row in enumerate(rows) if i not in into], joined


def gold_schema():
    """Arrow schema of the gold table (``id_patient``/``doc_type`` nullable)."""
    return pa.schema(
        [
            ("id_document", pa.string()),
            ("label", pa.string()),
            ("html_start", pa.int64()),
            ("html_end", pa.int64()),
            ("text", pa.string()),
            ("id_patient", pa.string()),
            ("doc_type", pa.string()),
            ("annotators", pa.string()),
        ]
    )


def write_gold(frame, out: str | Path) -> tuple[Path, Path]:
    """Write ``out`` (Parquet) and the same rows as JSONL beside it, each atomically."""
    parquet = Path(out)
    if parquet.suffix.lower() == ".jsonl":
        raise InputError(
            f"{parquet}: the gold table is Parquet (its JSONL copy is written beside it): name it .parquet"
        )
    jsonl = parquet.with_suffix(".jsonl")
    records = frame.astype(object).where(frame.notna(), None).to_dict("records")
    table = pa.Table.from_pylist(records, schema=gold_schema())
    with atomic_path(parquet) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    atomic_write_text(jsonl, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in table.to_pylist()))
    return parquet, jsonl


def gold_from_files(
    paths: Sequence[str | Path],
    out: str | Path | None = None,
    *,
    fmt: str = "auto",
    strategy: str = "review",
    notes: str | Path | None = None,
    column_map: Mapping[str, str] | None = None,
    annotator_from: str = "auto",
    dataset: str | None = None,
):
    """Read answers, build the gold table and (with ``out``) write it: the API of ``deid-ds gold``.

    Returns the table and its :class:`GoldSummary`.
    """
    annotations, report = read_answers(paths, fmt, annotator_from=annotator_from, dataset=dataset)
    frame, summary = build_gold(annotations, report, strategy=strategy, notes=notes, column_map=column_map)
    if out is not None:
        write_gold(frame, out)
    return frame, summary
