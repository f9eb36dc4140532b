"""The Spark engine: :class:`SparkEngine` runs any :class:`~deid_ds.engine.stage.Stage`; its plumbing:
session, paths, shipping files to executors, and :func:`run_batches`.

:func:`run_batches` is the heart of it, for a stage's batch function
``fn(notes: list[Note], duplicates: frozenset[int], others) -> {name: pyarrow.Table}`` (``duplicates``: the
positions of the notes whose ``id_document`` an earlier note of the input already had): the notes table
is read by Spark, cut into runs of consecutive rows of one file (at most ``batch_size`` notes, as the
local engine's batches never span two files), each run turned into notes exactly as the local reader
does (:func:`deid_ds.io.notes.notes_from_columns`) and given to ``fn`` in the executors
(``mapInArrow``). Each output row is keyed by its batch's file and first row and its position in the
batch's table, so that each output table is written — in ``WORK/NAME/part-*.parquet``, part files in
name order — in the order of the input notes, whatever the partitioning: the order the local engine
writes in. The driver then streams those Parquet files (:class:`DatasetParts`), never collecting a
table whole.

"Earlier" is the order of the input: files by path, rows in file order (Spark's ``_metadata.file_path``
and ``_metadata.row_index``, Spark ≥ 3.5).

Paths: local paths, or any URI Spark's Hadoop file system understands (``hdfs://``, ``s3a://``,
``file:``). The driver reads the outputs it assembles from a local copy, and publishes a finished
output directory with the Hadoop file system: written beside the target, then renamed onto it (atomic
on HDFS and on a local disk; object stores have no atomic rename: the copy is then last-write-wins).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq

from deid_ds.engine import require_pyspark
from deid_ds.engine.output import building, is_local
from deid_ds.engine.stage import Sink, Stage
from deid_ds.errors import InputError
from deid_ds.io.notes import NOTE_COLUMNS, REQUIRED_COLUMNS, column_hint, notes_from_columns

#: Columns the engine adds to the notes, and keys of every output row: the note's file and row; for
#: outputs, the batch's file and first row and the row's position in the batch's table.
FILE, ROW, POSITION, OUTPUT = "_file", "_row", "_i", "output"


# -------------------------------------------------------------------------------------------- session


def spark_session(master: str | None = None, config: Mapping[str, str] | None = None):
    """The Spark session to run on: the active one (``spark-submit``, a notebook), else a new one.

    ``master`` (``--spark-master``) wins; without it a session started by ``spark-submit`` keeps its
    configuration, and a plain ``python``/``deid-ds`` run gets ``local[*]``. With a local master the
    executors' Python is this interpreter (unless ``PYSPARK_PYTHON`` says otherwise).
    """
    require_pyspark()
    from pyspark.sql import SparkSession

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    active = SparkSession.getActiveSession()
    if active is not None and (master is None or active.sparkContext.master == master):
        return active
    if master is None and "PYSPARK_GATEWAY_PORT" not in os.environ:  # not under spark-submit
        master = "local[*]"
    builder = SparkSession.builder.appName("deid-ds")
    if master is not None:
        builder = builder.master(master)
        if master.startswith("local"):
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


# ---------------------------------------------------------------------------------------------- paths


def spark_path(path: str | Path) -> str:
    """``path`` as Spark reads and writes it: a URI as given, a local path as an absolute ``file:`` URI."""
    return str(path) if not is_local(path) else Path(path).absolute().as_uri()


def work_path(out: str | Path) -> str:
    """Where the engine writes its intermediate datasets: ``OUT.spark-partial`` beside ``OUT``."""
    return spark_path(out).rstrip("/") + ".spark-partial"


def file_name(uri: str) -> str:
    """The file name of a Spark ``_metadata.file_path`` (URL-decoded), as the local reader names files."""
    return PurePosixPath(unquote(urlparse(uri).path)).name


class HadoopFS:
    """The few Hadoop ``FileSystem`` calls the engine needs, through the session's JVM."""

    def __init__(self, spark, uri: str) -> None:
        jvm = spark.sparkContext._jvm
        self._path = jvm.org.apache.hadoop.fs.Path
        self.fs = self._path(uri).getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
        self.fs.setWriteChecksum(False)  # no .crc files beside the outputs on a local file system

    def exists(self, uri: str) -> bool:
        return bool(self.fs.exists(self._path(uri)))

    def delete(self, uri: str) -> None:
        self.fs.delete(self._path(uri), True)

    def rename(self, source: str, target: str) -> None:
        if not self.fs.rename(self._path(source), self._path(target)):
            raise OSError(f"could not rename {source} to {target}")

    def copy_to_local(self, uri: str, local: Path) -> None:
        self.fs.copyToLocalFile(False, self._path(uri), self._path(local.absolute().as_uri()), True)

    def copy_from_local(self, local: Path, uri: str) -> None:
        self.fs.copyFromLocalFile(False, True, self._path(local.absolute().as_uri()), self._path(uri))


