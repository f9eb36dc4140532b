"""Reading the campaign's input: a directory of sentences in the weak-label format.

The input is what ``deid-ds weak-label`` writes — ``sentences.parquet`` (preferred: its ``meta`` and
``split`` columns are read alone to choose the documents) or ``sentences.jsonl``, and, when present,
``documents.parquet`` — or anything written in the same format, such as a trained model's predictions,
which have no ``split`` (choose ``splits=None``, ``--split all``).

Only documents with at least one sentence in the file can be chosen. Annotators must see every
sentence of a document, those where the labeller found nothing too, or what it missed never gets into
the gold: ``weak-label`` keeps every sentence of the ``test`` split by default (``--keep-empty-test
1``), but those without any entity of train and dev only for a ``--keep-empty`` share (use
``--keep-empty 1`` to draw from them). The sentences a chosen document lacks are counted
(``sentences_missing``) from ``documents.parquet``'s ``n_sentences``, and reported.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deid_ds.errors import InputError
from deid_ds.io.jsonl import iter_json_objects

SENTENCES_PARQUET = "sentences.parquet"
SENTENCES_JSONL = "sentences.jsonl"
DOCUMENTS_PARQUET = "documents.parquet"


@dataclass
class DocumentPool:
    """The documents a campaign can draw from, with what was left aside and why (counts only)."""

    doc_types: dict[str, str] = field(default_factory=dict)  # id -> doc type ("" when none)
    n_sentences: dict[str, int] = field(default_factory=dict)  # sentences in the file, per document
    n_sentences_total: dict[str, int] = field(default_factory=dict)  # sentences of the note (documents.parquet)
    documents_other_split: int = 0
    documents_without_sentence: int = 0  # in documents.parquet, in the splits, but nothing in the file


def sentences_path(directory: str | Path) -> Path:
    """The sentences file of a weak-label-format directory (Parquet first, then JSONL)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory}: not a directory (expected the output of `deid-ds weak-label`)")
    for name in (SENTENCES_PARQUET, SENTENCES_JSONL):
        if (directory / name).is_file():
            return directory / name
    raise InputError(
        f"{directory}: no {SENTENCES_PARQUET} or {SENTENCES_JSONL} (expected the output of `deid-ds weak-label`)"
    )


def read_pool(directory: str | Path, splits: Sequence[str] | None = ("test",)) -> DocumentPool:
    """The documents of ``directory`` in ``splits`` (``None``: every document) that have sentences."""
    path = sentences_path(directory)
    wanted = set(splits) if splits is not None else None
    pool = DocumentPool()
    other_split: set[str] = set()
    for meta, split in _iter_meta(path, need_split=wanted is not None):
        document = _identifier(meta.get("id_document"), path)
        if wanted is not None and split not in wanted:
            other_split.add(document)
            continue
        pool.doc_types.setdefault(document, meta.get("doc_type") or "")
        pool.n_sentences[document] = pool.n_sentences.get(document, 0) + 1
    pool.documents_other_split = len(other_split - pool.doc_types.keys())
    documents = Path(directory) / DOCUMENTS_PARQUET
    if documents.is_file():
        _read_documents_table(documents, wanted, pool)
    return pool


def _read_documents_table(path: Path, wanted: set[str] | None, pool: DocumentPool) -> None:
    columns = [c for c in ("id_document", "n_sentences", "split", "status") if c in pq.read_schema(path).names]
    if "id_document" not in columns:
        raise InputError(f"{path}: no id_document column")
    table = pq.read_table(path, columns=columns).to_pydict()
    n = len(table["id_document"])
    for i in range(n):
        document = str(table["id_document"][i])
        if document in pool.doc_types:
            if "n_sentences" in table and table["n_sentences"][i] is not None:
                pool.n_sentences_total[document] = int(table["n_sentences"][i])
        elif (wanted is None or table.get("split", [None] * n)[i] in wanted) and table.get("status", ["ok"] * n)[
            i
        ] == "ok":
            pool.documents_without_sentence += 1


def _identifier(value: Any, path: Path) -> str:
    if value is None or value == "":
        raise InputError(f"{path}: a sentence has no meta.id_document")
    return str(value)


def _iter_meta(path: Path, need_split: bool) -> Iterator[tuple[dict, str | None]]:
    """(meta, split) of every sentence, reading only those columns of a Parquet file."""
    if path.suffix == ".parquet":
        names = pq.read_schema(path).names
        if "meta" not in names:
            raise InputError(f"{path}: no meta column (not in the weak-label sentences format)")
        if need_split and "split" not in names:
            raise InputError(f"{path}: the sentences have no split; choose every document with --split all")
        columns = ["meta"] + (["split"] if "split" in names else [])
        for batch in pq.ParquetFile(path).iter_batches(columns=columns, batch_size=65536):
            metas = batch.column(0).to_pylist()
            splits = batch.column(1).to_pylist() if len(columns) == 2 else [None] * len(metas)
            yield from zip(metas, splits)
        return
    for number, row in iter_json_objects(path):
        if not isinstance(row.get("meta"), dict):
            raise InputError(f"{path}, line {number}: no meta object (not in the weak-label sentences format)")
        if need_split and "split" not in row:
            raise InputError(
                f"{path}, line {number}: the sentence has no split; choose every document with --split all"
            )
        yield row["meta"], row.get("split")


def read_sentences(directory: str | Path, documents: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Every sentence of ``documents``, per document, in ``sentence_index`` order (file order on ties)."""
    path = sentences_path(directory)
    found: dict[str, list[dict[str, Any]]] = {}
    if path.suffix == ".parquet":
        chosen = pa.array(sorted(documents), type=pa.string())
        for batch in pq.ParquetFile(path).iter_batches(batch_size=8192):
            ids = pc.cast(
                pc.struct_field(batch.column(batch.schema.get_field_index("meta")), "id_document"), pa.string()
            )
            kept = batch.filter(pc.is_in(ids, value_set=chosen))
            for row in kept.to_pylist():
                found.setdefault(str(row["meta"]["id_document"]), []).append(row)
    else:
        for _, row in iter_json_objects(path):
            document = str((row.get("meta") or {}).get("id_document"))
            if document in documents:
                found.setdefault(document, []).append(row)
    for rows in found.values():
        rows.sort(key=lambda row: row["meta"].get("sentence_index") or 0)
    return found
