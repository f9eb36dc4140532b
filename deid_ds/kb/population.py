"""``build-kb --population FILE``: an INSEE population file, joined to the communes table by INSEE code.

The communes table (:func:`deid_ds.kb.build.commune_table`) needs a size for each commune, so that
``deidentify --privacy dp`` draws a surrogate among communes of a similar size: by default the number of BAN
addresses (a proxy), and the population where the user gives a file of it. Accepted: a CSV file, ``;`` or
``,`` separated (read from the header line), UTF-8 (with or without BOM) or Latin-1, with

* the commune's INSEE code in a column ``CODGEO``, ``DEPCOM``, ``COM``, ``code_insee`` or ``code_commune``
  (case-insensitive; a ``COM`` column that holds names, as in the "populations légales" ``donnees_communes.csv``,
  is skipped), or else in ``DEP`` + ``CODCOM`` (département and commune number, joined);
* the population in ``PMUN`` (population municipale, preferred), ``PTOT``, ``population``, or a census column
  ``Pyy_POP`` (``P21_POP``, the "base comparateur de territoires").

Paris, Lyon and Marseille are joined as whole cities: the city's own row when the file has one, else the sum of
its arrondissements (``75101``…``75120``). Rows without a code or a number are skipped and counted. A file that
cannot be one (no such columns, no usable row, unreadable) is refused with one line (:class:`InputError`).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from deid_ds.errors import InputError
from deid_ds.kb.communes import whole_city_code

CODE_COLUMNS = ("codgeo", "depcom", "com", "code_insee", "code_commune")
POPULATION_COLUMNS = ("pmun", "ptot", "population")
_CENSUS = re.compile(r"p\d{2}_pop")
_INSEE = re.compile(r"(?:\d{2}|2[AB])\d{3}")


@dataclass
class Population:
    """Population by INSEE code (whole cities for Paris, Lyon, Marseille), and what was read."""

    by_code: dict[str, int] = field(default_factory=dict)
    rows_read: int = 0
    rows_kept: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    columns: tuple[str, str] = ("", "")


def _text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"--population {path}: cannot read it ({error.strerror or type(error).__name__})") from None
    for encoding in ("utf-8-sig", "latin-1"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes any bytes")  # pragma: no cover


def _number(value: str) -> int | None:
    """``12 345``, ``12345``, ``12345.0`` -> 12345; None for anything else."""
    cleaned = value.replace("\u00a0", "").replace("\u202f", "").replace(" ", "").replace(",", ".")
    try:
        number = float(cleaned)
    except ValueError:
        return None
    return round(number) if math.isfinite(number) and number >= 0 else None


def read_population(path: str | Path) -> Population:
    """The population by INSEE code of an INSEE file (see the module docstring); :class:`InputError` if unusable."""
    path = Path(path)
    text = _text(path)
    header_line = text.split("\n", 1)[0]
    delimiter = ";" if header_line.count(";") >= header_line.count(",") else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = [h.strip().lower() for h in next(reader, [])]
    if not header or header == [""]:
        raise InputError(f"--population {path}: empty file (expected an INSEE population CSV)")
    rows = list(reader)
    code_at = _code_column(header, rows)
    pop_at = next((header.index(c) for c in POPULATION_COLUMNS if c in header), None)
    if pop_at is None:
        pop_at = next((i for i, h in enumerate(header) if _CENSUS.fullmatch(h)), None)
    if code_at is None or pop_at is None:
        raise InputError(
            f"--population {path}: expected an INSEE code column ({', '.join(c.upper() for c in CODE_COLUMNS)} or "
            f"DEP+CODCOM) and a population column (PMUN, PTOT, population or Pyy_POP); found {len(header)} columns"
        )
    population = Population(columns=(_describe(header, code_at), header[pop_at]))
    direct: dict[str, int] = {}
    arrondissements: dict[str, int] = {}
    for row in rows:
        if not any(cell.strip() for cell in row):
            continue
        population.rows_read += 1
        code = code_at(row) if callable(code_at) else (row[code_at].strip().upper() if code_at < len(row) else "")
        number = _number(row[pop_at]) if pop_at < len(row) else None
        if not _INSEE.fullmatch(code) and not re.fullmatch(r"97\d{3}", code):
            population.rejected["no INSEE code"] = population.rejected.get("no INSEE code", 0) + 1
            continue
        if number is None:
            population.rejected["no population number"] = population.rejected.get("no population number", 0) + 1
            continue
        population.rows_kept += 1
        city = whole_city_code(code)
        if city != code:
            arrondissements[city] = arrondissements.get(city, 0) + number
        else:
            direct[code] = direct.get(code, 0) + number
    for city, total in arrondissements.items():
        direct.setdefault(city, total)  # the city's own row wins over the sum of its arrondissements
    if not direct:
        raise InputError(f"--population {path}: no row with an INSEE code and a population number")
    population.by_code = direct
    return population


def _code_column(header: list[str], rows: list[list[str]]):
    """The index of the INSEE code column, a function joining ``DEP`` and ``CODCOM``, or None."""
    sample = rows[:50]
    for name in CODE_COLUMNS:
        if name in header:
            at = header.index(name)
            values = [r[at].strip().upper() for r in sample if at < len(r) and r[at].strip()]
            if values and sum(bool(_INSEE.fullmatch(v)) for v in values) * 2 >= len(values):
                return at
    if "dep" in header and "codcom" in header:
        dep, com = header.index("dep"), header.index("codcom")

        def joined(row: list[str]) -> str:
            if max(dep, com) >= len(row):
                return ""
            d, c = row[dep].strip().upper(), row[com].strip()
            return d + (c[-2:].zfill(2) if len(d) == 3 else c.zfill(3))

        return joined
    return None


def _describe(header: list[str], code_at) -> str:
    return "dep+codcom" if callable(code_at) else header[code_at]


__all__ = ["Population", "read_population"]
