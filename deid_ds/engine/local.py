"""The local engine: any :class:`~deid_ds.engine.stage.Stage` on this machine's cores.

The notes are read in batches with pyarrow (:mod:`deid_ds.io.notes`: a batch never spans two files),
each batch's duplicates found in input order, its :attr:`~deid_ds.engine.stage.Stage.keep` columns read
with it and its :attr:`~deid_ds.engine.stage.Stage.join` columns computed here; the batch function runs
in ``workers`` processes (:func:`deid_ds.engine.parallel.ordered_map`; in this process with one
worker), which receive it once each, when they start. The tables come back in input order and go to
the stage's sink batch by batch, while the next batches run.

With a :class:`~deid_ds.engine.stage.Resume` (``weak-label``), each worker writes its batch's tables
as a part directory in the work directory (Arrow IPC files, written atomically) and the sink reads
them back from there, the finished batches of an earlier run included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from deid_ds.defaults import available_cores
from deid_ds.engine.output import building
from deid_ds.engine.parallel import ordered_map
from deid_ds.engine.stage import Resume, Sink, Stage, duplicate_positions
from deid_ds.errors import InputError
from deid_ds.io.files import atomic_directory
from deid_ds.io.notes import NotesSource, notes_from_columns, open_notes

#: Suffix of a part's table files: Arrow IPC files, LZ4-compressed. A part is read once, whole, by the
#: sink: IPC writes and reads several times faster than Parquet (no encoding, no dictionary attempts on
#: rendered lines), and LZ4 keeps the work directory about as small.
PART_SUFFIX = ".arrow"


def part_name(index: int) -> str:
    """Directory of batch ``index`` in a resumable run's work directory."""
    return f"batch-{index:06d}"


