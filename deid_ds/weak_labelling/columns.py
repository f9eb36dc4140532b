"""The tables of one batch part: documents, spans, sentences (and their rendered lines), gold tokens.

:class:`BatchColumns` gathers them note by note as flat lists and turns them into Arrow tables at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np

from deid_ds.html_text import ParsedHtml
from deid_ds.model import Note
from deid_ds.segment_notes import token_offsets, token_ws
from deid_ds.weak_labelling.note import LabelledNote, bio_tags
from deid_ds.weak_labelling.render import render_lines
from deid_ds.weak_labelling.schemas import documents_schema, gold_tokens_schema, sentences_schema, spans_schema
from deid_ds.weak_labelling.split import keeps_empty_sentence


class BatchColumns:
    """The tables of one batch part, filled note by note as flat lists and turned into Arrow at once.

    A note's kept tokens are selected with one vectorised index per note (numpy), not copied sentence
    by sentence: a batch holds hundreds of thousands of tokens, and Python work per token or per
    sentence here is paid on top of the labelling by every worker.
    """

    TOKEN_FIELDS = ("text", "start", "end", "html_start", "html_end", "id", "ws")
    SPAN_FIELDS = ("start", "end", "token_start", "token_end", "label", "source")
    META_FIELDS = ("id_document", "id_patient", "doc_type", "sentence_index")
    #: Token fields gathered as one numpy array per note (the others are lists of strings).
    NUMERIC_TOKEN_FIELDS = ("start", "end", "html_start", "html_end", "id", "ws")

    def __init__(self, gold_ids: frozenset[str] | None = None) -> None:
        self.documents: dict[str, list] = {name: [] for name in documents_schema(with_split=False).names}
        self.spans: list[tuple] = []  # one row of spans_schema() per entity
        self.text: list[str] = []
        self.meta: dict[str, list] = {name: [] for name in self.META_FIELDS}
        self.token_text: list[str] = []
        self.token: dict[str, list] = {name: [] for name in self.NUMERIC_TOKEN_FIELDS}  # numpy arrays, one per note
        self.tags: list[str] = []
        self.sentence_tokens: list = []  # numpy array of each note's kept sentences' token counts
        self.span: list[tuple] = []  # the kept sentences' spans, one SPAN_FIELDS row each, in sentence order
        self.sentence_spans: list[int] = []  # number of spans of each kept sentence
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
        parsed, compact, candidates, ranges = labelled.parsed, labelled.compact, labelled.candidates, labelled.ranges
        text = parsed.text
        starts, ends, html_starts, html_ends = token_offsets(parsed, compact)
        self._add_spans(note, parsed, candidates)
        if self.gold_ids is not None and note.id_document in self.gold_ids:
            self.gold_tokens["id_document"].extend([note.id_document] * len(starts))
            self.gold_tokens["html_start"].extend(html_starts.tolist())
            self.gold_tokens["html_end"].extend(html_ends.tolist())
        sentences = _kept_sentences(note.id_document, compact.bounds, ranges, keep_empty)
        if not sentences:
            return 0
        first = np.array([a for _, a, _, _ in sentences], dtype=np.int64)
        lengths = np.array([b - a for _, a, b, _ in sentences], dtype=np.int64)
        # The kept sentences' tokens: from each sentence's first token on, one by one.
        selected = np.arange(int(lengths.sum())) + np.repeat(first - (np.cumsum(lengths) - lengths), lengths)
        sentence_first = np.repeat(first, lengths)
        offset = starts[sentence_first]  # each token's sentence's first character
        token = self.token
        token["start"].append(starts[selected] - offset)
        token["end"].append(ends[selected] - offset)
        token["html_start"].append(html_starts[selected])
        token["html_end"].append(html_ends[selected])
        token["id"].append(selected - sentence_first)
        token["ws"].append(np.array(token_ws(text, compact.ends), dtype=bool)[selected])
        self.sentence_tokens.append(lengths)
        indices = selected.tolist()
        token_starts, token_ends = compact.starts, compact.ends
        self.token_text.extend([text[token_starts[i] : token_ends[i]] for i in indices])
        tags = bio_tags(len(starts), ranges, [c.label for c in candidates])
        sentence_tags = [tags[i] for i in indices]
        position = 0
        for index, a, b, inside in sentences:
            if sentence_tags[position].startswith("I-"):  # an entity cut by the sentence boundary restarts here
                sentence_tags[position] = "B-" + sentence_tags[position][2:]
            position += b - a
            sentence_start = token_starts[a]
            self.text.append(text[sentence_start : token_ends[b - 1]])
            for k in inside:
                first_token, last_token = max(ranges[k][0], a), min(ranges[k][1], b - 1)
                candidate = candidates[k]
                self.span.append((token_starts[first_token] - sentence_start, token_ends[last_token] - sentence_start, first_token - a, last_token - a,
                                  candidate.label, candidate.source))
            self.sentence_spans.append(len(inside))
        self.tags.extend(sentence_tags)
        meta = self.meta
        meta["id_document"].extend([note.id_document] * len(sentences))
        meta["id_patient"].extend([note.id_patient] * len(sentences))
        meta["doc_type"].extend([note.doc_type] * len(sentences))
        meta["sentence_index"].extend([index for index, _, _, _ in sentences])
        return len(sentences)

    def _add_spans(self, note: Note, parsed: ParsedHtml, candidates: Sequence) -> None:
        text = parsed.text
        html_span = parsed.html_span
        id_document, id_patient = note.id_document, note.id_patient
        for candidate in candidates:
            start, end = candidate.start, candidate.end
            self.spans.append((id_document, id_patient, candidate.label, *html_span(start, end), start, end, text[start:end], candidate.source))

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
            "spans": _table_of_rows(self.spans, spans_schema()),
            "sentences": sentences,
            "lines": render_lines(sentences),
        }
        if self.gold_ids is not None:
            tables["gold_tokens"] = pa.Table.from_pydict(self.gold_tokens, schema=gold_tokens_schema())
        return tables

    def _sentences_table(self):
        import pyarrow as pa

        schema = sentences_schema(with_split=False)
        token_type = schema.field("tokens").type.value_type
        token_offsets = _offsets(self.sentence_tokens)
        numeric = {f.name: pa.array(_concatenate(self.token[f.name], f.type.to_pandas_dtype()), type=f.type)
                   for f in token_type if f.name in self.NUMERIC_TOKEN_FIELDS}
        token_columns = {"text": pa.array(self.token_text, type=pa.string()), **numeric}
        tokens = _list_of_structs(token_offsets, token_columns, schema.field("tokens").type)
        parser = _list_of_structs(token_offsets, {"start": numeric["html_start"], "end": numeric["html_end"]}, schema.field("tokens_parser").type)
        tags = pa.ListArray.from_arrays(token_offsets, pa.array(self.tags, type=pa.string()))
        span_type = schema.field("spans").type
        span_columns = _table_of_rows(self.span, pa.schema(list(span_type.value_type)))
        spans = _list_of_structs(_offsets([np.array(self.sentence_spans, dtype=np.int64)]), span_columns, span_type)
        meta_type = schema.field("meta").type
        meta = pa.StructArray.from_arrays([pa.array(self.meta[f.name], type=f.type) for f in meta_type], fields=list(meta_type))
        text = pa.array(self.text, type=pa.string())
        return pa.Table.from_arrays([text, tokens, parser, tags, spans, meta], schema=schema)


def _kept_sentences(id_document: str, bounds: Sequence[int], ranges: Sequence[tuple[int, int]], keep_empty: float) -> list[tuple[int, int, int, range]]:
    """``(index, first token, end token, indices of the candidates inside)`` of each kept sentence: those
    with an entity, and those without that :func:`keeps_empty_sentence` keeps (both lists are sorted)."""
    kept = []
    c = 0  # first candidate that may reach the current sentence
    n = len(ranges)
    for index in range(len(bounds) - 1):
        a, b = bounds[index], bounds[index + 1]
        while c < n and ranges[c][1] < a:
            c += 1
        k = c
        while k < n and ranges[k][0] < b:
            k += 1
        if k == c and not keeps_empty_sentence(id_document, index, keep_empty):
            continue
        kept.append((index, a, b, range(c, k)))
    return kept


def _concatenate(arrays: list, dtype):
    """One numpy array from the notes' arrays (an empty one of ``dtype`` for none)."""
    return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.empty(0, dtype=dtype)


