""":class:`BatchColumns` selects kept sentences, tokens, tags and spans for a whole batch at once
(numpy, Arrow): its tables are exactly those of the plain per-note, per-sentence Python it replaced
(:class:`ReferenceColumns` below), on generated notes with accents, astral characters, character
references and layout characters at span edges, entities across sentence boundaries, every keep share,
empty and failed notes, with and without a gold."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pytest

from deid_ds.model import DocumentStatus, Note
from deid_ds.segmentation.notes import SegmentOptions, segment_note, segmenter_for, token_offsets, token_ws
from deid_ds.weak_labelling.columns import BatchColumns
from deid_ds.weak_labelling.note import LabelledNote, bio_tags, token_ranges
from deid_ds.weak_labelling.render import render_lines
from deid_ds.weak_labelling.schemas import documents_schema, gold_tokens_schema, sentences_schema, spans_schema
from deid_ds.weak_labelling.split import keeps_empty_sentence


class ReferenceColumns:
    """The per-note implementation (one Python step per kept sentence, token and candidate)."""

    def __init__(self, gold_ids=None):
        self.documents = {name: [] for name in documents_schema(with_split=False).names}
        self.spans, self.text, self.span, self.sentence_spans, self.tags, self.token_text = [], [], [], [], [], []
        self.meta = {name: [] for name in ("id_document", "id_patient", "doc_type", "sentence_index")}
        self.token = {name: [] for name in ("start", "end", "html_start", "html_end", "id", "ws")}
        self.sentence_tokens = []
        self.gold_ids = gold_ids
        self.gold_tokens = {name: [] for name in ("id_document", "html_start", "html_end")}

    def add(self, note, labelled, keep_empty):
        status = labelled.status
        kept = entities = 0
        if status.status == "ok" and labelled.compact is not None:
            kept = self._add_content(note, labelled, keep_empty)
            entities = len(labelled.candidates)
        row = {
            **{
                name: getattr(status, name)
                for name in ("id_document", "id_patient", "status", "error", "n_chars", "n_sentences", "n_tokens")
            },
            "doc_type": note.doc_type,
            "n_sentences_kept": kept,
            "n_entities": entities,
            "warnings": json.dumps(status.warnings, sort_keys=True),
        }
        for name, values in self.documents.items():
            values.append(row[name])

    def _add_content(self, note, labelled, keep_empty):
        parsed, compact, candidates, ranges = labelled.parsed, labelled.compact, labelled.candidates, labelled.ranges
        text = parsed.text
        starts, ends, html_starts, html_ends = token_offsets(parsed, compact)
        for c in candidates:
            self.spans.append(
                (
                    note.id_document,
                    note.id_patient,
                    c.label,
                    *parsed.html_span(c.start, c.end),
                    c.start,
                    c.end,
                    text[c.start : c.end],
                    c.source,
                )
            )
        if self.gold_ids is not None and note.id_document in self.gold_ids:
            self.gold_tokens["id_document"] += [note.id_document] * len(starts)
            self.gold_tokens["html_start"] += html_starts.tolist()
            self.gold_tokens["html_end"] += html_ends.tolist()
        tags = bio_tags(len(starts), ranges, [c.label for c in candidates])
        ws = token_ws(text, compact.ends)
        kept = 0
        bounds = compact.bounds
        for index in range(len(bounds) - 1):
            a, b = bounds[index], bounds[index + 1]
            inside = [k for k, (first, last) in enumerate(ranges) if first < b and last >= a]
            if not inside and not keeps_empty_sentence(note.id_document, index, keep_empty):
                continue
            kept += 1
            offset = starts[a]
            for i in range(a, b):
                self.token["start"].append(starts[i] - offset)
                self.token["end"].append(ends[i] - offset)
                self.token["html_start"].append(html_starts[i])
                self.token["html_end"].append(html_ends[i])
                self.token["id"].append(i - a)
                self.token["ws"].append(ws[i])
                self.token_text.append(text[compact.starts[i] : compact.ends[i]])
                tag = tags[i]
                self.tags.append("B-" + tag[2:] if i == a and tag.startswith("I-") else tag)
            self.sentence_tokens.append(b - a)
            self.text.append(text[compact.starts[a] : compact.ends[b - 1]])
            for k in inside:
                first, last = max(ranges[k][0], a), min(ranges[k][1], b - 1)
                self.span.append(
                    (
                        compact.starts[first] - offset,
                        compact.ends[last] - offset,
                        first - a,
                        last - a,
                        candidates[k].label,
                        candidates[k].source,
                    )
                )
            self.sentence_spans.append(len(inside))
            for name, value in (
                ("id_document", note.id_document),
                ("id_patient", note.id_patient),
                ("doc_type", note.doc_type),
                ("sentence_index", index),
            ):
                self.meta[name].append(value)
        return kept

    def tables(self):
        schema = sentences_schema(with_split=False)
        rows, t, s = [], 0, 0
        for i, text in enumerate(self.text):
            n, m = self.sentence_tokens[i], self.sentence_spans[i]
            tokens = [
                {"text": self.token_text[j], **{name: self.token[name][j] for name in self.token}}
                for j in range(t, t + n)
            ]
            rows.append(
                {
                    "text": text,
                    "tokens": tokens,
                    "tokens_parser": [{"start": x["html_start"], "end": x["html_end"]} for x in tokens],
                    "tags": self.tags[t : t + n],
                    "spans": [
                        dict(zip(("start", "end", "token_start", "token_end", "label", "source"), row))
                        for row in self.span[s : s + m]
                    ],
                    "meta": {name: values[i] for name, values in self.meta.items()},
                }
            )
            t, s = t + n, s + m
        sentences = pa.Table.from_pylist(rows, schema=schema)
        tables = {
            "documents": pa.Table.from_pydict(self.documents, schema=documents_schema(with_split=False)),
            "spans": pa.Table.from_pylist(
                [dict(zip(spans_schema().names, row)) for row in self.spans], schema=spans_schema()
            ),
            "sentences": sentences,
            "lines": render_lines(sentences),
        }
        if self.gold_ids is not None:
            tables["gold_tokens"] = pa.Table.from_pydict(self.gold_tokens, schema=gold_tokens_schema())
        return tables


@dataclass(frozen=True)
class Candidate:
    start: int
    end: int
    label: str
    source: str


WORDS = [
    "Dupont",
    "Éléonore",
    "né",
    "le",
    "12/03/1980",
    "à",
    "Saint-Étienne",
    "Dr",
    "M.",
    "😀x",
    "日本",
    "rue",
    "des",
    "Lilas",
    "75001",
    "tél",
    "06 12 34 56 78",
    "&eacute;t&eacute;",
    "&amp;",
    "a&nbsp;b",
    "x\u2009y",
    "z\u00a0",
]
BREAKS = [" ", " ", " ", ". ", ".\n", "<br>", "</p><p>", "</td><td>", " <b>", "</b> ", "&nbsp;", "\u3000"]


def _note(rng: random.Random, segmenter, i: int):
    """A generated note with candidates on random runs of its tokens (some across sentences)."""
    html = "<p>" + "".join(rng.choice(WORDS) + rng.choice(BREAKS) for _ in range(rng.randint(0, 60))) + "</p>"
    note = Note(
        f"d{i % 23}" if i % 5 else f"doc{i}", None if i % 4 == 0 else f"p{i % 7}", html, None if i % 3 else "CR"
    )
    status, parsed, compact = segment_note(note, segmenter)
    if i % 17 == 3:  # labelled, then failed by a check
        return note, LabelledNote(
            DocumentStatus(
                note.id_document, note.id_patient, "failed", "labeller returned overlapping or unsorted spans"
            )
        )
    if compact is None or not compact.starts:
        return note, LabelledNote(status, parsed, compact)
    n, token, candidates = len(compact.starts), 0, []
    while token < n:
        token += rng.randint(0, 12)
        if token >= n:
            break
        last = min(n - 1, token + rng.choice([0, 0, 1, 2, 5, 30]))
        candidates.append(
            Candidate(
                compact.starts[token],
                compact.ends[last],
                rng.choice(["PATIENT", "DATE", "VILLE"]),
                rng.choice(["names", "dates", 'é"x', ""]),
            )
        )
        token = last + 1
    return note, LabelledNote(
        status, parsed, compact, candidates, token_ranges(candidates, compact.starts, compact.ends)
    )


@pytest.mark.parametrize("seed", range(6))
def test_batch_tables_equal_the_per_note_reference(seed):
    rng = random.Random(seed)
    segmenter = segmenter_for(SegmentOptions(max_tokens=rng.choice([8, 40, 512])))
    notes = [_note(rng, segmenter, i) for i in range(rng.choice([0, 1, 30, 80]))]
    gold = frozenset(note.id_document for note, _ in notes[::3]) if seed % 2 else None
    shares = [rng.choice([0.0, 0.0, 0.25, 0.5, 1.0]) for _ in notes]
    fast, reference = BatchColumns(gold), ReferenceColumns(gold)
    for (note, labelled), share in zip(notes, shares):
        fast.add(note, labelled, share)
        reference.add(note, labelled, share)
    got, expected = fast.tables(), reference.tables()
    assert got.keys() == expected.keys()
    for name, table in expected.items():
        assert got[name].schema == table.schema, name
        assert got[name].to_pylist() == table.to_pylist(), name
    assert np.array(got["documents"]["n_sentences_kept"]).sum() == got["sentences"].num_rows


def test_entity_html_offsets_skip_characters_without_source():
    """Entities starting, ending or made only of inserted characters (no HTML source) get the HTML
    range :meth:`ParsedHtml.html_span` gives, across notes of one batch."""
    from array import array

    from deid_ds.segmentation.html_text import ParsedHtml
    from deid_ds.segmentation.offsets import OffsetMap
    from deid_ds.segmentation.segmenter import TokenSpans

    rng = random.Random(7)
    columns, expected = BatchColumns(), []
    for i in range(40):
        n = rng.randint(1, 30)
        starts, ends, position = array("q"), array("q"), 0
        for _ in range(n):
            inserted = rng.random() < 0.4
            starts.append(position)
            position += 0 if inserted else rng.randint(1, 6)
            ends.append(position)
        parsed = ParsedHtml("<" * position, "".join(rng.choice("ab\n\té😀") for _ in range(n)), OffsetMap(starts, ends))
        compact = TokenSpans([0, n], list(range(n)), list(range(1, n + 1)))  # one token per character
        candidates, token = [], rng.randint(0, 3)
        while token < n:
            last = min(n - 1, token + rng.randint(0, 4))
            candidates.append(Candidate(token, last + 1, "DATE", "x"))
            expected.append(parsed.html_span(token, last + 1))
            token = last + 1 + rng.randint(0, 3)
        status = DocumentStatus(f"d{i}", None, "ok", None, n, 1, n)
        columns.add(
            Note(f"d{i}", None, parsed.html),
            LabelledNote(status, parsed, compact, candidates, token_ranges(candidates, compact.starts, compact.ends)),
            0.0,
        )
    spans = columns.tables()["spans"]
    assert list(zip(spans["html_start"].to_pylist(), spans["html_end"].to_pylist())) == expected
    assert any(a == b for a, b in expected)  # some entities have no source character at all


def test_a_lone_surrogate_outside_the_written_text_does_not_fail_the_batch():
    segmenter = segmenter_for(SegmentOptions())
    rng = random.Random(3)
    notes = [_note(rng, segmenter, i) for i in range(1, 12)]
    note, labelled = notes[1]
    assert labelled.compact is not None and labelled.compact.starts
    parsed = labelled.parsed
    text = parsed.text + " \ud800"  # after the last token: in no sentence, token or entity
    from deid_ds.segmentation.html_text import ParsedHtml
    from deid_ds.segmentation.offsets import OffsetMap

    starts, ends = parsed.offsets.starts, parsed.offsets.ends
    end = ends[-1] if len(ends) else 0
    offsets = OffsetMap(starts + type(starts)("q", [end, end]), ends + type(ends)("q", [end + 1, end + 1]))
    notes[1] = (
        note,
        LabelledNote(
            labelled.status,
            ParsedHtml(parsed.html, text, offsets),
            labelled.compact,
            labelled.candidates,
            labelled.ranges,
        ),
    )
    fast, reference = BatchColumns(), ReferenceColumns()
    for note, labelled in notes:
        fast.add(note, labelled, 1.0)
        reference.add(note, labelled, 1.0)
    got, expected = fast.tables(), reference.tables()
    for name, table in expected.items():
        assert got[name].to_pylist() == table.to_pylist(), name
