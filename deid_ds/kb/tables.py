"""Streaming helpers over Arrow tables: distinct rows with counts, in bounded memory.

The national files are tens of millions of rows but only a few million distinct streets, communes and
names: each batch is reduced to its distinct keys with a count, and the partial results are merged
whenever enough of them have accumulated, so memory follows the number of distinct keys, not of rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

COUNT = "n"


class DistinctCounter:
    """Distinct combinations of ``keys`` over many tables, with how many rows had each."""

    def __init__(self, keys: Sequence[str], *, required: Sequence[str] = (), merge_every: int = 64) -> None:
        self.keys = list(keys)
        self.required = list(required or keys[:1])
        self.merge_every = merge_every
        self._parts: list[pa.Table] = []

    def add(self, table: pa.Table) -> None:
        """Count the rows of ``table`` whose required columns are non-null and non-empty."""
        table = table.select(self.keys)
        for name in self.required:
            column = table[name]
            table = table.filter(pc.and_(pc.is_valid(column), pc.not_equal(column, "")))
        if table.num_rows == 0:
            return
        self._parts.append(
            table.group_by(self.keys, use_threads=False)
            .aggregate([([], "count_all")])
            .rename_columns([*self.keys, COUNT])
        )
        if len(self._parts) >= self.merge_every:
            self._parts = [self._merge()]

    def extend(self, counted: pa.Table) -> None:
        """Add an already counted table (same keys plus the count column), e.g. from another file."""
        if counted.num_rows:
            self._parts.append(counted.select([*self.keys, COUNT]))

    def _merge(self) -> pa.Table:
        merged = pa.concat_tables(self._parts)
        return (
            merged.group_by(self.keys, use_threads=False)
            .aggregate([(COUNT, "sum")])
            .rename_columns([*self.keys, COUNT])
        )

    def result(self) -> pa.Table:
        """Distinct rows, sorted by key (deterministic output), with their count."""
        if not self._parts:
            schema = pa.schema([(k, pa.string()) for k in self.keys] + [(COUNT, pa.int64())])
            return schema.empty_table()
        table = self._merge()
        self._parts = [table]
        return table.sort_by([(k, "ascending") for k in self.keys])
