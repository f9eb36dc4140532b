"""The Arrow schema of ``documents.parquet``: one row per input note, shared by every stage that reads notes."""

from __future__ import annotations

import pyarrow as pa


def document_schema():
    """Schema of ``documents.parquet``: one row per input note (other stages extend it)."""
    return pa.schema(
        [
            ("id_document", pa.string()),
            ("id_patient", pa.string()),
            ("status", pa.string()),
            ("error", pa.string()),
            ("n_chars", pa.int64()),
            ("n_sentences", pa.int32()),
            ("n_tokens", pa.int64()),
            ("warnings", pa.string()),
        ]
    )