def _offsets(counts: list):
    """Arrow list offsets (int32) from the numpy arrays of per-row counts."""
    import pyarrow as pa

    offsets = np.zeros(sum(len(c) for c in counts) + 1, dtype=np.int32)
    if len(offsets) > 1:
        np.cumsum(np.concatenate(counts), out=offsets[1:])
    return pa.array(offsets, type=pa.int32())


def _table_of_rows(rows: list[tuple], schema):
    """An Arrow table (or, for a struct's fields, its columns by name) from rows given as tuples."""
    import pyarrow as pa

    columns = list(zip(*rows)) if rows else [()] * len(schema)
    return pa.Table.from_arrays([pa.array(list(values), type=f.type) for values, f in zip(columns, schema)], schema=schema)


def _list_of_structs(offsets, columns: Mapping[str, list], list_type):
    """A ``list<struct>`` Arrow array from flat per-field lists and list offsets (no row dicts)."""
    import pyarrow as pa

    struct_type = list_type.value_type
    values = pa.StructArray.from_arrays([_as_array(columns[f.name], f.type) for f in struct_type], fields=list(struct_type))
    return pa.ListArray.from_arrays(offsets, values)


def _as_array(values, kind):
    """``values`` (an Arrow array, a table column or a list) as an Arrow array of type ``kind``."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks() if values.num_chunks else pa.array([], kind)
    return values if isinstance(values, pa.Array) else pa.array(values, type=kind)
