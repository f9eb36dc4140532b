"""The tables of one batch part: documents, spans, sentences (and their rendered lines), gold tokens.

:class:`BatchColumns` gathers them note by note as flat lists and turns them into Arrow tables at once,
for the whole batch (:class:`_Batch`, :class:`_KeptSentences`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import compress

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from deid_ds.label.features import feature_columns
from deid_ds.model import Note
from deid_ds.segmentation.segmenter import SPACES
from deid_ds.weak_labelling.note import LabelledNote, failed_status
from deid_ds.weak_labelling.render import render_lines
from deid_ds.weak_labelling.schemas import documents_schema, gold_tokens_schema, sentences_schema, spans_schema
from deid_ds.weak_labelling.split import kept_sentences


class BatchColumns:
    """The tables of one batch part, filled note by note and turned into Arrow at once.

    :meth:`add` only keeps each note's raw pieces (text, offset map, token offsets, sentence bounds,
    candidates) in flat lists; :meth:`tables` then does the selection of the kept sentences, their
    tokens, tags and spans, and every substring, for the whole batch at once with numpy and Arrow
    kernels on the batch's concatenated text. A batch holds hundreds of thousands of tokens, and any
    Python work per token or per sentence here is paid on top of the labelling by every worker.
    """

    def __init__(self, gold_ids: frozenset[str] | None = None, jsonl: bool = True, features: bool = False) -> None:
        self.documents: dict[str, list] = {name: [] for name in documents_schema(with_split=False).names}
        self.gold_ids = gold_ids
        self.jsonl = jsonl  # render each sentence's JSONL line (only when sentences.jsonl is written)
        self._rows: list[int] = []  # the documents row of each note with content, in order
        self._note: dict[str, list] = {name: [] for name in ("id_document", "id_patient", "doc_type", "gold")}
        self._texts: list[str] = []
        self._html_starts: list = []  # each note's offset map (text character -> HTML range)
        self._html_ends: list = []
        self._token_starts: list[int] = []  # every token of every note, offsets in its note's text
        self._token_ends: list[int] = []
        self._n_tokens: list[int] = []
        #: the knowledge-feature column of every kept token (deid_ds.label.features), with ``features`` only
        self._features: list[str] | None = [] if features else None
        self._bounds: list[int] = []  # each note's sentence bounds (token indices in its note)
        self._keep: list[bool] = []  # whether each sentence of each note is kept (kept_sentences)
        self._n_bounds: list[int] = []
        self._candidate: dict[str, list] = {name: [] for name in ("start", "end", "first", "last", "label", "source")}
        self._n_candidates: list[int] = []

    def add(self, note: Note, labelled: LabelledNote, keep_empty: float) -> None:
        """Add one note: its document row and, when it was labelled, its entities and sentences.

        ``keep_empty`` is the share of sentences without entity kept for this note
        (:func:`kept_sentences`); the knowledge features, when asked for, are computed here for the kept
        sentences only, from the labeller's lookup of the note, which is then let go (a batch holding
        every note's lookup until its tables are made costs more than the features).
        ``n_sentences_kept`` is filled in by :meth:`tables`.
        """
        status = labelled.status
        entities = 0
        if status.status == "ok" and labelled.compact is not None:
            keep = kept_sentences(labelled.compact.bounds, labelled.ranges, note.id_document, keep_empty)
            try:  # before anything of the note is added: a note whose features fail is failed, not half-written
                features = self._kept_features(labelled, keep)
            except Exception as error:  # the reason names the exception type only: its message may quote the note
                status = failed_status(status, f"internal error during knowledge features ({type(error).__name__})")
            else:
                self._rows.append(len(self.documents["id_document"]))
                self._add_content(note, labelled, keep, features)
                entities = len(labelled.candidates)
        row = {
            **{
                name: getattr(status, name)
                for name in ("id_document", "id_patient", "status", "error", "n_chars", "n_sentences", "n_tokens")
            },
            "doc_type": note.doc_type,
            "n_sentences_kept": 0,
            "n_entities": entities,
            "warnings": json.dumps(status.warnings, sort_keys=True),
        }
        for name, values in self.documents.items():
            values.append(row[name])

    def _kept_features(self, labelled: LabelledNote, keep: list[bool]) -> list[str]:
        """The knowledge-feature column of the note's kept sentences (none when not asked for)."""
        if self._features is None or not any(keep):
            return []
        bounds = labelled.compact.bounds
        return feature_columns(labelled.lookup, [(bounds[i], bounds[i + 1]) for i in compress(range(len(keep)), keep)])

    def _add_content(self, note: Note, labelled: LabelledNote, keep: list[bool], features: list[str]) -> None:
        parsed, compact, candidates, ranges = labelled.parsed, labelled.compact, labelled.candidates, labelled.ranges
        info = self._note
        info["id_document"].append(note.id_document)
        info["id_patient"].append(note.id_patient)
        info["doc_type"].append(note.doc_type)
        info["gold"].append(self.gold_ids is not None and note.id_document in self.gold_ids)
        self._texts.append(parsed.text)
        self._html_starts.append(parsed.offsets.starts)
        self._html_ends.append(parsed.offsets.ends)
        self._token_starts.extend(compact.starts)
        self._token_ends.extend(compact.ends)
        self._n_tokens.append(len(compact.starts))
        bounds = compact.bounds
        self._keep += keep
        if self._features is not None:
            self._features += features
        self._bounds.extend(bounds)
        self._n_bounds.append(len(compact.bounds))
        candidate = self._candidate
        candidate["start"].extend([c.start for c in candidates])
        candidate["end"].extend([c.end for c in candidates])
        candidate["label"].extend([c.label for c in candidates])
        candidate["source"].extend([c.source for c in candidates])
        candidate["first"].extend([first for first, _ in ranges])
        candidate["last"].extend([last for _, last in ranges])
        self._n_candidates.append(len(candidates))

    def tables(self) -> dict:
        """The part's Arrow tables by name: ``documents``, ``spans``, ``sentences``, ``lines`` (each
        sentence's rendered JSONL and Flair text, row for row) and, with a gold, ``gold_tokens``.

        Always all of them, empty or not, so that readers need no case. What every engine gets from a
        batch: the local one writes them as a part directory, the Spark one as rows of its datasets.
        """
        batch = _Batch(self)
        kept = _KeptSentences(batch)
        documents = dict(self.documents)
        if self._rows:
            n_kept = documents["n_sentences_kept"] = list(documents["n_sentences_kept"])
            for row, n in zip(self._rows, kept.per_note.tolist()):
                n_kept[row] = n
        sentences = kept.table()
        tables = {
            "documents": pa.Table.from_pydict(documents, schema=documents_schema(with_split=False)),
            "spans": batch.spans_table(),
            "sentences": sentences,
            "lines": render_lines(sentences, self.jsonl, kept.features()),
        }
        if self.gold_ids is not None:
            tables["gold_tokens"] = batch.gold_tokens_table()
        return tables


