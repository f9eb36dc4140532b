"""The tables of one batch part: documents, spans, sentences (and their rendered lines), gold tokens.

:class:`BatchColumns` gathers them note by note as flat lists and turns them into Arrow tables at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from deid_ds.html_text import ParsedHtml
from deid_ds.model import Note
from deid_ds.segment_notes import token_offsets, token_ws
from deid_ds.weak_labelling.note import LabelledNote, bio_tags
from deid_ds.weak_labelling.render import render_lines
from deid_ds.weak_labelling.schemas import documents_schema, gold_tokens_schema, sentences_schema, spans_schema
from deid_ds.weak_labelling.split import keeps_empty_sentence


class BatchColumns:
    """The tables of one batch part, filled note by note as flat lists and turned into Arrow at once."""

    TOKEN_FIELDS = ("text", "start", "end", "html_start", "html_end", "id", "ws")
    SPAN_FIELDS = ("start", "end", "token_start", "token_end", "label", "source")
    META_FIELDS = ("id_document", "id_patient", "doc_type", "sentence_index")

    def __init__(self, gold_ids: frozenset[str] | None = None) -> None:
        self.documents: dict[str, list] = {name: [] for name in documents_schema(with_split=False).names}
        self.spans: dict[str, list] = {name: [] for name in spans_schema().names}
        self.text: list[str] = []
        self.meta: dict[str, list] = {name: [] for name in self.META_FIELDS}
        self.token: dict[str, list] = {name: [] for name in self.TOKEN_FIELDS}
        self.tags: list[str] = []
        self.token_offsets: list[int] = [0]
        self.span: dict[str, list] = {name: [] for name in self.SPAN_FIELDS}
        self.span_offsets: list[int] = [0]
        self.gold_ids = gold_ids
        self.gold_tokens: dict[str, list] = {name: [] for name in ("id_document", "html_start", "html_end")}

    def add(self, note: Note, labelled: LabelledNote, keep_empty: float) -> None:
        """Add one note: its document row and, when it was labelled, its entities and kept sentences.

        ``keep_empty`` is the share of sentences without entity kept here: the largest of the splits'
        (the split is known only at assembly, which drops those their split does not keep, and
        corrects ``n_sentences_kept``). A sentence without entity is the one with no span: no other
        flag is stored.
        """
        status = labelled.status
        kept = entities = 0
        if status.status == "ok" and labelled.compact is not None:
            kept = self._add_content(note, labelled, keep_empty)
            entities = len(labelled.candidates)
        row = {
            **{name: getattr(status, name) for name in ("id_document", "id_patient", "status", "error", "n_chars", "n_sentences", "n_tokens")},
            "doc_type": note.doc_type,
            "n_sentences_kept": kept,
            "n_entities": entities,
            "warnings": json.dumps(status.warnings, sort_keys=True),
        }
        for name, values in self.documents.items():
            values.append(row[name])

    def _add_content(self, note: Note, labelled: LabelledNote, keep_empty: float) -> int:
        parsed, compact, candidates = labelled.parsed, labelled.compact, labelled.candidates
        text = parsed.text
        starts, ends, html_starts, html_ends = (a.tolist() for a in token_offsets(parsed, compact))
        self._add_spans(note, parsed, candidates)
        if self.gold_ids is not None and note.id_document in self.gold_ids:
            self.gold_tokens["id_document"].extend([note.id_document] * len(starts))
            self.gold_tokens["html_start"].extend(html_starts)
            self.gold_tokens["html_end"].extend(html_ends)
        labels = [c.label for c in candidates]
        tags = bio_tags(len(starts), labelled.ranges, labels)
        ws = token_ws(text, compact.ends)
        bounds = compact.bounds
        kept = 0
        c = 0  # first candidate that may reach the current sentence (both lists are sorted)
        for index in range(len(bounds) - 1):
            a, b = bounds[index], bounds[index + 1]
            while c < len(labelled.ranges) and labelled.ranges[c][1] < a:
                c += 1
            inside = []
            k = c
            while k < len(labelled.ranges) and labelled.ranges[k][0] < b:
                inside.append(k)
                k += 1
            if not inside and not keeps_empty_sentence(note.id_document, index, keep_empty):
                continue
            kept += 1
            offset = starts[a]
            self.text.append(text[offset : ends[b - 1]])
            for name, value in zip(self.META_FIELDS, (note.id_document, note.id_patient, note.doc_type, index)):
                self.meta[name].append(value)
            token = self.token
            token["text"].extend([text[s:e] for s, e in zip(starts[a:b], ends[a:b])])
            token["start"].extend([s - offset for s in starts[a:b]])
            token["end"].extend([e - offset for e in ends[a:b]])
            token["html_start"].extend(html_starts[a:b])
            token["html_end"].extend(html_ends[a:b])
            token["id"].extend(range(b - a))
            token["ws"].extend(ws[a:b])
            sentence_tags = tags[a:b]
            if sentence_tags[0].startswith("I-"):  # an entity cut by the sentence boundary restarts here
                sentence_tags[0] = "B-" + sentence_tags[0][2:]
            self.tags.extend(sentence_tags)
            self.token_offsets.append(self.token_offsets[-1] + b - a)
            for k in inside:
                first, last = max(labelled.ranges[k][0], a), min(labelled.ranges[k][1], b - 1)
                values = (starts[first] - offset, ends[last] - offset, first - a, last - a, candidates[k].label, candidates[k].source)
                for name, value in zip(self.SPAN_FIELDS, values):
                    self.span[name].append(value)
            self.span_offsets.append(self.span_offsets[-1] + len(inside))
        return kept

    def _add_spans(self, note: Note, parsed: ParsedHtml, candidates: Sequence) -> None:
        text = parsed.text
        spans = self.spans
        for candidate in candidates:
            html_start, html_end = parsed.html_span(candidate.start, candidate.end)
            values = (note.id_document, note.id_patient, candidate.label, html_start, html_end, candidate.start, candidate.end, text[candidate.start : candidate.end], candidate.source)
            for values_list, value in zip(spans.values(), values):
                values_list.append(value)

    def tables(self) -> dict:
        """The part's Arrow tables by name: ``documents``, ``spans``, ``sentences``, ``lines`` (each
        sentence's rendered JSONL and Flair text, row for row) and, with a gold, ``gold_tokens``.

        Always all of them, empty or not, so that readers need no case. What every engine gets from a
        batch: the local one writes them as a part directory, the Spark one as rows of its datasets.
        """
        import pyarrow as pa

        sentences = self._sentences_table()
        tables = {
            "documents": pa.Table.from_pydict(self.documents, schema=documents_schema(with_split=False)),
            "spans": pa.Table.from_pydict(self.spans, schema=spans_schema()),
            "sentences": sentences,
            "lines": render_lines(sentences),
        }
        if self.gold_ids is not None:
            tables["gold_tokens"] = pa.Table.from_pydict(self.gold_tokens, schema=gold_tokens_schema())
        return tables

    def _sentences_table(self):
        import pyarrow as pa

        schema = sentences_schema(with_split=False)
        token_offsets = pa.array(self.token_offsets, type=pa.int32())
        tokens = _list_of_structs(token_offsets, self.token, schema.field("tokens").type)
        parser = _list_of_structs(token_offsets, {"start": self.token["html_start"], "end": self.token["html_end"]}, schema.field("tokens_parser").type)
        tags = pa.ListArray.from_arrays(token_offsets, pa.array(self.tags, type=pa.string()))
        spans = _list_of_structs(pa.array(self.span_offsets, type=pa.int32()), self.span, schema.field("spans").type)
        meta_type = schema.field("meta").type
        meta = pa.StructArray.from_arrays([pa.array(self.meta[f.name], type=f.type) for f in meta_type], fields=list(meta_type))
        text = pa.array(self.text, type=pa.string())
        return pa.Table.from_arrays([text, tokens, parser, tags, spans, meta], schema=schema)


def _list_of_structs(offsets, columns: Mapping[str, list], list_type):
    """A ``list<struct>`` Arrow array from flat per-field lists and list offsets (no row dicts)."""
    import pyarrow as pa

    struct_type = list_type.value_type
    values = pa.StructArray.from_arrays([pa.array(columns[f.name], type=f.type) for f in struct_type], fields=list(struct_type))
    return pa.ListArray.from_arrays(offsets, values)
