"""Reading the Annuaire Santé extraction (``PS_LibreAcces_Personne_activite``) into health professionals.

The public extraction has one line per *activity*: a physician working on three sites appears three
times. What the gazetteers need is each person once — last and first name as practised (``Nom
d'exercice``, ``Prénom d'exercice``), profession, civilité (``Docteur``/``Professeur``) — and, from the
practice sites, more streets, postcodes, cities, phones and e-mails.

Format: UTF-8 (a BOM is tolerated), ``|``-separated, **no quoting at all** (names contain ``'``),
every line — header included — ending with a trailing ``|``. Files have 52 columns, newer ones 56;
columns are looked up by header name. The file may be given plain or inside the published zip
(``PS_LibreAcces_YYYYMMDDhhmm.zip``), read from the archive without extracting it.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from deid_ds.kb.ban import SourceStats
from deid_ds.kb.source_files import (
    SourceError,
    StoppableFile,
    check_has_rows,
    check_separator,
    first_line,
    guarded_batches,
    sniff,
)
from deid_ds.kb.tables import DistinctCounter

ID = "Identifiant PP"
LASTNAME = "Nom d'exercice"
FIRSTNAME = "Prénom d'exercice"
PROFESSION = "Libellé profession"
CIVILITE_EXERCICE = "Libellé civilité d'exercice"
CIVILITE = "Libellé civilité"
REQUIRED_COLUMNS = [ID, LASTNAME, FIRSTNAME, PROFESSION]
SITE_COLUMNS = {
    "numero": "Numéro Voie (coord. structure)",
    "indice": "Indice répétition voie (coord. structure)",
    "type_voie": "Libellé type de voie (coord. structure)",
    "voie": "Libellé Voie (coord. structure)",
    "mention": "Mention distribution (coord. structure)",
    "cedex": "Bureau cedex (coord. structure)",
    "code_postal": "Code postal (coord. structure)",
    "code_commune": "Code commune (coord. structure)",
    "commune": "Libellé commune (coord. structure)",
    "telephone": "Téléphone (coord. structure)",
    "telephone2": "Téléphone 2 (coord. structure)",
    "fax": "Télécopie (coord. structure)",
    "email": "Adresse e-mail (coord. structure)",
}
MEMBER_PREFIX = "PS_LibreAcces_Personne_activite"
BLOCK_SIZE = 8 << 20
_TRAILING = "__trailing__"


@dataclass
class DirectoryTables:
    """Distinct professionals and practice-site entries, each with ``n`` activity lines behind it."""

    people: DistinctCounter = field(
        default_factory=lambda: DistinctCounter(
            ["id", "lastname", "firstname", "profession", "civilite_exercice", "civilite"], required=["id", "lastname"]
        )
    )
    streets: DistinctCounter = field(
        default_factory=lambda: DistinctCounter(["street", "code_commune", "code_postal", "commune"])
    )
    communes: DistinctCounter = field(
        default_factory=lambda: DistinctCounter(["commune", "code_commune", "code_postal"])
    )
    contacts: DistinctCounter = field(default_factory=lambda: DistinctCounter(["value", "kind"]))


def find_member(path: Path) -> str:
    """The ``PS_LibreAcces_Personne_activite_*.txt`` member of the published zip."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if Path(n).name.startswith(MEMBER_PREFIX) and n.endswith(".txt")]
    except zipfile.BadZipFile as error:
        raise SourceError(f"{path}: not a readable zip archive ({error})") from None
    if not names:
        raise SourceError(f"{path}: the archive holds no {MEMBER_PREFIX}_*.txt file")
    return sorted(names)[0]