#: Code points after which a token is followed by whitespace (``ws``), as ``segment_notes.token_ws`` decides.
_SPACE_CODES = np.array(sorted(ord(c) for c in SPACES), dtype=np.uint32)


class _Batch:
    """A batch's notes with content as flat numpy arrays over their concatenated text.

    Global indices: a character's is its note's first character's plus its own in the note, a token's
    (a candidate's) likewise. Substrings are cut from the batch's UTF-8 bytes (:meth:`substrings`).
    """

    def __init__(self, columns: BatchColumns) -> None:
        self.columns = columns
        note = columns._note
        self.n_notes = n = len(columns._texts)
        self.id_document = pa.array(note["id_document"], type=pa.string())
        self.id_patient = pa.array(note["id_patient"], type=pa.string())
        self.doc_type = pa.array(note["doc_type"], type=pa.string())
        self.text = text = "".join(columns._texts)
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        self.codes = codes
        # A lone surrogate has no UTF-8 form: substrings are then cut in Python, one by one, and fail
        # (as Arrow does) only if one that is written holds one.
        self.surrogates = bool(((codes >= 0xD800) & (codes < 0xE000)).any())
        self.utf8 = pa.py_buffer(text.encode("utf-8", "surrogatepass"))
        widths = 1 + (codes >= 0x80).astype(np.int64) + (codes >= 0x800) + (codes >= 0x10000)
        self.byte_at = np.zeros(len(codes) + 1, dtype=np.int64)  # UTF-8 offset of each character
        np.cumsum(widths, out=self.byte_at[1:])
        self.note_chars = _counts([len(t) for t in columns._texts])
        self.char_base = _bases(self.note_chars)
        html_starts = [np.frombuffer(a, dtype=np.int64) for a in columns._html_starts]
        self.html_starts = _concatenate(html_starts, np.int64)
        self.html_ends = _concatenate([np.frombuffer(a, dtype=np.int64) for a in columns._html_ends], np.int64)
        self.html_base = _bases(_counts([len(a) for a in html_starts]))
        self.n_tokens = _counts(columns._n_tokens)
        self.token_note = np.repeat(np.arange(n), self.n_tokens)
        token_base = _bases(self.n_tokens)
        self.token_starts = np.array(columns._token_starts, dtype=np.int64).reshape(-1)  # in the note
        self.token_ends = np.array(columns._token_ends, dtype=np.int64).reshape(-1)
        char_base = self.char_base[self.token_note]
        self.starts = self.token_starts + char_base  # global characters
        self.ends = self.token_ends + char_base
        n_bounds = _counts(columns._n_bounds)
        bounds = np.array(columns._bounds, dtype=np.int64).reshape(-1) + np.repeat(token_base, n_bounds)
        last = np.cumsum(n_bounds) - 1
        first = last - n_bounds + 1
        is_last = np.zeros(len(bounds), dtype=bool)
        is_last[last[n_bounds > 0]] = True
        is_first = np.zeros(len(bounds), dtype=bool)
        is_first[first[n_bounds > 0]] = True
        self.sentence_first = bounds[~is_last]  # global token bounds of every sentence
        self.sentence_end = bounds[~is_first]
        n_sentences = np.maximum(n_bounds - 1, 0)
        self.sentence_note = np.repeat(np.arange(n), n_sentences)
        self.sentence_index = np.arange(len(self.sentence_note)) - np.repeat(_bases(n_sentences), n_sentences)
        candidate = columns._candidate
        self.n_candidates = _counts(columns._n_candidates)
        self.candidate_note = np.repeat(np.arange(n), self.n_candidates)
        candidate_token_base = token_base[self.candidate_note]
        self.candidate_first = np.array(candidate["first"], dtype=np.int64).reshape(-1) + candidate_token_base
        self.candidate_last = np.array(candidate["last"], dtype=np.int64).reshape(-1) + candidate_token_base
        self.candidate_start = np.array(candidate["start"], dtype=np.int64).reshape(-1)  # in the note
        self.candidate_end = np.array(candidate["end"], dtype=np.int64).reshape(-1)
        self.label = pa.array(candidate["label"], type=pa.string())
        self.source = pa.array(candidate["source"], type=pa.string())

    def substrings(self, starts: np.ndarray, ends: np.ndarray):
        """``text[start:end]`` for global character ranges, sorted and not overlapping, as Arrow strings.

        The ranges and the gaps between them are the values of one array over the batch's UTF-8
        bytes (its offsets interleave both); the ranges are every other value.
        """
        if len(starts) == 0:
            return pa.array([], type=pa.string())
        offsets = np.empty(2 * len(starts), dtype=np.int64)
        offsets[0::2] = self.byte_at[starts]
        offsets[1::2] = self.byte_at[ends]
        if self.surrogates or (np.diff(offsets) < 0).any():  # overlapping or unsorted ranges (never): one by one
            return pa.array([self.text[s:e] for s, e in zip(starts.tolist(), ends.tolist())], type=pa.string())
        interleaved = pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), self.utf8)
        return interleaved.take(pa.array(np.arange(0, len(offsets), 2))).cast(pa.string())

    def ws(self, tokens: np.ndarray) -> np.ndarray:
        """Whether whitespace or the end of its note follows each of ``tokens`` (``segment_notes.token_ws``)."""
        ends = self.ends[tokens]
        ws = self.token_ends[tokens] >= self.note_chars[self.token_note[tokens]]
        inside = ~ws
        ws[inside] = np.isin(self.codes[ends[inside]], _SPACE_CODES)
        return ws

    def html_spans(self) -> tuple[np.ndarray, np.ndarray]:
        """HTML ``(start, end)`` of every candidate: :meth:`ParsedHtml.html_span` for all at once (the
        first and last characters with a source; an empty range at its start when there is none)."""
        starts, ends = self.html_starts, self.html_ends
        if len(self.candidate_start) == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        # the characters with a source, and for each candidate the first at or after its start and the last at
        # or before its end (a binary search per candidate, not a pass over the batch's characters for each)
        sources = np.append(np.flatnonzero(starts != ends), len(starts))
        base = self.html_base[self.candidate_note]
        start = self.candidate_start + base
        first = sources[np.searchsorted(sources, start)]
        last = np.append(-1, sources)[np.searchsorted(sources, np.maximum(self.candidate_end + base - 1, 0), "right")]
        empty = first > last
        html_start = np.where(empty, starts[start], starts[np.minimum(first, len(starts) - 1)])
        html_end = np.where(empty, starts[start], ends[np.maximum(last, 0)])
        return html_start, html_end

    def spans_table(self):
        """One row of :func:`spans_schema` per candidate."""
        html_start, html_end = self.html_spans()
        note = pa.array(self.candidate_note)
        char_base = self.char_base[self.candidate_note]
        columns = {
            "id_document": self.id_document.take(note),
            "id_patient": self.id_patient.take(note),
            "label": self.label,
            "html_start": html_start,
            "html_end": html_end,
            "text_start": self.candidate_start,
            "text_end": self.candidate_end,
            "text": self.substrings(self.candidate_start + char_base, self.candidate_end + char_base),
            "source": self.source,
            "score": pa.nulls(len(self.label), pa.float64()),  # the rules have no calibrated confidence
        }
        schema = spans_schema()
        return pa.Table.from_arrays([_as_array(columns[f.name], f.type) for f in schema], schema=schema)

    def gold_tokens_table(self):
        """The HTML offsets of every token of the gold's notes."""
        tokens = (
            np.flatnonzero(np.array(self.columns._note["gold"], dtype=bool)[self.token_note])
            if self.n_notes
            else np.empty(0, dtype=np.int64)
        )
        html_start, html_end = self.token_html(tokens)
        return pa.Table.from_arrays(
            [self.id_document.take(pa.array(self.token_note[tokens])), pa.array(html_start), pa.array(html_end)],
            schema=gold_tokens_schema(),
        )

    def token_html(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """HTML start of each token's first character and HTML end of its last one (``segment_notes.token_offsets``)."""
        base = self.html_base[self.token_note[tokens]]
        return self.html_starts[self.token_starts[tokens] + base], self.html_ends[self.token_ends[tokens] - 1 + base]


class _KeptSentences:
    """The kept sentences of a batch (:func:`kept_sentences`, note by note), with their tokens, tags and spans."""

    def __init__(self, batch: _Batch) -> None:
        self.batch = batch
        first, end = batch.sentence_first, batch.sentence_end
        # Candidates are sorted and disjoint: those inside a sentence are the run from the first one
        # that ends at or after its first token to the first one that starts at or after its end.
        inside_from = np.searchsorted(batch.candidate_last, first, "left")
        inside_to = np.maximum(np.searchsorted(batch.candidate_first, end, "left"), inside_from)
        keep = np.array(batch.columns._keep, dtype=bool)
        self.sentences = np.flatnonzero(keep)
        self.per_note = np.bincount(batch.sentence_note[self.sentences], minlength=batch.n_notes)
        self.first, self.end = first[self.sentences], end[self.sentences]
        self.inside_from, self.inside_to = inside_from[self.sentences], inside_to[self.sentences]
        self.lengths = self.end - self.first
        sentence_of_token = np.repeat(np.arange(len(self.sentences)), self.lengths)
        self.token_first = self.first[sentence_of_token]  # each kept token's sentence's first token
        self.tokens = np.arange(int(self.lengths.sum())) + np.repeat(self.first - _bases(self.lengths), self.lengths)

    def tags(self):
        """BIO tags of the kept tokens (:func:`~deid_ds.weak_labelling.note.bio_tags`); an entity cut by a sentence
        boundary restarts with a ``B-`` tag at the sentence's first token."""
        batch, tokens = self.batch, self.tokens
        if len(batch.candidate_first) == 0:
            return pa.array(np.full(len(tokens), "O", dtype=object), type=pa.string())
        labels = pc.dictionary_encode(batch.label)
        vocabulary = ["O"] + [tag for label in labels.dictionary.to_pylist() for tag in ("B-" + label, "I-" + label)]
        candidate = np.maximum(np.searchsorted(batch.candidate_first, tokens, "right") - 1, 0)
        inside = (batch.candidate_first[candidate] <= tokens) & (batch.candidate_last[candidate] >= tokens)
        begins = (batch.candidate_first[candidate] == tokens) | (tokens == self.token_first)
        label = labels.indices.to_numpy(zero_copy_only=False).astype(np.int64)[candidate]
        codes = np.where(inside, 1 + 2 * label + np.where(begins, 0, 1), 0)
        return pa.array(vocabulary, type=pa.string()).take(pa.array(codes))

    def features(self):
        """The kept tokens' knowledge-feature columns (a string array), or None when not asked for."""
        features = self.batch.columns._features
        return pa.array(features, type=pa.string()) if features is not None else None

    def spans(self):
        """The kept sentences' spans (``list<struct>``), offsets relative to their sentence."""
        batch = self.batch
        counts = self.inside_to - self.inside_from
        sentence = np.repeat(np.arange(len(counts)), counts)
        candidates = np.arange(int(counts.sum())) + np.repeat(self.inside_from - _bases(counts), counts)
        first, end = self.first[sentence], self.end[sentence]
        first_token = np.maximum(batch.candidate_first[candidates], first)
        last_token = np.minimum(batch.candidate_last[candidates], end - 1)
        sentence_start = batch.starts[first]
        index = pa.array(candidates)
        columns = {
            "start": batch.starts[first_token] - sentence_start,
            "end": batch.ends[last_token] - sentence_start,
            "token_start": (first_token - first).astype(np.int32),
            "token_end": (last_token - first).astype(np.int32),
            "label": batch.label.take(index),
            "source": batch.source.take(index),
        }
        span_type = sentences_schema(with_split=False).field("spans").type
        return _list_of_structs(_offsets([counts]), columns, span_type)

    def table(self):
        """The kept sentences as a table of :func:`sentences_schema` (without the split)."""
        batch, tokens = self.batch, self.tokens
        schema = sentences_schema(with_split=False)
        html_start, html_end = batch.token_html(tokens)
        sentence_start = batch.starts[self.token_first]
        numeric = {
            "start": batch.starts[tokens] - sentence_start,
            "end": batch.ends[tokens] - sentence_start,
            "html_start": html_start,
            "html_end": html_end,
            "id": (tokens - self.token_first).astype(np.int32),
            "ws": batch.ws(tokens),
        }
        token_columns = {
            "text": batch.substrings(batch.starts[tokens], batch.ends[tokens]),
            **{name: pa.array(values) for name, values in numeric.items()},
        }
        token_offsets = _offsets([self.lengths])
        tokens_array = _list_of_structs(token_offsets, token_columns, schema.field("tokens").type)
        parser = _list_of_structs(
            token_offsets,
            {"start": token_columns["html_start"], "end": token_columns["html_end"]},
            schema.field("tokens_parser").type,
        )
        tags = pa.ListArray.from_arrays(token_offsets, self.tags())
        notes = pa.array(batch.sentence_note[self.sentences])
        meta_type = schema.field("meta").type
        meta_columns = {
            "id_document": batch.id_document.take(notes),
            "id_patient": batch.id_patient.take(notes),
            "doc_type": batch.doc_type.take(notes),
            "sentence_index": batch.sentence_index[self.sentences].astype(np.int32),
        }
        meta = pa.StructArray.from_arrays(
            [_as_array(meta_columns[f.name], f.type) for f in meta_type], fields=list(meta_type)
        )
        text = (
            batch.substrings(batch.starts[self.first], batch.ends[self.end - 1])
            if len(self.first)
            else pa.array([], type=pa.string())
        )
        return pa.Table.from_arrays([text, tokens_array, parser, tags, self.spans(), meta], schema=schema)


def _counts(values: list[int]) -> np.ndarray:
    """Per-note counts as an int64 array."""
    return np.array(values, dtype=np.int64).reshape(-1)


def _bases(counts: np.ndarray) -> np.ndarray:
    """The index of each group's first element when groups of ``counts`` elements follow each other."""
    return np.cumsum(counts) - counts


def _concatenate(arrays: list, dtype):
    """One numpy array from the notes' arrays (an empty one of ``dtype`` for none)."""
    return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.empty(0, dtype=dtype)


def _offsets(counts: list):
    """Arrow list offsets (int32) from the numpy arrays of per-row counts."""
    offsets = np.zeros(sum(len(c) for c in counts) + 1, dtype=np.int32)
    if len(offsets) > 1:
        np.cumsum(np.concatenate(counts), out=offsets[1:])
    return pa.array(offsets, type=pa.int32())


def _list_of_structs(offsets, columns: Mapping[str, list], list_type):
    """A ``list<struct>`` Arrow array from flat per-field lists and list offsets (no row dicts)."""
    struct_type = list_type.value_type
    values = pa.StructArray.from_arrays(
        [_as_array(columns[f.name], f.type) for f in struct_type], fields=list(struct_type)
    )
    return pa.ListArray.from_arrays(offsets, values)


def _as_array(values, kind):
    """``values`` (an Arrow array, a table column or a list) as an Arrow array of type ``kind``."""
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks() if values.num_chunks else pa.array([], kind)
    return values if isinstance(values, pa.Array) else pa.array(values, type=kind)