def publish_remote(spark, local: Path, out: str) -> None:
    """Publish the finished local directory ``local`` onto the URI ``out`` with the Hadoop file system:
    copied beside it, then renamed onto it (the previous ``out`` moved aside first, then removed)."""
    fs = HadoopFS(spark, out)
    parent = out.rstrip("/").rsplit("/", 1)[0]
    tmp, old = f"{parent}/.deid-ds-tmp-{uuid.uuid4().hex}", None
    fs.copy_from_local(local, tmp)
    if fs.exists(out):
        old = f"{parent}/.deid-ds-tmp-old-{uuid.uuid4().hex}"
        fs.rename(out, old)
    fs.rename(tmp, out)
    if old is not None:
        fs.delete(old)


@contextmanager
def local_datasets(spark, datasets: Mapping[str, str]) -> Iterator[dict[str, Path]]:
    """Local directories holding the datasets ``{name: URI}``: themselves when on a local file system,
    else copies made for the block (streamed to the driver's disk, not its memory)."""
    if all(uri.startswith("file:") for uri in datasets.values()):
        yield {name: Path(unquote(urlparse(uri).path)) for name, uri in datasets.items()}
        return
    staging = Path(tempfile.mkdtemp(prefix="deid-ds-parts-"))
    try:
        local = {}
        for name, uri in datasets.items():
            local[name] = staging / name
            HadoopFS(spark, uri).copy_to_local(uri, local[name])
        yield local
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def remove(spark, uri: str) -> None:
    """Delete ``uri`` (a work directory) and everything under it, if it exists."""
    fs = HadoopFS(spark, uri)
    if fs.exists(uri):
        fs.delete(uri)


# ------------------------------------------------------------------------------ shipping to executors

_SHIPPED: dict[tuple[str, str], str] = {}  # (application id, local path and its state) -> name shipped as
#: The driver's staging directories of :func:`ship`: executors fetch from them for as long as the application
#: runs (a new executor may join late), so they go when the driver's process ends (:func:`_remove_staged`).
#: A model's staged copy holds its vocabulary, names included: nothing of it may stay in the temp directory.
_STAGED: list[Path] = []


def _remove_staged() -> None:
    """Remove what :func:`ship` staged (links or copies; the originals are never touched)."""
    while _STAGED:
        shutil.rmtree(_STAGED.pop(), ignore_errors=True)