def read_directory(path: str | Path, tables: DirectoryTables | None = None) -> tuple[DirectoryTables, SourceStats]:
    """Add the professionals and practice sites of one extraction to ``tables``; refuse a wrong file."""
    path = Path(path)
    tables = tables or DirectoryTables()
    member = find_member(path) if sniff(path) == "zip" else None
    header = first_line(path, member=member)
    names = check_separator(path, header, "|", REQUIRED_COLUMNS)
    if names[-1] != "":
        raise SourceError(f"{path}, line 1: header does not end with '|' as the Annuaire Santé extraction does")
    columns = names[:-1] + [_TRAILING]
    if len(set(columns)) != len(columns):
        raise SourceError(f"{path}, line 1: duplicate column names in the header")
    stats = SourceStats(str(path) + (f"!{member}" if member else ""), columns=len(names) - 1)

    def invalid_row(row) -> str:
        line = f"line {row.number}" if row.number is not None and row.number >= 0 else "a line"
        stats.reject(
            "wrong number of fields",
            example=(
                f"{line}: expected {row.expected_columns - 1} fields, got {row.actual_columns - 1}: {row.text[:160]}"
            ),
        )
        return "skip"

    pending = DirectoryTables()
    if member is None:
        _read_into(path, path, columns, invalid_row, pending, stats)
    else:
        try:
            with zipfile.ZipFile(path) as archive, archive.open(member) as handle:
                _read_into(StoppableFile(handle), path, columns, invalid_row, pending, stats)
        except zipfile.BadZipFile as error:
            raise SourceError(f"{path}: corrupt zip archive after {stats.rows_read:,} lines ({error})") from None
    check_has_rows(path, stats.rows_read, sum(stats.rejected.values()))
    for name in ("people", "streets", "communes", "contacts"):
        getattr(tables, name).extend(getattr(pending, name).result())
    return tables, stats


def _read_into(
    source, path: Path, columns: list[str], invalid_row, pending: DirectoryTables, stats: SourceStats
) -> None:
    wanted = [c for c in [*REQUIRED_COLUMNS, CIVILITE_EXERCICE, CIVILITE, *SITE_COLUMNS.values()] if c in columns]

    def open_reader():
        return pacsv.open_csv(
            source,
            read_options=pacsv.ReadOptions(
                column_names=columns, skip_rows=1, block_size=BLOCK_SIZE, encoding="utf-8", use_threads=False
            ),
            parse_options=pacsv.ParseOptions(
                delimiter="|", quote_char=False, escape_char=False, invalid_row_handler=invalid_row
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={c: pa.string() for c in columns}, include_columns=wanted, strings_can_be_null=True
            ),
        )

    stoppable = source if isinstance(source, StoppableFile) else None
    for batch in guarded_batches(open_reader, path, lambda: stats.rows_read, stoppable):
        columns_of_batch = {name: batch.column(name) for name in batch.schema.names}
        for name in [CIVILITE_EXERCICE, CIVILITE, *SITE_COLUMNS.values()]:
            columns_of_batch.setdefault(name, pa.nulls(batch.num_rows, pa.string()))
        _count_batch(columns_of_batch, batch.num_rows, pending, stats)


def _strip(column: pa.Array) -> pa.Array:
    stripped = pc.utf8_trim_whitespace(column)
    return pc.if_else(pc.equal(stripped, ""), pa.scalar(None, pa.string()), stripped)


def _count_batch(table: dict[str, pa.Array], num_rows: int, tables: DirectoryTables, stats: SourceStats) -> None:
    stats.rows_read += num_rows
    lastname = _strip(table[LASTNAME])
    missing = pc.sum(pc.is_null(lastname)).as_py() or 0
    if missing:
        stats.reject("missing Nom d'exercice", missing)
    stats.rows_kept += num_rows - missing
    people = pa.table(
        {
            "id": _strip(table[ID]),
            "lastname": lastname,
            "firstname": _strip(table[FIRSTNAME]),
            "profession": _strip(table[PROFESSION]),
            "civilite_exercice": _strip(table[CIVILITE_EXERCICE]),
            "civilite": _strip(table[CIVILITE]),
        }
    )
    tables.people.add(people)

    site = {key: _strip(table[column]) for key, column in SITE_COLUMNS.items()}
    # (fill_null first: binary_join_element_wise returns an empty array when an input is all null)
    street = pc.binary_join_element_wise(pc.fill_null(site["type_voie"], ""), pc.fill_null(site["voie"], ""), " ")
    street = pc.if_else(pc.is_null(site["voie"]), pa.scalar(None, pa.string()), _strip(street))
    tables.streets.add(
        pa.table(
            {
                "street": street,
                "code_commune": site["code_commune"],
                "code_postal": site["code_postal"],
                "commune": site["commune"],
            }
        )
    )
    tables.communes.add(
        pa.table({"commune": site["commune"], "code_commune": site["code_commune"], "code_postal": site["code_postal"]})
    )
    for kind, key in (
        ("phone", "telephone"),
        ("phone", "telephone2"),
        ("fax", "fax"),
        ("email", "email"),
        ("mention", "mention"),
        ("cedex", "cedex"),
    ):
        values = site[key]
        tables.contacts.add(pa.table({"value": values, "kind": pa.array([kind] * num_rows, pa.string())}))


__all__ = ["DirectoryTables", "find_member", "read_directory"]
