"""Reading the notes table (docs/input.md) in batches, never whole into memory.

Accepted inputs:

* a Parquet file, or a directory of Parquet files (read as one dataset, files in name order);
* an HTML or text file, or a directory of ``*.html``/``*.htm``/``*.txt`` files — one note per file, its
  id the file name without extension — for trying the tools on a handful of documents.

Warehouse exports rarely use our column names, so a column map renames them on the fly
(``{"id_document": "ID_ENTREPOT", "html": "TEXTE"}``). Only ``id_document`` and ``html`` are required;
``id_patient``, ``doc_type`` and the patient metadata are used where present.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath

import pyarrow as pa
import pyarrow.parquet as pq

from deid_ds.errors import InputError
from deid_ds.io.metadata import read_metadata
from deid_ds.model import PATIENT_FIELDS, InvalidText, Note

REQUIRED_COLUMNS: tuple[str, ...] = ("id_document", "html")
OPTIONAL_COLUMNS: tuple[str, ...] = ("id_patient", "doc_type", *PATIENT_FIELDS)
NOTE_COLUMNS: tuple[str, ...] = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
TEXT_SUFFIXES = (".html", ".htm", ".txt")
from deid_ds.defaults import DEFAULT_BATCH_SIZE  # noqa: E402 - re-exported

_PARQUET_MAGIC = b"PAR1"


def parse_column_map(items: Iterable[str]) -> dict[str, str]:
    """``["id_document=ID_ENTREPOT", ...]`` → ``{"id_document": "ID_ENTREPOT", ...}`` (validated)."""
    mapping: dict[str, str] = {}
    for item in items:
        ours, sep, theirs = item.partition("=")
        ours, theirs = ours.strip(), theirs.strip()
        if not sep or not ours or not theirs:
            raise InputError(f"column mapping {item!r} is not of the form OUR_NAME=SOURCE_NAME")
        if ours not in NOTE_COLUMNS:
            raise InputError(
                f"column mapping {item!r}: {ours!r} is not a notes column (one of {', '.join(NOTE_COLUMNS)})"
            )
        mapping[ours] = theirs
    return mapping


@dataclass(frozen=True)
class NotesSource:
    """An opened notes input: where it is, how many notes, which columns it provides."""

    path: Path
    kind: str  # "parquet" or "files"
    num_notes: int
    columns: dict[str, str]  # our column name -> source column name (present ones only)
    files: tuple[Path, ...]
    file_rows: tuple[int, ...] = ()  # notes per Parquet file, read from the footers when the input is opened

    def iter_batches(self, batch_size: int = DEFAULT_BATCH_SIZE) -> Iterator[list[Note]]:
        """Notes in input order, ``batch_size`` at a time."""
        if self.kind == "files":
            yield from _file_batches(self.files, batch_size)
        else:
            yield from _parquet_batches(self, batch_size)

    def batch_lengths(self, batch_size: int = DEFAULT_BATCH_SIZE) -> list[int]:
        """How many notes each batch of :meth:`iter_batches` holds, from the metadata alone.

        Batches never span two Parquet files (each file is read on its own) and are full otherwise,
        so resumable stages know the number of batches and what a skipped batch held without reading.
        """
        if self.kind == "files":
            counts = [self.num_notes]
        else:
            counts = list(self.file_rows) or [pq.read_metadata(file).num_rows for file in self.files]
        lengths: list[int] = []
        for count in counts:
            full, rest = divmod(count, batch_size)
            lengths += [batch_size] * full + ([rest] if rest else [])
        return lengths

    def iter_identifiers(self, batch_size: int = 65536) -> Iterator[tuple[str, str | None]]:
        """``(id_document, id_patient)`` of every note in input order, reading only those columns.

        Stages that must know the whole set of patients before the heavy work (the patient-level
        split) read this first: a column projection, a small fraction of reading the notes.
        """
        if self.kind == "files":
            for note in self.iter_notes():
                yield note.id_document, note.id_patient
            return

        wanted = [self.columns[name] for name in ("id_document", "id_patient") if name in self.columns]
        for file in self.files:
            row = 0
            for record_batch in pq.ParquetFile(file).iter_batches(
                batch_size=batch_size, columns=list(dict.fromkeys(wanted))
            ):
                data = batch_values(record_batch)
                documents = data[self.columns["id_document"]]
                patients = data[self.columns["id_patient"]] if "id_patient" in self.columns else [None] * len(documents)
                for i, (document, patient) in enumerate(zip(documents, patients)):
                    yield _document_id(document, file, row + i), as_identifier(patient)
                row += record_batch.num_rows

    def iter_notes(self, batch_size: int = DEFAULT_BATCH_SIZE) -> Iterator[Note]:
        for batch in self.iter_batches(batch_size):
            yield from batch


def open_notes(path: str | Path, column_map: Mapping[str, str] | None = None) -> NotesSource:
    """Open a notes input and check its columns, without reading the notes."""
    path = Path(path)
    column_map = dict(column_map or {})
    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    if path.is_dir():
        parquet_files = sorted(p for p in path.rglob("*.parquet") if p.is_file())
        text_files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
        if parquet_files:
            return _open_parquet(path, tuple(parquet_files), column_map)
        if text_files:
            return NotesSource(
                path,
                "files",
                len(text_files),
                {"id_document": "<file name>", "html": "<file content>"},
                tuple(text_files),
            )
        raise InputError(f"{path}: directory holds no *.parquet and no {'/'.join('*' + s for s in TEXT_SUFFIXES)} file")
    if path.suffix.lower() in TEXT_SUFFIXES:
        return NotesSource(path, "files", 1, {"id_document": "<file name>", "html": "<file content>"}, (path,))
    return _open_parquet(path, (path,), column_map)


def _open_parquet(root: Path, files: tuple[Path, ...], column_map: dict[str, str]) -> NotesSource:
    rows: list[int] = []
    schema_names: list[str] | None = None
    for file in files:
        with file.open("rb") as handle:
            head = handle.read(4)
            handle.seek(-4 if file.stat().st_size >= 8 else 0, 2)
            tail = handle.read(4)
        if head != _PARQUET_MAGIC or tail != _PARQUET_MAGIC:
            raise InputError(f"{file}: not a Parquet file (missing PAR1 magic bytes; truncated or another format)")
        try:
            metadata = pq.read_metadata(file)
        except Exception as error:
            raise InputError(f"{file}: unreadable Parquet footer ({type(error).__name__})") from None
        names = metadata.schema.to_arrow_schema().names
        if schema_names is None:
            schema_names = names
        rows.append(metadata.num_rows)
        _check_columns(file, names, column_map)
    assert schema_names is not None
    columns = {}
    for ours in NOTE_COLUMNS:
        theirs = column_map.get(ours, ours)
        if theirs in schema_names:
            columns[ours] = theirs
    return NotesSource(root, "parquet", sum(rows), columns, files, tuple(rows))


def column_hint(ours: str, column_map: Mapping[str, str]) -> str:
    """How to map a missing column, said for both callers: the CLI's ``--column`` and the Python API's
    ``column_map=`` (the library cannot tell which one called it)."""
    if ours in column_map:
        return "check the column mapping (--column, or column_map= in Python)"
    return f'map it with --column {ours}=SOURCE_COLUMN (in Python: column_map={{"{ours}": "SOURCE_COLUMN"}})'


def _check_columns(file: Path, names: list[str], column_map: Mapping[str, str]) -> None:
    for ours in REQUIRED_COLUMNS:
        theirs = column_map.get(ours, ours)
        if theirs not in names:
            hint = column_hint(ours, column_map)
            raise InputError(f"{file}: required column {theirs!r} not found (columns: {', '.join(names)}); {hint}")
    for ours, theirs in column_map.items():
        if theirs not in names and ours not in REQUIRED_COLUMNS:
            raise InputError(f"{file}: mapped column {theirs!r} (for {ours}) not found (columns: {', '.join(names)})")


def _parquet_batches(source: NotesSource, batch_size: int) -> Iterator[list[Note]]:
    wanted = list(dict.fromkeys(source.columns.values()))
    for file in source.files:
        parquet = pq.ParquetFile(file)
        row = 0
        for record_batch in parquet.iter_batches(batch_size=batch_size, columns=wanted):
            data = batch_values(record_batch, source.columns.get("html"))
            yield notes_from_columns({ours: data[theirs] for ours, theirs in source.columns.items()}, file, row)
            row += record_batch.num_rows


def batch_values(record_batch: pa.RecordBatch, html: str | None = None) -> dict[str, list]:
    """The batch's columns as Python lists; a text value that is not valid UTF-8 does not stop the run.

    Parquet promises UTF-8 in a string column, but a damaged export can break the promise, and pyarrow
    then raises for the whole batch. Such a column is read again as bytes and decoded value by value:
    in the ``html`` column (its name in the file) an invalid value becomes :class:`InvalidText` (that
    note is failed with the reason), in any other column its invalid bytes are written ``\\xNN``
    (``backslashreplace``: two different ids stay different).
    """
    data = {}
    for name, column in zip(record_batch.schema.names, record_batch.columns):
        try:
            data[name] = column.to_pylist()
        except UnicodeDecodeError:
            data[name] = _decoded(column.cast(pa.binary()).to_pylist(), name, name == html)
    return data


def _decoded(values: list[bytes | None], name: str, html: bool) -> list:
    decoded: list = []
    for value in values:
        if value is None:
            decoded.append(None)
            continue
        try:
            decoded.append(value.decode("utf-8"))
        except UnicodeDecodeError:
            decoded.append(InvalidText("html") if html else value.decode("utf-8", "backslashreplace"))
    return decoded


def notes_from_columns(get: Mapping[str, list], file: PurePath, first_row: int) -> list[Note]:
    """Notes from columns under our names (``{"id_document": [...], "html": [...], ...}``) of the rows
    ``first_row``, ``first_row + 1``... of ``file``: how every engine turns rows into notes
    (identifiers as strings, a missing id named after the file and row)."""
    return [_note_from_row(get, i, file, first_row + i) for i in range(len(get["id_document"]))]


def _document_id(value: object, file: PurePath, row: int) -> str:
    """The note's id as a string; a missing one becomes ``FILE#rowN``, accounted for rather than dropped."""
    id_document = as_identifier(value)
    return id_document if id_document is not None else f"{file.name}#row{row}"