def _state(path: Path) -> str:
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return "\n".join(f"{p}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files)


def _link_or_copy(source, target) -> None:
    """A hard link (no copy of a national knowledge base), else a copy (another file system)."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def ship(spark, path: str | Path) -> str:
    """Send a local file or directory (a knowledge base, Punkt parameters, a model) to every executor
    once (``SparkContext.addFile``); returns the name :func:`shipped` finds it under on an executor.

    The name is unique to the path and its files' sizes and modification times, so a file changed
    between two runs of one session is shipped again, never served stale.
    """
    path = Path(path).resolve()
    state = _state(path)
    key = (spark.sparkContext.applicationId, state)
    name = _SHIPPED.get(key)
    if name is None:
        name = f"deid-ds-{hashlib.sha256(state.encode()).hexdigest()[:16]}-{path.name}"
        staging = Path(tempfile.mkdtemp(prefix="deid-ds-ship-"))
        if not _STAGED:
            atexit.register(_remove_staged)
        _STAGED.append(staging)
        staged = staging / name  # addFile ships under the base name
        if path.is_dir():
            shutil.copytree(path, staged, copy_function=_link_or_copy)
        else:
            _link_or_copy(path, staged)
        spark.sparkContext.addFile(str(staged), recursive=path.is_dir())
        _SHIPPED[key] = name
    return name


def shipped(name: str | None) -> str | None:
    """On an executor: the local path of what :func:`ship` sent under ``name`` (``None`` stays ``None``)."""
    if name is None:
        return None
    from pyspark import SparkFiles

    return SparkFiles.get(name)


# ---------------------------------------------------------------------------------------------- notes


@dataclass(frozen=True)
class SparkNotes:
    """A notes table read by Spark: our column names (:data:`deid_ds.io.notes.NOTE_COLUMNS` present),
    plus each note's file and row (:data:`FILE`, :data:`ROW`), plus ``others``: columns handed to the
    batch function beside the notes (the input's other columns, or columns a command joined on)."""

    frame: object  # pyspark.sql.DataFrame
    columns: tuple[str, ...]
    others: tuple[str, ...] = ()


def read_notes(
    spark, path: str | Path, column_map: Mapping[str, str] | None = None, *, others: bool = False
) -> SparkNotes:
    """Open a notes table (a Parquet file or directory, local or on any Hadoop file system) with Spark;
    with ``others``, the input's columns that are not notes columns are kept too, under their names
    (as the local engine's ``deidentify`` keeps them)."""
    from pyspark.sql import functions as F

    column_map = dict(column_map or {})
    try:
        frame = spark.read.parquet(spark_path(path))
    except Exception as error:
        raise InputError(f"{path}: Spark cannot read it as Parquet ({type(error).__name__})") from None
    names = frame.columns
    for ours in REQUIRED_COLUMNS:
        if column_map.get(ours, ours) not in names:
            hint = column_hint(ours, column_map)
            raise InputError(
                f"{path}: required column {column_map.get(ours, ours)!r} not found "
                f"(columns: {', '.join(names)}); {hint}"
            )
    for ours, theirs in column_map.items():
        if theirs not in names:
            raise InputError(f"{path}: mapped column {theirs!r} (for {ours}) not found (columns: {', '.join(names)})")
    present = [ours for ours in NOTE_COLUMNS if column_map.get(ours, ours) in names]
    selected = [F.col(f"`{column_map.get(ours, ours)}`").alias(ours) for ours in present]
    used = {column_map.get(ours, ours) for ours in present}
    kept = tuple(name for name in names if name not in used) if others else ()
    selected += [F.col(f"`{name}`") for name in kept]
    selected += [F.col("_metadata.file_path").alias(FILE), F.col("_metadata.row_index").alias(ROW)]
    return SparkNotes(frame.select(*selected), tuple(present), kept)


def _identifiers(columns: tuple[str, ...], group: Callable[[str, str | None], str] | None) -> Callable:
    def identify(batches):
        schema = pa.schema(
            [(name, pa.string()) for name in ("id_document", "id_patient", "group", FILE)] + [(ROW, pa.int64())]
        )
        for batch in batches:
            data = batch.to_pydict()
            ids, patients, groups = [], [], []
            for file, row, run in _runs(data, columns, len(data[FILE])):
                for note in notes_from_columns(
                    {**run, "html": [None] * len(run["id_document"])}, PurePosixPath(file_name(file)), row
                ):
                    ids.append(note.id_document)
                    patients.append(note.id_patient)
                    groups.append(group(note.id_document, note.id_patient) if group is not None else None)
            values = {"id_document": ids, "id_patient": patients, "group": groups, FILE: data[FILE], ROW: data[ROW]}
            yield pa.RecordBatch.from_pydict(values, schema=schema)

    return identify


def identifiers(notes: SparkNotes, group: Callable[[str, str | None], str] | None = None):
    """Each note's ``id_document``, ``id_patient`` (as the local reader makes them), ``group`` (``group(id_document,
    id_patient)``, a stage's picklable function, e.g. the patient group of the split; null without it),
    file and row: a DataFrame, cached."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    wanted = [c for c in ("id_document", "id_patient") if c in notes.columns]
    schema = StructType(
        [StructField(n, StringType()) for n in ("id_document", "id_patient", "group", FILE)]
        + [StructField(ROW, LongType())]
    )
    return notes.frame.select(*wanted, FILE, ROW).mapInArrow(_identifiers(tuple(wanted), group), schema).cache()


def duplicate_positions(ids) -> frozenset[tuple[str, int]]:
    """``(file, row)`` of every note whose ``id_document`` an earlier note of the input already had."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rank = F.row_number().over(Window.partitionBy("id_document").orderBy(FILE, ROW))
    later = ids.withColumn("rank", rank).where(F.col("rank") > 1).select(FILE, ROW)
    return frozenset((row[FILE], row[ROW]) for row in later.toLocalIterator())


@dataclass(frozen=True)
class Input:
    """What a command knows of its notes before the batches run (:func:`open_input`)."""

    spark: object  # pyspark.sql.SparkSession
    notes: SparkNotes
    n_notes: int
    duplicates: frozenset[tuple[str, int]]  # (file, row) of the notes whose id an earlier note had
    groups: frozenset[str] | None  # the notes' groups, when asked for (the split needs the patient groups)

    @property
    def columns(self) -> tuple[str, ...]:
        """The input's columns that are not notes columns (read with ``others``)."""
        return self.notes.others

    @property
    def note_columns(self) -> tuple[str, ...]:
        """The notes columns the input has, under our names (:data:`deid_ds.io.notes.NOTE_COLUMNS`)."""
        return self.notes.columns

    def fields(self, names) -> list:
        """The Arrow fields of the input's columns ``names``, from their Spark types."""
        from pyspark.sql.pandas.types import to_arrow_type

        types = {f.name: f.dataType for f in self.notes.frame.schema.fields}
        return [pa.field(name, to_arrow_type(types[name])) for name in names]


def open_input(
    command: str,
    path: str | Path,
    column_map: Mapping[str, str] | None,
    master: str | None,
    log: Callable[[str], None],
    *,
    group: Callable[[str, str | None], str] | None = None,
    others: bool = False,
) -> Input:
    """The session, the notes (with their other columns when ``others``: :func:`read_notes`), and what
    the id columns say (a column projection, read once and cached): with ``group``, the set of
    ``group(id_document, id_patient)`` of the notes."""
    spark = spark_session(master)
    log(f"{command} on Spark {spark.version}, master {spark.sparkContext.master}")
    started = time.perf_counter()
    notes = read_notes(spark, path, column_map, others=others)
    ids = identifiers(notes, group)
    try:
        n_notes = ids.count()
        found = frozenset(row.group for row in ids.select("group").distinct().toLocalIterator()) if group else None
        read = Input(spark, notes, n_notes, duplicate_positions(ids), found)
    finally:
        ids.unpersist()
    log(f"{n_notes} notes, identifiers read in {time.perf_counter() - started:.1f} s")
    return read


# ------------------------------------------------------------------------------------------- batches


def _runs(
    data: Mapping[str, list], columns: tuple[str, ...], n: int, batch_size: int | None = None
) -> Iterator[tuple[str, int, dict]]:
    """Runs of consecutive rows of one file (at most ``batch_size``) of a column dict:
    ``(file, first row, columns)``."""
    files, rows = data[FILE], data[ROW]
    start = 0
    for i in range(1, n + 1):
        if i == n or files[i] != files[start] or rows[i] != rows[i - 1] + 1 or (batch_size and i - start >= batch_size):
            yield files[start], rows[start], {c: data[c][start:i] for c in columns}
            start = i


def _note_runs(batches, columns: tuple[str, ...], batch_size: int) -> Iterator[tuple[str, int, dict]]:
    """The runs of :func:`_runs` across Spark's Arrow batches: a run may go on in the next batch."""
    pending: dict | None = None
    for record_batch in batches:
        data = record_batch.to_pydict()
        if pending is not None:
            data = {c: pending[c] + data[c] for c in (*columns, FILE, ROW)}
        n = len(data[FILE])
        pending = None
        runs = list(_runs(data, columns, n, batch_size))
        if runs:
            file, row, last = runs.pop()  # may go on in the next Arrow batch
            pending = {**last, FILE: [file] * len(last[columns[0]]), ROW: list(range(row, row + len(last[columns[0]])))}
        yield from runs
    if pending is not None:
        yield from _runs(pending, columns, len(pending[FILE]), batch_size)


def spark_type(arrow_type):
    """The Spark SQL type of an Arrow type (strings, integers, booleans, doubles, dates, timestamps, lists and
    structs)."""
    from pyspark.sql import types as T

    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return T.StringType()
    simple = {
        pa.int32(): T.IntegerType(),
        pa.int64(): T.LongType(),
        pa.bool_(): T.BooleanType(),
        pa.float64(): T.DoubleType(),
    }
    if arrow_type in simple:
        return simple[arrow_type]
    if pa.types.is_list(arrow_type):
        return T.ArrayType(spark_type(arrow_type.value_type))
    if pa.types.is_struct(arrow_type):
        return T.StructType([T.StructField(f.name, spark_type(f.type)) for f in arrow_type])
    if pa.types.is_date(arrow_type) or pa.types.is_timestamp(arrow_type):  # a kept column of dates (deidentify)
        from pyspark.sql.pandas.types import from_arrow_type

        return from_arrow_type(arrow_type)
    raise TypeError(f"no Spark type for {arrow_type}")


def _row_schema(outputs: Mapping):
    keys = [(OUTPUT, pa.string()), (FILE, pa.string()), (ROW, pa.int64()), (POSITION, pa.int64())]
    return pa.schema(keys + [(name, pa.struct(list(schema))) for name, schema in outputs.items()])


def _apply(
    fn: Callable, outputs: Mapping, columns: tuple[str, ...], batch_size: int, duplicates, others: tuple[str, ...] = ()
) -> Callable:
    """The ``mapInArrow`` function: note runs → ``fn`` → one Arrow batch of keyed rows per output table.
    ``fn``'s third argument: the ``others`` columns of the run, as an Arrow table (no column without them)."""

    def apply(batches):
        schema = _row_schema(outputs)
        positions = duplicates.value
        for file, first_row, run in _note_runs(batches, (*columns, *others), batch_size):
            notes = notes_from_columns({c: run[c] for c in columns}, PurePosixPath(file_name(file)), first_row)
            repeated = frozenset(i for i in range(len(notes)) if (file, first_row + i) in positions)
            extra = pa.Table.from_pydict({c: run[c] for c in others})
            for name, table in fn(notes, repeated, extra).items():
                n = table.num_rows
                if not n:
                    continue
                values = table.select(outputs[name].names).cast(outputs[name]).combine_chunks()
                struct = pa.StructArray.from_arrays(
                    [values.column(k).chunk(0) for k in range(values.num_columns)], fields=list(outputs[name])
                )
                arrays = [
                    pa.array([name] * n),
                    pa.array([file] * n),
                    pa.array([first_row] * n, pa.int64()),
                    pa.array(range(n), pa.int64()),
                ]
                arrays += [struct if other == name else pa.nulls(n, schema.field(other).type) for other in outputs]
                yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    return apply


def _spread(frame, spark):
    """The notes in enough partitions to keep every core busy: Spark reads a file of up to 128 MB
    (tens of thousands of notes) as one partition, one task. When there are fewer partitions than
    twice the default parallelism, the notes are range-partitioned on (file, row) and sorted within
    partitions, so that each partition still holds runs of consecutive rows (order is restored at the
    end anyway: outputs are keyed by file and row)."""
    wanted = 2 * spark.sparkContext.defaultParallelism
    if frame.rdd.getNumPartitions() >= wanted:
        return frame
    return frame.repartitionByRange(wanted, FILE, ROW).sortWithinPartitions(FILE, ROW)


def run_batches(
    notes: SparkNotes,
    fn: Callable,
    outputs: Mapping,
    work: str,
    batch_size: int,
    duplicates: Collection[tuple[str, int]] = (),
    log: Callable[[str], None] | None = None,
) -> dict[str, str]:
    """Apply the batch function ``fn`` to every note with Spark; write each of its output tables
    (``outputs``: name → Arrow schema) as ``WORK/NAME/`` in input order (module docstring).

    ``fn(notes, duplicates, others)`` (``others``: the ``notes.others`` columns of the batch as an Arrow
    table, row for row) runs in the executors: it must be picklable (a module-level function or
    an instance of a module-level class; what it needs from files, :func:`ship` them first) and return
    a table per output name (a missing or empty one adds no row). ``duplicates`` are the ``(file, row)``
    of the notes to flag as repeated ids (:func:`duplicate_positions`). Returns ``{name: URI}``.
    """
    from pyspark.sql import functions as F

    spark = notes.frame.sparkSession
    remove(spark, work)  # what an earlier, failed run left
    outputs = dict(outputs)

    row_type = spark_type(pa.struct(list(_row_schema(outputs))))
    flagged = spark.sparkContext.broadcast(frozenset(duplicates))
    rows = f"{work}/batches"
    apply = _apply(fn, outputs, notes.columns, batch_size, flagged, notes.others)
    log = log or (lambda message: None)
    started = time.perf_counter()
    _spread(notes.frame, spark).mapInArrow(apply, row_type).write.mode("overwrite").partitionBy(OUTPUT).parquet(rows)
    log(f"batches run in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    written = spark.read.schema(row_type).parquet(rows)
    datasets = {}
    for name, schema in outputs.items():
        fields = [F.col(f"`{name}`.`{field}`").alias(field) for field in schema.names]
        ordered = written.where(F.col(OUTPUT) == name).select(FILE, ROW, POSITION, *fields).orderBy(FILE, ROW, POSITION)
        ordered.drop(FILE, ROW, POSITION).write.mode("overwrite").parquet(f"{work}/{name}")
        datasets[name] = f"{work}/{name}"
    flagged.unpersist()
    log(f"outputs written in input order in {time.perf_counter() - started:.1f} s")
    return datasets


@dataclass(frozen=True)
class DatasetParts:
    """Tables streamed from local copies of :func:`run_batches`' datasets, part file by part file and
    row group by row group, in input order, cast to the expected schemas: the assembly's source
    (:class:`deid_ds.weak_labelling.assemble.Parts`). ``sources`` maps a table name to its dataset
    directory and schema (two names may read different columns of one dataset, chunked alike)."""

    sources: Mapping[str, tuple[Path, object]]

    def tables(self, name: str) -> Iterator:
        directory, schema = self.sources[name]
        for file in sorted(Path(directory).glob("part-*.parquet")):
            parquet = pq.ParquetFile(file)
            for group in range(parquet.num_row_groups):
                yield parquet.read_row_group(group, columns=schema.names).cast(schema)


# -------------------------------------------------------------------------------------------- engine


class _OnExecutor:
    """A stage's batch function as shipped: its file paths are the names :func:`ship` sent them under,
    replaced on the executor by where Spark put them (once per Python worker)."""

    def __init__(self, batch: Callable, files: Callable) -> None:
        self.batch, self.files = batch, files
        self._local: Callable | None = None

    def __getstate__(self) -> dict:
        return {"batch": self.batch, "files": self.files}

    def __setstate__(self, state: dict) -> None:
        self.batch, self.files, self._local = state["batch"], state["files"], None

    def __call__(self, notes, duplicates, others):
        if self._local is None:
            self._local = self.files(self.batch, shipped)
        return self._local(notes, duplicates, others)


class SparkEngine:
    """Runs stages with Apache Spark (module docstring): any :class:`~deid_ds.engine.stage.Stage`."""

    name = "spark"
    distributed = True  # the batches run in executors: devices, threads and files are theirs
    resumable = False  # Spark retries failed tasks itself; a failed job is run again from the start
    in_process = False

    def __init__(self, master: str | None = None) -> None:
        self.master = master
        self.spark = None

    @property
    def parallelism(self) -> int:
        return self.spark.sparkContext.defaultParallelism

    def task_threads(self) -> int:
        """Threads a batch may use (torch): the cores of a task (``spark.task.cpus``)."""
        return int(self.spark.sparkContext.getConf().get("spark.task.cpus", "1"))

    def open(
        self,
        command: str,
        notes: str | Path,
        column_map: Mapping[str, str] | None,
        log: Callable[[str], None],
        *,
        group: Callable[[str, str | None], str] | None = None,
        batch_size: int | None = None,
    ) -> Input:
        """The session and the notes (:func:`open_input`, the input's other columns kept for
        :attr:`Stage.keep`); with ``group``, the set of ``group(id_document, id_patient)`` of the notes.
        ``batch_size`` is the local engine's business (the cluster sizes its own parallelism)."""
        read = open_input(command, notes, column_map, self.master, log, group=group, others=True)
        self.spark = read.spark
        return read

    def groups(self, notes: Input, group: Callable[[str, str | None], str]) -> frozenset[str]:
        """The groups :meth:`open` read (it must have been given ``group``)."""
        assert notes.groups is not None, "open the notes with group= on Spark"
        return notes.groups

    def output(
        self,
        out: str | Path,
        command: str,
        *,
        inputs: tuple = (),
        overwrite: bool = False,
        scratch: Path | None = None,
        locked: bool = False,
    ):
        """The stage's output directory (:func:`deid_ds.engine.output.building`), on any Hadoop file system."""
        return building(
            out,
            command,
            inputs=inputs,
            overwrite=overwrite,
            publish_remote=lambda local, uri: publish_remote(self.spark, local, uri),
            locked=locked,
        )

    def run(
        self,
        stage: Stage,
        notes: Input,
        sink: Sink,
        batch_size: int,
        *,
        out: str | Path,
        log: Callable[[str], None] | None = None,
        resume=None,
    ) -> int:
        """Run ``stage`` on every note (:func:`run_batches`, its files shipped first) and give its tables to
        ``sink``, output by output, each in input order; the work directory ``OUT.spark-partial`` is
        removed once they are all delivered. Returns the number of notes. No ``resume``: Spark retries
        failed tasks itself, and a failed job is run again from the start."""
        spark = notes.spark
        used = (*notes.notes.columns, *stage.keep)
        frame = notes.notes.frame.select(*(f"`{c}`" for c in used), FILE, ROW)
        source = SparkNotes(frame, notes.notes.columns, stage.keep)
        if stage.join is not None:
            source = stage.join.spark(source)
        batch = stage.files(stage.batch, lambda path: ship(spark, path) if path else None)
        work = work_path(out)
        datasets = run_batches(
            source, _OnExecutor(batch, stage.files), stage.outputs, work, batch_size, notes.duplicates, log
        )
        started = time.perf_counter()
        with local_datasets(spark, datasets) as local:
            parts = DatasetParts({name: (local[name], schema) for name, schema in stage.outputs.items()})
            for name in stage.outputs:
                for table in parts.tables(name):
                    sink.add(name, table)
        if log is not None:
            log(f"outputs assembled in {time.perf_counter() - started:.1f} s")
        remove(spark, work)
        return notes.n_notes