def write_part_table(table, path: Path) -> None:
    """Write one table of a batch part (read back by :func:`read_part_table`)."""
    with (
        pa.OSFile(str(path), "wb") as sink,
        pa.ipc.new_file(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as writer,
    ):
        writer.write_table(table)


def read_part_table(path: Path):
    """A table of a batch part, as :func:`write_part_table` wrote it."""
    with pa.OSFile(str(path), "rb") as source:
        return pa.ipc.open_file(source).read_all()


# ------------------------------------------------------------------------------------------- workers

_INSTALLED: list = []  # in a worker process: the stage's batch function, sent once when it starts


def _install(batch) -> None:
    """Worker initializer: keep the batch function for every job of this process."""
    _INSTALLED[:] = [batch]


@dataclass(frozen=True)
class Job:
    """One batch for a worker (picklable). ``batch`` is ``None`` in a worker process (installed there)."""

    notes: list
    duplicates: frozenset[int]
    others: object  # pyarrow.Table
    batch: Callable | None = None
    part: str | None = None  # resumable runs: the part directory to write the tables to


def run_job(job: Job):
    """Run one batch: ``(number of notes, its tables)``; with a part directory, the tables are written
    there (atomically) and not sent back (``None``)."""
    batch = job.batch if job.batch is not None else _INSTALLED[0]
    tables = batch(job.notes, job.duplicates, job.others)
    if job.part is None:
        return len(job.notes), dict(tables)
    with atomic_directory(Path(job.part)) as tmp:
        for name, table in tables.items():
            write_part_table(table, tmp / f"{name}{PART_SUFFIX}")
    return len(job.notes), None


# --------------------------------------------------------------------------------------------- input


@dataclass(frozen=True)
class LocalInput:
    """The notes as the local engine opened them (:meth:`LocalEngine.open`)."""

    source: NotesSource
    n_notes: int
    columns: tuple[str, ...]  # the input's columns (of its first file; none for a directory of note files)

    @property
    def note_columns(self) -> tuple[str, ...]:
        """The notes columns the input has, under our names (:data:`deid_ds.io.notes.NOTE_COLUMNS`)."""
        return tuple(self.source.columns)

    def fields(self, names) -> list:
        """The Arrow fields of the input's columns ``names`` (of its first file), as they are."""
        if self.source.kind == "files":
            return []

        types = {f.name: f for f in pq.read_schema(self.source.files[0])}
        return [types[name] for name in names]


def _batches_with_columns(source: NotesSource, batch_size: int, keep: tuple[str, ...]) -> Iterator[tuple[list, object]]:
    """Notes with the batch's columns of ``keep`` (an Arrow table, ``None`` without them), each column read once."""
    if not keep or source.kind == "files":
        for notes in source.iter_batches(batch_size):
            yield notes, None
        return

    wanted = list(dict.fromkeys([*source.columns.values(), *keep]))
    for file in source.files:
        row = 0
        parquet = pq.ParquetFile(file)
        missing = [name for name in keep if name not in parquet.schema_arrow.names]
        if missing:
            raise InputError(f"{file}: --keep-column {missing[0]}: no such column in this file")
        for record_batch in parquet.iter_batches(batch_size=batch_size, columns=wanted):
            data = {name: record_batch.column(name).to_pylist() for name in dict.fromkeys(source.columns.values())}
            notes = notes_from_columns({name: data[theirs] for name, theirs in source.columns.items()}, file, row)
            row += record_batch.num_rows
            yield notes, pa.Table.from_batches([record_batch]).select(list(keep))


def _others(extras, joined: Mapping[str, list] | None):
    """The batch function's ``others``: the kept columns, then the joined ones."""
    joined = {name: pa.array(values) for name, values in (joined or {}).items()}
    if extras is None:
        return pa.table(joined)
    for name, values in joined.items():
        extras = extras.append_column(name, values)
    return extras


# -------------------------------------------------------------------------------------------- engine


class LocalEngine:
    """Runs stages in ``workers`` processes of this machine (module docstring)."""

    name = "local"
    distributed = False  # the batches run here: what this process checks holds in the workers
    resumable = True  # a run stopped half-way can go on (:class:`~deid_ds.engine.stage.Resume`)

    def __init__(self, workers: int = 1, progress: bool = True) -> None:
        self.workers = workers
        self.progress = progress

    @property
    def parallelism(self) -> int:
        return self.workers

    @property
    def in_process(self) -> bool:
        """Whether the batches run in this very process (one worker): what it loads, they use."""
        return self.workers <= 1

    def task_threads(self) -> int:
        """Threads a batch may use at most (torch): this process's cores shared among the workers."""
        return max(1, available_cores() // self.workers)

    def open(
        self,
        command: str,
        notes: str | Path,
        column_map: Mapping[str, str] | None,
        log: Callable[[str], None],
        *,
        group: Callable[[str, str | None], str] | None = None,
        batch_size: int | None = None,
    ) -> LocalInput:
        """Open the notes (columns checked, nothing read yet; the groups are read by :meth:`groups`).

        With ``batch_size``, the engine keeps no more workers than the notes make batches: a worker
        process costs seconds to start (it imports the stage's libraries again), more than a small
        input's whole batch, and one batch runs in this process.
        """
        source = open_notes(notes, column_map)
        if batch_size is not None:
            self.workers = max(1, min(self.workers, len(source.batch_lengths(batch_size))))
        columns = () if source.kind == "files" else tuple(pq.read_schema(source.files[0]).names)
        return LocalInput(source, source.num_notes, columns)

    def groups(self, notes: LocalInput, group: Callable[[str, str | None], str]) -> frozenset[str]:
        """The set of ``group(id_document, id_patient)`` of every note (read from the id columns alone)."""
        return frozenset(group(d, p) for d, p in notes.source.iter_identifiers())

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
        """The stage's output directory (:func:`deid_ds.engine.output.building`)."""
        return building(out, command, inputs=inputs, overwrite=overwrite, scratch=scratch, locked=locked)

    def run(
        self,
        stage: Stage,
        notes: LocalInput,
        sink: Sink,
        batch_size: int,
        *,
        out: str | Path | None = None,
        log: Callable[[str], None] | None = None,
        resume: Resume | None = None,
    ) -> int:
        """Run ``stage`` on every note and give its tables to ``sink`` in input order (module docstring);
        returns the number of notes the batch function ran on (not counting resumed batches). ``out``
        and ``log`` are the Spark engine's business."""
        source = notes.source
        join = stage.join.local(source) if stage.join is not None else None
        done = resume.done if resume is not None else frozenset()
        in_workers = self.workers > 1

        def jobs() -> Iterator[Job]:
            seen: set[str] = set()
            for index, (batch, extras) in enumerate(_batches_with_columns(source, batch_size, stage.keep)):
                duplicates = duplicate_positions(batch, seen)  # every batch read, resumed ones too
                if index in done:
                    continue
                part = str(resume.work / part_name(index)) if resume is not None else None
                others = _others(extras, join(batch) if join is not None else None)
                yield Job(batch, duplicates, others, None if in_workers else stage.batch, part)

        results = (
            ordered_map(run_job, jobs(), self.workers, initializer=_install, initargs=(stage.batch,))
            if in_workers
            else (run_job(job) for job in jobs())
        )
        already = sum(resume.lengths[i] for i in done) if resume is not None else 0
        ran = 0
        with (
            tqdm(
                total=notes.n_notes, initial=already, unit="note", desc=stage.command, disable=not self.progress
            ) as bar,
            closing(results),
        ):
            if resume is None:
                for n, tables in results:
                    for name in stage.outputs:
                        sink.add(name, tables[name])
                    ran += n
                    bar.update(n)
            else:
                for index in range(len(resume.lengths)):
                    if index not in done:
                        n, _ = next(results)
                        ran += n
                        bar.update(n)
                    part = resume.work / part_name(index)
                    for name in stage.outputs:
                        sink.add(name, read_part_table(part / f"{name}{PART_SUFFIX}"))
        return ran