def _note_from_row(get: Mapping[str, list], i: int, file: PurePath, row: int) -> Note:
    id_missing = as_identifier(get["id_document"][i]) is None
    id_document = _document_id(get["id_document"][i], file, row)
    html = get["html"][i]
    patient = read_metadata({name: _as_text(get[name][i]) for name in PATIENT_FIELDS if name in get})
    return Note(
        id_document=id_document,
        id_patient=as_identifier(get["id_patient"][i]) if "id_patient" in get else None,
        html=html,  # may be None, bytes or InvalidText: the processing stage reports it
        doc_type=_as_text(get["doc_type"][i]) if "doc_type" in get else None,
        patient=patient,
        id_missing=id_missing,
    )


def as_identifier(value: object) -> str | None:
    """Identifiers as strings: ``141303567.0`` (a float column) → ``"141303567"``."""
    if value is None:
        return None
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer():
            return str(int(value))
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _as_text(value: object) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    text = str(value).strip()
    return text or None


def _file_batches(files: tuple[Path, ...], batch_size: int) -> Iterator[list[Note]]:
    batch: list[Note] = []
    for file in files:
        batch.append(Note(id_document=file.stem, id_patient=None, html=file.read_bytes()))  # type: ignore[arg-type]
        if len(batch) >= batch_size:
            yield batch
            batch = []
    if batch:
        yield batch
