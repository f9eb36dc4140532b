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
    """Distinct combinations of ``keys`` over many tables, with how many rows had each.

    ``sums``: numeric columns also summed per key (``<name>_sum``) with how many rows had a value
    (``<name>_count``): the BAN's coordinates give each commune's centroid in the same pass.
    """

    def __init__(
        self, keys: Sequence[str], *, required: Sequence[str] = (), sums: Sequence[str] = (), merge_every: int = 64
    ) -> None:
        self.keys = list(keys)
        self.required = list(required or keys[:1])
        self.sums = list(sums)
        self.merge_every = merge_every
        self._parts: list[pa.Table] = []

    @property
    def _totals(self) -> list[str]:
        """The summed columns of a counted table: the count, then each sum and its count of values."""
        return [COUNT] + [f"{name}_{what}" for name in self.sums for what in ("sum", "count")]

    def add(self, table: pa.Table) -> None:
        """Count the rows of ``table`` whose required columns are non-null and non-empty."""
        table = table.select(self.keys + self.sums)
        for name in self.required:
            column = table[name]
            table = table.filter(pc.and_(pc.is_valid(column), pc.not_equal(column, "")))
        if table.num_rows == 0:
            return
        aggregates = [([], "count_all")] + [(name, what) for name in self.sums for what in ("sum", "count")]
        self._parts.append(
            table.group_by(self.keys, use_threads=False).aggregate(aggregates).rename_columns(self.keys + self._totals)
        )
        if len(self._parts) >= self.merge_every:
            self._parts = [self._merge()]

    def extend(self, counted: pa.Table) -> None:
        """Add an already counted table (same keys plus the count and sum columns), e.g. from another file."""
        if counted.num_rows:
            self._parts.append(counted.select(self.keys + self._totals))

    def _merge(self) -> pa.Table:
        merged = pa.concat_tables(self._parts)
        return (
            merged.group_by(self.keys, use_threads=False)
            .aggregate([(name, "sum") for name in self._totals])
            .rename_columns(self.keys + self._totals)
        )

    def result(self) -> pa.Table:
        """Distinct rows, sorted by key (deterministic output), with their count."""
        if not self._parts:
            totals = [(COUNT, pa.int64())]
            for name in self.sums:
                totals += [(f"{name}_sum", pa.float64()), (f"{name}_count", pa.int64())]
            schema = pa.schema([(k, pa.string()) for k in self.keys] + totals)
            return schema.empty_table()
        table = self._merge()
        self._parts = [table]
        return table.sort_by([(k, "ascending") for k in self.keys])
