"""Reading the Base Adresse Nationale (``adresses-XX.csv.gz``) into distinct streets, places and communes.

One row of the BAN is one address point; what the gazetteers need is far smaller: the distinct street
names (``nom_voie``, which may be a lieu-dit such as ``Le Mas Renouard``) and lieux-dits (``nom_ld``) of
each commune, the communes (``nom_commune``), the former communes merged into them
(``nom_ancienne_commune``, still real place names), the postal routing labels
(``libelle_acheminement``), the postcode↔commune relation that lets the labeller confirm a ZIP next
to a city, and each commune's address count and the sums of its addresses' ``lon``/``lat`` (its centroid
and a size, for the communes drawn among similar ones under ``deidentify --privacy dp``).

The file is streamed with pyarrow's CSV reader — never loaded whole — with every column read as a
string (postcodes keep their leading zero, Corsica's ``2A``). Columns are looked up by name: files
with 23 columns (since 2022), the older 20, or the ``csv-with-ids`` variant are all read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from deid_ds.kb.source_files import (
    SourceError,
    check_has_rows,
    check_separator,
    first_line,
    guarded_batches,
)
from deid_ds.kb.tables import DistinctCounter

REQUIRED_COLUMNS = ["nom_voie", "code_postal", "code_insee", "nom_commune"]
OPTIONAL_COLUMNS = ["nom_ancienne_commune", "code_insee_ancienne_commune", "libelle_acheminement", "nom_ld"]
#: The address point's WGS84 coordinates, read as numbers (the communes' centroids); null where absent.
COORDINATES = ["lon", "lat"]
BLOCK_SIZE = 8 << 20
MAX_EXAMPLES = 5


@dataclass
class SourceStats:
    """What was read from one source file: rows read, kept, rejected (by reason, with examples)."""

    path: str
    rows_read: int = 0
    rows_kept: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    columns: int = 0

    def reject(self, reason: str, n: int = 1, example: str | None = None) -> None:
        self.rejected[reason] = self.rejected.get(reason, 0) + n
        if example is not None and len(self.examples) < MAX_EXAMPLES:
            self.examples.append(example)


@dataclass
class BanTables:
    """Distinct BAN entries, each with ``n``, the number of address rows behind it."""

    streets: DistinctCounter = field(
        default_factory=lambda: DistinctCounter(["nom_voie", "code_insee", "code_postal", "nom_commune"])
    )
    lieux_dits: DistinctCounter = field(
        default_factory=lambda: DistinctCounter(["nom_ld", "code_insee", "code_postal", "nom_commune"])
    )
    #: Each commune with its address count and the sums of its addresses' coordinates (its centroid).
    communes: DistinctCounter = field(
        default_factory=lambda: DistinctCounter(["nom_commune", "code_insee"], sums=COORDINATES)
    )
    former_communes: DistinctCounter = field(
        default_factory=lambda: DistinctCounter(
            ["nom_ancienne_commune", "code_insee_ancienne_commune", "code_insee", "nom_commune"]
        )
    )
    postcodes: DistinctCounter = field(
        default_factory=lambda: DistinctCounter(
            ["code_postal", "code_insee", "nom_commune", "libelle_acheminement"], required=["code_postal", "code_insee"]
        )
    )


def read_ban(path: str | Path, tables: BanTables | None = None) -> tuple[BanTables, SourceStats]:
    """Add the entries of one BAN file to ``tables`` (new ones by default); refuse a wrong file.

    Raises :class:`SourceError` for a file that cannot be a BAN file (empty, HTML page, wrong separator,
    missing columns, truncated gzip, a header and no row): nothing of it is kept. Rows with the wrong number of
    fields or without a commune are skipped and counted.
    """
    path = Path(path)
    tables = tables or BanTables()
    names = check_separator(path, first_line(path), ";", REQUIRED_COLUMNS)
    stats = SourceStats(str(path), columns=len(names))
    wanted = REQUIRED_COLUMNS + [c for c in OPTIONAL_COLUMNS + COORDINATES if c in names]

    def invalid_row(row) -> str:
        line = f"line {row.number}" if row.number is not None and row.number >= 0 else "a line"
        stats.reject(
            "wrong number of fields",
            example=f"{line}: expected {row.expected_columns} fields, got {row.actual_columns}: {row.text[:120]}",
        )
        return "skip"

    pending = BanTables()
    _read_into(path, names, wanted, invalid_row, pending, stats)
    check_has_rows(path, stats.rows_read, sum(stats.rejected.values()))
    for name in ("streets", "lieux_dits", "communes", "former_communes", "postcodes"):
        getattr(tables, name).extend(getattr(pending, name).result())
    return tables, stats


def _read_into(
    path: Path, names: list[str], wanted: list[str], invalid_row, pending: BanTables, stats: SourceStats
) -> None:
    def open_reader():
        return pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=BLOCK_SIZE, use_threads=False),  # exact line numbers in messages
            parse_options=pacsv.ParseOptions(delimiter=";", invalid_row_handler=invalid_row),
            convert_options=pacsv.ConvertOptions(
                column_types={name: pa.float64() if name in COORDINATES else pa.string() for name in names if name},
                include_columns=wanted,
                strings_can_be_null=True,
            ),
        )

    for batch in guarded_batches(open_reader, path, lambda: stats.rows_read):
        table = pa.Table.from_batches([batch])
        for name in OPTIONAL_COLUMNS + COORDINATES:
            if name not in table.column_names:
                kind = pa.float64() if name in COORDINATES else pa.string()
                table = table.append_column(name, pa.nulls(table.num_rows, kind))
        _count_batch(table, pending, stats)


def _count_batch(table: pa.Table, tables: BanTables, stats: SourceStats) -> None:
    stats.rows_read += table.num_rows
    has_commune = pc.and_(pc.is_valid(table["nom_commune"]), pc.is_valid(table["code_insee"]))
    missing = table.num_rows - pc.sum(has_commune).as_py() if table.num_rows else 0
    if missing:
        stats.reject("missing nom_commune or code_insee", missing)
        table = table.filter(has_commune)
    no_street = pc.sum(pc.is_null(table["nom_voie"])).as_py() or 0
    if no_street:
        stats.reject("missing nom_voie (commune kept)", no_street)
    stats.rows_kept += table.num_rows
    tables.streets.add(table)
    tables.lieux_dits.add(table)
    tables.communes.add(table)
    tables.former_communes.add(table)
    tables.postcodes.add(table)


__all__ = ["BanTables", "SourceError", "SourceStats", "read_ban"]
