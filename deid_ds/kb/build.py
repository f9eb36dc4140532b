"""``deid-ds build-kb``: source files → versioned gazetteer tables, a manifest, and a compiled matcher.

Output directory (default ``kb/``):

* ``streets.parquet`` — ``surface``, ``key``, ``kind`` (``voie``, ``lieu-dit``, ``site``), ``code_insee``,
  ``code_postal``, ``commune``, ``source``, ``n`` (address rows or activity lines behind the entry);
* ``places.parquet`` — communes: ``surface``, ``key``, ``kind`` (``commune``, ``ancienne_commune``,
  ``acheminement``, ``site``, ``commune_sans_article``: ``Havre`` of ``Le Havre``), ``code_insee``, ``source``,
  ``n``, ``ambiguous`` (why, or null); Paris, Lyon and Marseille as whole cities (:mod:`deid_ds.kb.communes`);
* ``postcodes.parquet`` — the postcode↔commune relation: ``code_postal``, ``code_insee``, ``commune``,
  ``commune_key``, ``libelle_acheminement``, ``source``, ``n``;
* ``professionals.parquet`` — one row per person of the Annuaire Santé: ``id``, ``lastname``,
  ``firstname``, ``profession``, ``civilite_exercice``, ``civilite``, ``n`` (activity lines);
* ``names.parquet`` — the name gazetteer: ``surface``, ``key``, ``kind`` (``lastname``, ``firstname``,
  ``fullname``), ``part`` (a part of a compound name), ``n`` (professionals), ``ambiguous``;
* ``contacts.parquet`` — practice-site phones, faxes, e-mails, ``CS``/``BP`` mentions, CEDEX offices;
* ``communes.parquet`` — one row per BAN commune (Paris, Lyon, Marseille whole): ``code_insee``, ``commune``,
  ``commune_key``, ``postcodes``, ``lat``/``lon`` (the mean of its addresses' coordinates), ``addresses``,
  ``population`` (from ``--population``, else null), ``size`` (the population where known, else the
  addresses), ``size_source``, ``streets`` and ``lieux_dits`` (its most addressed ones, at most 16): what
  ``deidentify --privacy dp`` draws similar communes, and their streets, from
  (:mod:`deid_ds.deidentification.similar_communes`);
* ``manifest.json`` — each source (URL or path, size, sha256, date, rows read/kept/rejected with
  reasons and example lines), each table (rows, sha256), the matcher (size, sha256), the package version
  and the methods used;
* ``matcher.npz`` and ``matcher.json`` — the compiled matcher (:mod:`deid_ds.kb.matcher`);
* ``.deid-ds.json`` — the marker of the ``--out`` policy; ``downloads/`` — the sources fetched by URL.

Everything is first built in a temporary directory inside the output directory (the matcher too, recorded
in the manifest); the previous manifest is then removed, the files moved into place and the new manifest
written last, so a failed build never leaves a half-written knowledge base that reads as complete: a build
stopped during the moves leaves no manifest, and a table or matcher changed since is detected by the
manifest's checksums. The directory follows the ``--out`` policy of the other commands (:func:`build_kb`).
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import shutil
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from tqdm import tqdm

from deid_ds import __version__
from deid_ds.errors import InputError
from deid_ds.io.files import TMP_PREFIX
from deid_ds.kb.ambiguity import LEXICON_DESCRIPTION, ambiguity_reason
from deid_ds.kb.annuaire import DirectoryTables, read_directory
from deid_ds.kb.ban import BanTables, SourceStats, read_ban
from deid_ds.kb.communes import CONTRACTED, whole_city, whole_city_code, without_article
from deid_ds.kb.manifest import (
    MANIFEST,
    MANIFEST_FORMAT,
    TABLES,
    is_knowledge_base,
    read_manifest,
    read_table,
    sha256_of,
    verify_tables,
)
from deid_ds.kb.matcher import MATCHER_FILE, MATCHER_META, compile_matcher
from deid_ds.kb.normalize import fold_key, name_parts

DOWNLOADS = "downloads"
COMMAND = "build-kb"


@dataclass
class BuildReport:
    """What ``build-kb`` did, as printed at the end and kept in the manifest."""

    out: str
    sources: list[dict] = field(default_factory=list)
    tables: dict[str, dict] = field(default_factory=dict)
    seconds: float = 0.0


_S, _N, _B = pa.string(), pa.int64(), pa.bool_()
SCHEMAS: dict[str, pa.Schema] = {
    "streets": pa.schema(
        [
            ("surface", _S),
            ("key", _S),
            ("kind", _S),
            ("code_insee", _S),
            ("code_postal", _S),
            ("commune", _S),
            ("source", _S),
            ("n", _N),
        ]
    ),
    "places": pa.schema(
        [("surface", _S), ("key", _S), ("kind", _S), ("code_insee", _S), ("source", _S), ("n", _N), ("ambiguous", _S)]
    ),
    "postcodes": pa.schema(
        [
            ("code_postal", _S),
            ("code_insee", _S),
            ("commune", _S),
            ("commune_key", _S),
            ("libelle_acheminement", _S),
            ("source", _S),
            ("n", _N),
        ]
    ),
    "professionals": pa.schema(
        [
            ("id", _S),
            ("lastname", _S),
            ("firstname", _S),
            ("civilite_exercice", _S),
            ("civilite", _S),
            ("profession", _S),
            ("n", _N),
        ]
    ),
    "names": pa.schema([("surface", _S), ("key", _S), ("kind", _S), ("part", _B), ("n", _N), ("ambiguous", _S)]),
    "contacts": pa.schema([("value", _S), ("key", _S), ("kind", _S), ("n", _N)]),
    "communes": pa.schema(
        [
            ("code_insee", _S),
            ("commune", _S),
            ("commune_key", _S),
            ("postcodes", pa.list_(_S)),
            ("lat", pa.float64()),
            ("lon", pa.float64()),
            ("addresses", _N),
            ("population", _N),
            ("size", _N),
            ("size_source", _S),
            ("streets", pa.list_(_S)),
            ("lieux_dits", pa.list_(_S)),
        ]
    ),
}

#: Streets and lieux-dits kept per commune in the communes table: its most addressed ones, so that a street of a
#: surrogate commune (``deidentify --privacy dp``) is a real one without a worker loading the streets table.
STREETS_PER_COMMUNE = 16


def _table(name: str, columns: dict[str, list]) -> pa.Table:
    """A gazetteer table with its fixed schema (also when a source type is absent and it is empty)."""
    schema = SCHEMAS[name]
    return pa.table({f.name: pa.array(columns.get(f.name, []), type=f.type) for f in schema}, schema=schema)


# -- tables from the sources ----------------------------------------------------------------------------


def _keys_of(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """``fold_key`` of every value, computed once per distinct value (streets repeat across files)."""
    distinct = pc.unique(column)
    keys = pa.array([fold_key(v) if v is not None else None for v in distinct.to_pylist()], type=pa.string())
    return pc.take(keys, pc.index_in(column, value_set=distinct))


def street_table(ban: BanTables, directory: DirectoryTables) -> pa.Table:
    """Columnar (millions of rows nationally): no Python object per row."""
    parts = []
    for kind, table, name_column, source in (
        ("voie", ban.streets.result(), "nom_voie", "ban"),
        ("lieu-dit", ban.lieux_dits.result(), "nom_ld", "ban"),
    ):
        parts.append(_street_part(table, name_column, "code_insee", "nom_commune", kind, source))
    parts.append(_street_part(directory.streets.result(), "street", "code_commune", "commune", "site", "annuaire"))
    return pa.concat_tables(parts)


def _street_part(table: pa.Table, name: str, insee: str, commune: str, kind: str, source: str) -> pa.Table:
    n = table.num_rows
    surface = table[name].combine_chunks() if n else pa.array([], pa.string())
    columns = {
        "surface": surface,
        "key": _keys_of(surface) if n else pa.array([], pa.string()),
        "kind": pa.array([kind] * n, pa.string()),
        "code_insee": table[insee],
        "code_postal": table["code_postal"],
        "commune": table[commune],
        "source": pa.array([source] * n, pa.string()),
        "n": table["n"],
    }
    return pa.table(columns, schema=SCHEMAS["streets"])


def place_table(ban: BanTables, directory: DirectoryTables) -> pa.Table:
    counts: dict[tuple[str, str, str, str | None, str], int] = Counter()
    for row in ban.communes.result().to_pylist():
        name, code_insee = whole_city(row["nom_commune"], row["code_insee"])  # "Paris 13e Arrondissement": Paris
        counts[(name, "commune", code_insee, "ban")] += row["n"]
        short = without_article(name)  # "Le Havre" is written "au Havre"
        if short is not None:
            counts[(short, CONTRACTED, code_insee, "ban")] += row["n"]
    for row in ban.former_communes.result().to_pylist():
        counts[
            (
                row["nom_ancienne_commune"],
                "ancienne_commune",
                row["code_insee_ancienne_commune"] or row["code_insee"],
                "ban",
            )
        ] += row["n"]
    commune_keys = {(fold_key(name).replace("-", " "), insee) for name, kind, insee, _ in counts if kind == "commune"}
    for row in ban.postcodes.result().to_pylist():
        label = row["libelle_acheminement"]
        # The postal label in capitals ("PLOUGASTEL DAOULAS") when it is not just the commune's name.
        # Labels with a parenthesised article ("ABERGEMENT-DE-VAREY (L )") are a La Poste notation, not text.
        code_insee = whole_city(row["nom_commune"] or "", row["code_insee"])[1]
        if label and "(" not in label and (fold_key(label).replace("-", " "), code_insee) not in commune_keys:
            counts[(label, "acheminement", code_insee, "ban")] += row["n"]
    for row in directory.communes.result().to_pylist():
        name, code_insee = whole_city(row["commune"], row["code_commune"])
        counts[(name, "site", code_insee, "annuaire")] += row["n"]
    rows = defaultdict(list)
    for (surface, kind, code_insee, source), n in sorted(
        counts.items(), key=lambda item: (item[0][0], item[0][1], item[0][2] or "", item[0][3])
    ):
        rows["surface"].append(surface)
        rows["key"].append(fold_key(surface))
        rows["kind"].append(kind)
        rows["code_insee"].append(code_insee)
        rows["source"].append(source)
        rows["n"].append(n)
        rows["ambiguous"].append(ambiguity_reason(surface))
    return _table("places", rows)


def postcode_table(ban: BanTables, directory: DirectoryTables) -> pa.Table:
    rows = defaultdict(list)
    for row in ban.postcodes.result().to_pylist():
        _add_postcode(
            rows,
            row["code_postal"],
            row["code_insee"],
            row["nom_commune"],
            row["libelle_acheminement"],
            "ban",
            row["n"],
        )
    for row in directory.communes.result().to_pylist():
        if row["code_postal"] and row["commune"]:
            _add_postcode(rows, row["code_postal"], row["code_commune"], row["commune"], None, "annuaire", row["n"])
    return _table("postcodes", rows)


def _add_postcode(rows, code_postal, code_insee, commune, label, source, n) -> None:
    rows["code_postal"].append(code_postal)
    rows["code_insee"].append(code_insee)
    rows["commune"].append(commune)
    rows["commune_key"].append(fold_key(commune) if commune else None)
    rows["libelle_acheminement"].append(label)
    rows["source"].append(source)
    rows["n"].append(n)


def commune_table(ban: BanTables, population: dict[str, int] | None = None) -> pa.Table:
    """One row per commune of the BAN, from the counts of the one pass over it (no second read): the centroid
    is the mean of its addresses' coordinates, its size the population (``population``, by INSEE code) where
    known, else its number of addresses, and its :data:`STREETS_PER_COMMUNE` most addressed streets and
    lieux-dits (names without digits). Paris, Lyon and Marseille are whole cities (their arrondissements
    summed); a name written two ways under one code keeps the most frequent."""
    names: dict[str, Counter] = defaultdict(Counter)
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0, 0.0, 0])  # n, lon sum/count, lat sum/count
    for row in ban.communes.result().to_pylist():
        name, code_insee = whole_city(row["nom_commune"], row["code_insee"])
        code_insee = whole_city_code(code_insee)  # also "Paris" written with an arrondissement's code
        names[code_insee][name] += row["n"]
        total = totals[code_insee]
        total[0] += row["n"]
        total[1] += row["lon_sum"] or 0.0
        total[2] += row["lon_count"] or 0
        total[3] += row["lat_sum"] or 0.0
        total[4] += row["lat_count"] or 0
    postcodes: dict[str, set[str]] = defaultdict(set)
    for row in ban.postcodes.result().to_pylist():
        code_insee = whole_city_code(whole_city(row["nom_commune"] or "", row["code_insee"])[1])
        if row["code_postal"]:
            postcodes[code_insee].add(row["code_postal"])
    population = population or {}
    streets = _most_addressed(ban.streets.result(), "nom_voie")
    lieux_dits = _most_addressed(ban.lieux_dits.result(), "nom_ld")
    rows = defaultdict(list)
    for code_insee in sorted(totals):
        n, lon_sum, lon_count, lat_sum, lat_count = totals[code_insee]
        name = max(sorted(names[code_insee]), key=names[code_insee].__getitem__)
        people = population.get(code_insee)
        rows["code_insee"].append(code_insee)
        rows["commune"].append(name)
        rows["commune_key"].append(fold_key(name))
        rows["postcodes"].append(sorted(postcodes.get(code_insee, ())))
        rows["lat"].append(round(lat_sum / lat_count, 6) if lat_count else None)
        rows["lon"].append(round(lon_sum / lon_count, 6) if lon_count else None)
        rows["addresses"].append(n)
        rows["population"].append(people)
        rows["size"].append(people if people is not None else n)
        rows["size_source"].append("population" if people is not None else "addresses")
        rows["streets"].append(streets.get(code_insee, []))
        rows["lieux_dits"].append(lieux_dits.get(code_insee, []))
    return _table("communes", rows)


def _most_addressed(table: pa.Table, name: str) -> dict[str, list[str]]:
    """The :data:`STREETS_PER_COMMUNE` names of ``table`` (BAN streets or lieux-dits, with ``n``) with the most
    addresses in each commune (whole cities by code), ties by name, sorted; names with a digit left out.
    Columnar: the national table has millions of rows."""
    if not table.num_rows:
        return {}
    table = table.filter(pc.invert(pc.match_substring_regex(table[name], r"\d")))
    codes = pc.dictionary_encode(table["code_insee"]).combine_chunks()
    whole = pa.array([whole_city_code(c) for c in codes.dictionary.to_pylist()], pa.string())
    table = pa.table({"code": pc.take(whole, codes.indices), "name": table[name], "n": table["n"]})
    table = table.group_by(["code", "name"], use_threads=False).aggregate([("n", "sum")])
    table = table.sort_by([("code", "ascending"), ("n_sum", "descending"), ("name", "ascending")])
    code = np.asarray(pc.dictionary_encode(table["code"]).combine_chunks().indices)
    starts = np.flatnonzero(np.r_[True, code[1:] != code[:-1]])
    rank = np.arange(len(code)) - np.repeat(starts, np.diff(np.r_[starts, len(code)]))
    kept = table.filter(pa.array(rank < STREETS_PER_COMMUNE))
    out: dict[str, list[str]] = defaultdict(list)
    for commune, street in zip(kept["code"].to_pylist(), kept["name"].to_pylist()):
        out[commune].append(street)
    return {commune: sorted(names) for commune, names in out.items()}


def professional_table(directory: DirectoryTables) -> pa.Table:
    """One row per person: the activity lines of a person are merged (professions joined)."""
    people: dict[str, dict] = {}
    for row in directory.people.result().to_pylist():
        person = people.get(row["id"])
        if person is None:
            people[row["id"]] = {**row, "profession": [row["profession"]] if row["profession"] else []}
            continue
        person["n"] += row["n"]
        if row["profession"] and row["profession"] not in person["profession"]:
            person["profession"].append(row["profession"])
        for name in ("firstname", "civilite_exercice", "civilite"):
            person[name] = person[name] or row[name]
    rows = defaultdict(list)
    for person_id in sorted(people):
        person = people[person_id]
        for name in ("id", "lastname", "firstname", "civilite_exercice", "civilite"):
            rows[name].append(person[name])
        rows["profession"].append(" / ".join(sorted(person["profession"])) or None)
        rows["n"].append(person["n"])
    return _table("professionals", rows)


def name_table(professionals: pa.Table) -> pa.Table:
    """Last names, first names and full names of the professionals, with their compound parts."""
    surfaces: dict[tuple[str, str, bool], Counter] = defaultdict(Counter)
    people: dict[tuple[str, str, bool], set] = defaultdict(set)

    def add(surface: str, kind: str, part: bool, person: str) -> None:
        entry = (fold_key(surface), kind, part)
        surfaces[entry][surface] += 1
        people[entry].add(person)

    for person in professionals.to_pylist():
        last, first = person["lastname"], person["firstname"]
        if last:
            whole, *parts = name_parts(last)
            add(whole, "lastname", False, person["id"])
            for part in parts:
                add(part, "lastname", True, person["id"])
        if first:
            whole, *parts = name_parts(first)
            add(whole, "firstname", False, person["id"])
            for part in parts:
                add(part, "firstname", True, person["id"])
        if first and last:
            add(f"{first} {last}", "fullname", False, person["id"])
            add(f"{last} {first}", "fullname", False, person["id"])
    rows = defaultdict(list)
    for entry in sorted(surfaces):
        key, kind, part = entry
        surface = max(sorted(surfaces[entry]), key=surfaces[entry].__getitem__)  # the most frequent writing
        rows["surface"].append(surface)
        rows["key"].append(key)
        rows["kind"].append(kind)
        rows["part"].append(part)
        rows["n"].append(len(people[entry]))
        rows["ambiguous"].append(ambiguity_reason(surface) if kind != "fullname" else None)
    return _table("names", rows)


def contact_table(directory: DirectoryTables) -> pa.Table:
    rows = defaultdict(list)
    for row in directory.contacts.result().to_pylist():
        value, kind = row["value"], row["kind"]
        rows["value"].append(value)
        rows["key"].append("".join(c for c in value if c.isdigit()) if kind in ("phone", "fax") else fold_key(value))
        rows["kind"].append(kind)
        rows["n"].append(row["n"])
    return _table("contacts", rows)


# -- the build ------------------------------------------------------------------------------------------


def resolve_sources(
    ban: Sequence[str],
    ban_departements: Sequence[str],
    health_directory: Sequence[str],
    out: Path,
    *,
    ca_bundle: str | None = None,
    offline: bool = False,
    refresh: bool = False,
    progress: bool = True,
) -> list[tuple[str, object]]:
    """Fetch (or check, for local files) every source; ``[(kind, FetchedSource), ...]`` in order."""
    from deid_ds.kb.download import ban_url, fetch

    wanted = [("ban", s, "gzip" if str(s).endswith(".gz") else None) for s in ban]
    wanted += [("ban", ban_url(code.strip()), "gzip") for code in ban_departements if code.strip()]
    wanted += [("annuaire", s, "text" if str(s).lower().endswith(".txt") else "zip") for s in health_directory]
    if not wanted:
        raise InputError("nothing to build: give --ban, --ban-departements and/or --health-directory")
    fetched = []
    for kind, source, expect in wanted:
        fetched.append(
            (
                kind,
                fetch(
                    source,
                    out / DOWNLOADS,
                    expect=expect,
                    ca_bundle=ca_bundle,
                    offline=offline,
                    refresh=refresh,
                    progress=progress,
                ),
            )
        )
    return fetched


def build_kb(
    out: str | Path = "kb",
    *,
    ban: Iterable[str] = (),
    ban_departements: Iterable[str] = (),
    health_directory: Iterable[str] = (),
    ca_bundle: str | None = None,
    offline: bool = False,
    refresh: bool = False,
    progress: bool = True,
    matcher: bool = True,
    inputs: Iterable[str | Path | None] = (),
    overwrite: bool = False,
    population: str | Path | None = None,
) -> BuildReport:
    """Build the gazetteers of ``out`` from the given sources (see the module docstring).

    ``out`` is written into, not replaced (it keeps the downloads), under the output policy of the
    other commands (:mod:`deid_ds.io.output_dir`): it must be new, empty, a knowledge base (one deid-ds
    wrote: the marker, or an earlier version's ``manifest.json``), or ``overwrite`` given; never ``/``,
    the home or current directory, a source or other input (``inputs``: what the command line read
    besides the sources, e.g. the ``--sources`` folder) or a directory holding one. A run holds its
    lock, so that a second build into it refuses at once, and removes the temporary directories a
    killed run left in it. ``matcher``: compile the matcher now, recorded in the manifest. ``population``: an
    INSEE population file (:mod:`deid_ds.kb.population`), read first (a bad one is refused before any work),
    recorded in the manifest as a source and joined to the communes table.

    An ``OSError`` while writing the knowledge base (a full disk) becomes one line
    (:class:`deid_ds.io.output_dir.OutputError`); what was there is left as it was.
    """
    from deid_ds.io.output_dir import OutputError, describe_os_error, output_lock, remove_stale_inside

    out = Path(out)
    ban, health_directory = list(ban), list(health_directory)
    inputs = [*inputs, ca_bundle, *ban, *health_directory, population]
    _check_out(out, inputs, overwrite)
    people = _read_population(population) if population is not None else None
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a file of that name, a read-only parent...
        raise OutputError(describe_os_error(out, error)) from None
    with output_lock(out):
        _check_out(out, inputs, overwrite)  # again, now that no other run can change it
        remove_stale_inside(out)
        return _build_kb(
            out,
            ban=ban,
            ban_departements=ban_departements,
            health_directory=health_directory,
            ca_bundle=ca_bundle,
            offline=offline,
            refresh=refresh,
            progress=progress,
            matcher=matcher,
            population=people,
        )


def _read_population(path: str | Path) -> tuple[dict[str, int], dict]:
    """The population file read (:func:`deid_ds.kb.population.read_population`) and its manifest entry."""
    from deid_ds.kb.population import read_population

    people = read_population(path)
    path = Path(path)
    entry = {
        "base": "population",
        "source": str(path),
        "path": str(path.resolve()),
        "size": path.stat().st_size,
        "sha256": sha256_of(path),
        "fetched_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "kind": "csv",
        "rows_read": people.rows_read,
        "rows_kept": people.rows_kept,
        "rejected": people.rejected,
        "examples": [],
        "joined_on": list(people.columns),  # the code and population columns read
    }
    return people.by_code, entry


def _check_out(out: Path, inputs: list, overwrite: bool) -> None:
    """:func:`deid_ds.io.output_dir.check_output_dir` for ``build-kb``, which also recognises a knowledge base
    of an earlier deid-ds (written without the marker) by its manifest, or a directory that holds only
    what a killed build left; the files build-kb downloaded
    into ``OUT/downloads`` may be given as sources (they are not replaced)."""
    from deid_ds.io.output_dir import check_output_dir, read_marker

    downloads = (out / DOWNLOADS).resolve()
    inputs = [i for i in inputs if i is None or "://" in str(i) or downloads not in Path(i).resolve().parents]
    earlier = out.is_dir() and not out.is_symlink() and read_marker(out) is None and _earlier_build(out)
    check_output_dir(out, COMMAND, inputs, overwrite or earlier)


def _earlier_build(out: Path) -> bool:
    """A knowledge base an earlier deid-ds wrote (its manifest), or only what a killed build left (temporaries)."""
    if is_knowledge_base(out):
        return True
    try:
        entries = list(out.iterdir())
    except OSError:
        return False
    return bool(entries) and all(entry.name.startswith(TMP_PREFIX) for entry in entries)


def _build_kb(
    out: Path,
    *,
    ban: Iterable[str],
    ban_departements: Iterable[str],
    health_directory: Iterable[str],
    ca_bundle: str | None,
    offline: bool,
    refresh: bool,
    progress: bool,
    matcher: bool,
    population: tuple[dict, dict] | None = None,
) -> BuildReport:
    from deid_ds.io.output_dir import read_marker, write_marker

    started = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if (read_marker(out) or {}).get("command") != COMMAND:  # new, an earlier version's, or --overwrite
        write_marker(out, COMMAND)  # from now on a knowledge base in the making: a rerun may write into it
    ban_tables, directory_tables = BanTables(), DirectoryTables()
    report = BuildReport(str(out))
    try:
        fetched = resolve_sources(
            list(ban),
            list(ban_departements),
            list(health_directory),
            out,
            ca_bundle=ca_bundle,
            offline=offline,
            refresh=refresh,
            progress=progress,
        )
        for kind, source in tqdm(fetched, desc="build-kb", unit="file", disable=not progress):
            stats: SourceStats
            if kind == "ban":
                _, stats = read_ban(source.path, ban_tables)
            else:
                _, stats = read_directory(source.path, directory_tables)
            report.sources.append(
                {"base": kind, **source.to_dict(), **{k: v for k, v in asdict(stats).items() if k != "path"}}
            )
    except OSError as error:  # a download onto a full disk, a source that cannot be read: one line
        raise _source_os_error(out, error) from None
    if population is not None:
        report.sources.append(population[1])

    professionals = professional_table(directory_tables)
    tables = {
        "streets": street_table(ban_tables, directory_tables),
        "places": place_table(ban_tables, directory_tables),
        "postcodes": postcode_table(ban_tables, directory_tables),
        "professionals": professionals,
        "names": name_table(professionals),
        "contacts": contact_table(directory_tables),
        "communes": commune_table(ban_tables, population[0] if population is not None else None),
    }
    _write(out, tables, report, matcher, started)
    return report


def _source_os_error(out: Path, error: OSError) -> Exception:
    """One line for an ``OSError`` while fetching or reading the sources: a write failure (a full disk under
    ``OUT/downloads``) is an output error, anything else (a source that cannot be read) an input error."""
    from deid_ds.io.output_dir import OutputError, describe_os_error

    if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
        return OutputError(describe_os_error(out, error))
    where = f"{error.filename}: " if error.filename else ""
    return InputError(f"{where}cannot read a source ({error.strerror or type(error).__name__})")


def _write(out: Path, tables: dict[str, pa.Table], report: BuildReport, matcher: bool, started: float) -> None:
    """Write the tables, the matcher and the manifest into ``out``: all built in a temporary directory first,
    then moved in, the manifest last.

    The previous manifest is removed before the first file is moved: a build stopped during the moves
    leaves no manifest, so that its mix of old and new files is refused as "not a built knowledge base"
    rather than used. An ``OSError`` (a full disk) becomes one line; when it happens before the moves
    (where all the volume is written) the previous knowledge base is left whole.
    """
    from deid_ds.io.output_dir import OutputError, describe_os_error

    tmp = None
    try:
        tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=out))
        for name, table in tables.items():
            path = tmp / f"{name}.parquet"
            pq.write_table(table, path, compression="zstd")
            report.tables[name] = {"rows": table.num_rows, "sha256": sha256_of(path)}
        files = [f"{name}.parquet" for name in tables]
        manifest = {
            "format": MANIFEST_FORMAT,
            "deid_ds_version": __version__,
            "built_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
            "seconds": 0.0,
            "sources": report.sources,
            "tables": report.tables,
            "methods": {
                "keys": (
                    "lower case, accents removed, apostrophes/hyphens/whitespace unified "
                    "(deid_ds.kb.normalize.fold_key)"
                ),
                "compound_names": "whole name and its parts; particles kept with the name they introduce",
                "ambiguity": LEXICON_DESCRIPTION + "; entries of at most two letters",
            },
        }
        if matcher:
            manifest["matcher"] = {"file": MATCHER_FILE, **compile_matcher(tmp, manifest)}
            files += [MATCHER_FILE, MATCHER_META]
        report.seconds = manifest["seconds"] = round(time.perf_counter() - started, 3)
        (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        (out / MANIFEST).unlink(missing_ok=True)
        for name in files:
            os.replace(tmp / name, out / name)
        os.replace(tmp / MANIFEST, out / MANIFEST)
    except OSError as error:
        raise OutputError(describe_os_error(out, error)) from None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


# -- reading a built knowledge base: deid_ds.kb.manifest (kept importable from here) -----------------------

__all__ = ["MANIFEST", "TABLES", "BuildReport", "build_kb", "read_manifest", "read_table", "verify_tables"]
