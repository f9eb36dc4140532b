"""What a stage tells the engines: :class:`Stage`, described once, run by :mod:`.local` or :mod:`.spark`.

A stage (``weak-label``, ``predict``, ``deidentify``, ``segment``) is a *batch function* — notes in,
named Arrow tables out, pure — plus what the engines must know to run it anywhere:

* the tables it returns and their schemas (:attr:`Stage.outputs`), in the order its :class:`Sink`
  takes them;
* the local files it reads (a knowledge base, a model, Punkt parameters), which the Spark engine ships
  to its executors (:attr:`Stage.files`);
* the input columns it wants beside the notes, as they are (:attr:`Stage.keep`), and the columns it
  joins on each note (:attr:`Stage.join`: ``deidentify``'s spans).

The engines know nothing of the stages (no import of a stage package): a stage builds its
description and hands it to the engine its caller chose (:func:`deid_ds.engine.engine_for`), with a
:class:`Sink` that writes the output directory. Each engine gives the sink every table of every
batch, each output in input order: the local engine batch by batch (all the outputs of a batch, in
:attr:`Stage.outputs` order), the Spark engine output by output (every batch's table of the first
output, then of the second...). A sink must therefore keep one writer per output and not rely on the
interleaving, only on the order within each output.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

#: ``fn(notes, duplicates, others) -> {output name: pyarrow.Table}``: ``notes`` a batch of
#: :class:`~deid_ds.model.Note` (consecutive rows of one input file), ``duplicates`` the positions of
#: the notes whose ``id_document`` an earlier note of the input had, ``others`` a ``pyarrow.Table``
#: of the batch's :attr:`Stage.keep` and :attr:`Stage.join` columns, row for row (no column when the
#: stage asks for none). It must be picklable (a module-level function or an instance of a
#: module-level class): the local engine sends it to each worker process once, the Spark engine to
#: each executor.
BatchFunction = Callable[..., Mapping[str, object]]


class Sink(Protocol):
    """Where an engine delivers a stage's tables (see the module docstring for the order)."""

    def add(self, name: str, table) -> None: ...


class Join(Protocol):
    """Columns a stage adds to each note beside the input's, computed outside the batch function
    (``deidentify``: each note's spans, and the entities of its patient's notes).

    :meth:`local` is called once by the local engine with the opened notes
    (:class:`~deid_ds.io.notes.NotesSource`) and returns a function giving, for a batch of notes, each
    column as a list (row for row); :meth:`spark` is called once by the Spark engine with the notes
    table (:class:`~deid_ds.engine.spark.SparkNotes`) and returns it with the columns added (rows of
    one file may come out of order: the engine puts them back in order).
    """

    columns: tuple[str, ...]

    def local(self, source) -> Callable[[list], Mapping[str, list]]: ...

    def spark(self, notes): ...


def no_files(batch: BatchFunction, where: Callable[[str | None], str | None]) -> BatchFunction:
    """The :attr:`Stage.files` of a stage that reads no file: the batch function as it is."""
    return batch


@dataclass(frozen=True)
class Stage:
    """A stage as every engine runs it (module docstring)."""

    command: str  # the command's name, for logs and the output marker ("weak-label")
    batch: BatchFunction
    outputs: Mapping[str, object]  # output name -> pyarrow.Schema of its tables, in the order the sink takes them
    #: ``files(batch, where)``: ``batch`` with each local file or directory path it reads replaced by
    #: ``where(path)`` (``None`` stays ``None``). The Spark engine calls it on the driver with a function
    #: that ships the path and gives the name it was shipped under, and on each executor with the
    #: function that finds a shipped name there. Picklable (a module-level function).
    files: Callable[[BatchFunction, Callable[[str | None], str | None]], BatchFunction] = no_files
    keep: tuple[str, ...] = ()  # input columns handed to the batch function as they are (deidentify's --keep-column)
    join: Join | None = None


@dataclass(frozen=True)
class Resume:
    """A local run that keeps each finished batch's tables in ``work`` (one directory per batch,
    written atomically), so that a run stopped half-way goes on where it stopped: the batches in
    ``done`` are not run again but read back. ``lengths``: the number of notes of every batch
    (:meth:`~deid_ds.io.notes.NotesSource.batch_lengths`). The stage decides what may be resumed
    (``weak-label``: a fingerprint of the inputs, options and code)."""

    work: Path
    done: frozenset[int]
    lengths: tuple[int, ...]


def duplicate_positions(notes, seen: set[str]) -> frozenset[int]:
    """Positions in ``notes`` of the notes whose ``id_document`` is in ``seen``, or an earlier note's of
    ``notes``; ``seen`` is updated with the ids of ``notes``. Every stage fails those notes: their outputs
    are keyed by document id."""
    duplicates = set()
    for position, note in enumerate(notes):
        if note.id_document in seen:
            duplicates.add(position)
        seen.add(note.id_document)
    return frozenset(duplicates)
