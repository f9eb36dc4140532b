"""One input batch → its tables: the batch function every engine runs, and the local engine's job.

:func:`label_notes` is the per-batch work, pure (notes in, Arrow tables out): the local engine runs it
in :func:`label_batch` and writes a part directory, the Spark engine (:mod:`deid_ds.engine`) in its
executors. :func:`label_batch` is what the process pool runs: it must stay a module-level function
(workers are started with ``spawn`` and import it by name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from deid_ds.engine.parallel import relaxed_gc
from deid_ds.io.files import atomic_directory
from deid_ds.label.labeller import WeakLabeller
from deid_ds.model import DocumentStatus, Note
from deid_ds.segmentation.limits import NoteTimer, size_error, timeout_error
from deid_ds.segmentation.notes import segmenter_for
from deid_ds.segmentation.segmenter import Segmenter
from deid_ds.weak_labelling.columns import BatchColumns
from deid_ds.weak_labelling.note import LabelledNote, label_note, labeller_for
from deid_ds.weak_labelling.options import WeakLabelOptions
from deid_ds.weak_labelling.resume import part_name


@dataclass(frozen=True)
class BatchJob:
    """One input batch to label into ``work/batch-NNNNNN`` (picklable: sent to worker processes)."""

    index: int
    notes: list[Note]
    options: WeakLabelOptions
    work: str
    gold_ids: frozenset[str] | None = None
    duplicates: frozenset[int] = frozenset()  # positions in ``notes`` whose id an earlier note already had
    splits: tuple[str, ...] = ()  # the split of each note (decided before labelling, from the patient ids)


#: Why a note whose ``id_document`` an earlier note of the input already had is not labelled: outputs
#: are keyed by document id (the split, the gold), so a second note under the same id would be mixed
#: with the first — possibly another patient's, across train and test.
DUPLICATE_REASON = "duplicate id_document (an earlier note of the input has the same id)"


def label_notes(
    notes: Sequence[Note],
    options: WeakLabelOptions,
    splits: Sequence[str],
    duplicates: frozenset[int] = frozenset(),
    gold_ids: frozenset[str] | None = None,
) -> dict:
    """The per-batch work of every engine: label ``notes`` into the part's Arrow tables by name
    (:meth:`BatchColumns.tables`). Pure: no file is written, nothing outside the batch is read.

    ``splits`` is each note's split (decided before labelling, from the patient ids); ``duplicates``
    the positions of notes whose id an earlier note of the input already had (failed, not labelled).
    """
    segmenter = segmenter_for(options.segment)
    labeller = labeller_for(options.label)
    use_metadata = options.label.use_metadata
    columns = BatchColumns(gold_ids, options.sentences_jsonl)
    with relaxed_gc(), NoteTimer(options.limits.timeout) as timer:
        for position, note in enumerate(notes):
            if position in duplicates:
                labelled = LabelledNote(DocumentStatus(note.id_document, note.id_patient, "failed", DUPLICATE_REASON))
            else:
                labelled = label_within_limits(note, segmenter, labeller, use_metadata, options.limits.max_bytes, timer)
            columns.add(note, labelled, options.share_for(splits[position]))
    return columns.tables()


def label_within_limits(
    note: Note,
    segmenter: Segmenter,
    labeller: WeakLabeller,
    use_metadata: bool,
    max_bytes: int | None,
    timer: NoteTimer,
) -> LabelledNote:
    """:func:`label_note`, or a failed note with its reason when the note is over a limit: larger than
    ``max_bytes`` (refused before it is parsed), or still being parsed, segmented or labelled after
    the ``timer``'s seconds (interrupted: see :class:`deid_ds.segmentation.limits.NoteTimer`).

    Only the note's own work is timed and may be interrupted; the batch's columns are added to after,
    so an interrupted note leaves nothing of itself in the batch.
    """
    reason = size_error(note.html, max_bytes)
    if reason is None:
        labelled = timer.run(lambda: label_note(note, segmenter, labeller, use_metadata))
        if labelled is not None:
            return labelled
        reason = timeout_error(timer.seconds)
    return LabelledNote(DocumentStatus(note.id_document, note.id_patient, "failed", reason))


#: Suffix of a part's table files: Arrow IPC files, LZ4-compressed. A part is read once, whole, by the
#: assembly: IPC writes and reads several times faster than Parquet (no encoding, no dictionary
#: attempts on the rendered lines), and LZ4 keeps the work directory about as small.
PART_SUFFIX = ".arrow"


def write_part_table(table, path: Path) -> None:
    """Write one table of a batch part (read back by :func:`read_part_table`)."""
    import pyarrow as pa

    with (
        pa.OSFile(str(path), "wb") as sink,
        pa.ipc.new_file(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as writer,
    ):
        writer.write_table(table)


def read_part_table(path: Path):
    """A table of a batch part, as :func:`write_part_table` wrote it."""
    import pyarrow as pa

    with pa.OSFile(str(path), "rb") as source:
        return pa.ipc.open_file(source).read_all()


def label_batch(job: BatchJob) -> int:
    """Label one batch and write its part atomically; returns the number of notes (for progress)."""
    tables = label_notes(job.notes, job.options, job.splits, job.duplicates, job.gold_ids)
    with atomic_directory(Path(job.work) / part_name(job.index)) as tmp:
        for name, table in tables.items():
            write_part_table(table, tmp / f"{name}{PART_SUFFIX}")
    return len(job.notes)
