"""Arrow schemas of the ``weak-label`` outputs and of its batch parts."""

from __future__ import annotations

import pyarrow as pa

from deid_ds.io.schemas import document_schema


def spans_schema():
    """Schema of ``spans.parquet``: one row per entity. ``predict`` writes the same.

    ``score`` is the model's confidence in the span, in (0, 1] (``predict``; the hybrid's model, agreed and
    widened spans): null for the rules' spans, which have no calibrated confidence. Spans files written
    before it existed lack the column; every reader selects the columns it needs, so they still read."""
    return pa.schema(
        [
            ("id_document", pa.string()),
            ("id_patient", pa.string()),
            ("label", pa.string()),
            ("html_start", pa.int64()),
            ("html_end", pa.int64()),
            ("text_start", pa.int64()),
            ("text_end", pa.int64()),
            ("text", pa.string()),
            ("source", pa.string()),
            ("score", pa.float64()),
        ]
    )


def sentences_schema(with_split: bool = True):
    """Schema of ``sentences.parquet`` (each row is also a line of ``sentences.jsonl``)."""
    token = pa.struct(
        [
            ("text", pa.string()),
            ("start", pa.int64()),
            ("end", pa.int64()),
            ("html_start", pa.int64()),
            ("html_end", pa.int64()),
            ("id", pa.int32()),
            ("ws", pa.bool_()),
        ]
    )
    parser_token = pa.struct([("start", pa.int64()), ("end", pa.int64())])
    span = pa.struct(
        [
            ("start", pa.int64()),
            ("end", pa.int64()),
            ("token_start", pa.int32()),
            ("token_end", pa.int32()),
            ("label", pa.string()),
            ("source", pa.string()),
        ]
    )
    meta = pa.struct(
        [
            ("id_document", pa.string()),
            ("id_patient", pa.string()),
            ("doc_type", pa.string()),
            ("sentence_index", pa.int32()),
        ]
    )
    fields = [
        ("text", pa.string()),
        ("tokens", pa.list_(token)),
        ("tokens_parser", pa.list_(parser_token)),
        ("tags", pa.list_(pa.string())),
        ("spans", pa.list_(span)),
        ("meta", meta),
    ]
    if with_split:
        fields.append(("split", pa.string()))
    return pa.schema(fields)


def documents_schema(with_split: bool = True):
    """Schema of ``documents.parquet``: segment's, with the document type, the kept sentences, the
    entities and the split of each note."""
    fields = list(document_schema())
    fields.insert(2, pa.field("doc_type", pa.string()))
    warnings = next(i for i, f in enumerate(fields) if f.name == "warnings")
    fields[warnings:warnings] = [pa.field("n_sentences_kept", pa.int32()), pa.field("n_entities", pa.int32())]
    if with_split:
        fields.append(pa.field("split", pa.string()))
    return pa.schema(fields)


def gold_tokens_schema():
    """Schema of a part's ``gold_tokens.parquet``: the HTML offsets of every token of the gold's notes."""
    return pa.schema([("id_document", pa.string()), ("html_start", pa.int64()), ("html_end", pa.int64())])
