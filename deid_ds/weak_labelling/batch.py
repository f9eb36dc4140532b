"""One input batch → its tables: ``weak-label``'s stage (:func:`weak_label_stage`), as every engine runs it.

:func:`label_notes` is the per-batch work, pure (notes in, Arrow tables out); :class:`LabelBatch` is the
stage's batch function around it, which the engines (:mod:`deid_ds.engine`) run in worker processes or
Spark executors: it must stay picklable (a module-level class).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pyarrow as pa

from deid_ds.engine.parallel import relaxed_gc
from deid_ds.label.labeller import WeakLabeller
from deid_ds.model import DocumentStatus, Note
from deid_ds.segmentation.limits import NoteTimer, size_error, timeout_error
from deid_ds.segmentation.notes import segmenter_for
from deid_ds.segmentation.segmenter import Segmenter
from deid_ds.weak_labelling.columns import BatchColumns
from deid_ds.weak_labelling.note import LabelledNote, label_note, labeller_for
from deid_ds.weak_labelling.options import WeakLabelOptions
from deid_ds.weak_labelling.schemas import documents_schema, gold_tokens_schema, sentences_schema, spans_schema
from deid_ds.weak_labelling.split import patient_group

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
    columns = BatchColumns(gold_ids, options.sentences_jsonl, options.features)
    with relaxed_gc(), NoteTimer(options.limits.timeout) as timer:
        for position, note in enumerate(notes):
            if position in duplicates:
                labelled = LabelledNote(DocumentStatus(note.id_document, note.id_patient, "failed", DUPLICATE_REASON))
            else:
                labelled = label_within_limits(
                    note, segmenter, labeller, use_metadata, options.limits.max_bytes, timer, options.features
                )
            columns.add(note, labelled, options.share_for(splits[position]))
    return columns.tables()


def label_within_limits(
    note: Note,
    segmenter: Segmenter,
    labeller: WeakLabeller,
    use_metadata: bool,
    max_bytes: int | None,
    timer: NoteTimer,
    features: bool = False,
) -> LabelledNote:
    """:func:`label_note`, or a failed note with its reason when the note is over a limit: larger than
    ``max_bytes`` (refused before it is parsed), or still being parsed, segmented or labelled after
    the ``timer``'s seconds (interrupted: see :class:`deid_ds.segmentation.limits.NoteTimer`).

    Only the note's own work is timed and may be interrupted; the batch's columns are added to after,
    so an interrupted note leaves nothing of itself in the batch.
    """
    reason = size_error(note.html, max_bytes)
    if reason is None:
        labelled = timer.run(lambda: label_note(note, segmenter, labeller, use_metadata, features))
        if labelled is not None:
            return labelled
        reason = timeout_error(timer.seconds)
    return LabelledNote(DocumentStatus(note.id_document, note.id_patient, "failed", reason))


def lines_schema():
    """The rendered columns of a sentence (:func:`deid_ds.weak_labelling.render.render_lines`), which travel
    as columns of the ``sentences`` table (row for row)."""
    return pa.schema([("jsonl", pa.string()), ("flair", pa.string())])


@dataclass(frozen=True)
class LabelBatch:
    """The stage's batch function: :func:`label_notes` with each note's split (from the patient split,
    decided before labelling); a batch's ``lines`` travel as columns of its ``sentences``."""

    options: WeakLabelOptions
    group_split: Mapping[str, str]  # the split of each patient group
    gold_ids: frozenset[str] | None = None

    def __call__(self, notes, duplicates: frozenset[int], others=None) -> dict:
        group_split = self.group_split
        splits = [group_split[patient_group(note.id_document, note.id_patient)] for note in notes]
        tables = label_notes(notes, self.options, splits, duplicates, self.gold_ids)
        lines = tables.pop("lines")
        for name in lines.column_names:
            tables["sentences"] = tables["sentences"].append_column(name, lines.column(name))
        return tables


def label_files(batch: LabelBatch, where) -> LabelBatch:
    """``batch`` with the knowledge base and Punkt paths replaced by ``where(path)`` (shipped on Spark)."""
    options = batch.options
    return replace(
        batch,
        options=replace(
            options,
            segment=replace(options.segment, punkt_path=where(options.segment.punkt_path)),
            label=replace(options.label, kb_dir=where(options.label.kb_dir)),
        ),
    )


def weak_label_stage(options: WeakLabelOptions, group_split: Mapping[str, str], gold_ids: frozenset[str] | None):
    """``weak-label`` as the engines run it (:class:`deid_ds.engine.stage.Stage`): the documents first
    (they give each document's split to the assembly), then the sentences, spans and gold tokens."""
    from deid_ds.engine.stage import Stage

    outputs = {
        "documents": documents_schema(with_split=False),
        "sentences": pa.schema(list(sentences_schema(with_split=False)) + list(lines_schema())),
        "spans": spans_schema(),
    }
    if gold_ids is not None:
        outputs["gold_tokens"] = gold_tokens_schema()
    return Stage("weak-label", LabelBatch(options, group_split, gold_ids), outputs, label_files)
