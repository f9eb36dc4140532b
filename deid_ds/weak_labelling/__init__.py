"""Weak labelling of a notes table into training sets — ``deid-ds weak-label``.

Each note is parsed (:func:`~deid_ds.segmentation.html_text.html_to_text`), segmented, and labelled by the
:class:`~deid_ds.label.labeller.WeakLabeller`; its entities get both offset pairs and its tokens BIO tags.

Output directory (the finished directory appears atomically: a failed run leaves the previous output,
or none):

* ``spans.parquet``: one row per entity (:func:`spans_schema`, shared with ``predict``);
* ``sentences.parquet`` and, on request (``sentences_jsonl``: ten times larger), ``sentences.jsonl``: one
  row / line per kept sentence — ``text``, ``tokens`` (offsets in the sentence and in the HTML),
  ``tokens_parser`` (the tokens' HTML offsets, as the paper calls them), ``tags`` (BIO), ``spans``
  (Prodigy-style), ``meta`` and ``split``: each JSONL line is a self-contained Prodigy task;
* ``train.txt``, ``dev.txt``, ``test.txt``: Flair column format (``token TAG``, blank line after each
  sentence; with ``features``, the command's default, ``token FEATURES TAG``: each token's knowledge
  features, :mod:`deid_ds.label.features`);
* ``documents.parquet``: one row per input note — every note is accounted for (``ok``, ``empty``,
  ``failed`` with its reason) with its counts and split;
* ``report.json``: the totals of the printed tables (and the ``--gold`` scores).

**Kept sentences.** A sentence with an entity is always kept; one without is kept for a share of
them — ``keep_empty`` in train and dev, ``keep_empty_test`` in test (all of them by default: the
correction campaign's annotators must see every sentence of the test documents) — chosen by a hash of
the document id and sentence index, so that the choice is the same whatever the batching, the worker
count or the engine, and a smaller share keeps a subset of what a larger one keeps. The split is
decided before labelling (from the patient ids), so each worker keeps exactly its notes' split's share.

**Split.** By patient: every document of a patient lands in the same split. Patients (a note without
``id_patient`` is a group of its own, ``document:<id>``) are ranked by a hash keyed by ``seed`` and cut by
cumulative share, so the split depends only on the set of patient ids, the shares and the seed — not
on batching, workers or the order of the input — and a distributed engine can reproduce it (hash, sort,
rank).

**Resume.** The work happens in ``OUT.partial/`` next to ``OUT``: a ``state.json`` with a fingerprint of
the inputs (files, sizes, SHA-256 of their content), the column map, the options, the knowledge base
manifest and the labelling code, and one directory per finished input batch, each written atomically.
A restart with the same fingerprint skips the finished batches (batches are fixed slices of the input,
see :meth:`~deid_ds.io.notes.NotesSource.batch_lengths`); another fingerprint starts over. The output
files are built in the work directory from the batch parts, in input order, as the batches finish
(finished ones are read again on a restart); once the last is in, ``OUT`` is replaced in one move and
the work directory removed.

Modules, one job each: :mod:`.schemas` (Arrow schemas), :mod:`.split` (kept sentences and split, pure),
:mod:`.note` (one note: label, check, BIO), :mod:`.columns` (one batch's tables), :mod:`.render` (JSONL
and Flair text), :mod:`.batch` (the stage, as the engines run it), :mod:`.resume` (work directory, fingerprint),
:mod:`.assemble` (final directory), :mod:`.gold` (gold spans and scores), :mod:`.report` (report and
tables), :mod:`.pipeline` (:func:`weak_label`). Every public name is importable from here.
"""

from __future__ import annotations

from deid_ds.lazy_api import lazy_getattr

#: public name -> the module that defines it, imported on first use (PEP 562): importing the package, as
#: `deid-ds COMMAND --help` and the engines' workers do, stays cheap.
_API: dict[str, str] = {
    "LabelBatch": "deid_ds.weak_labelling.batch",
    "label_notes": "deid_ds.weak_labelling.batch",
    "weak_label_stage": "deid_ds.weak_labelling.batch",
    "BatchColumns": "deid_ds.weak_labelling.columns",
    "read_gold": "deid_ds.weak_labelling.gold",
    "LabelledNote": "deid_ds.weak_labelling.note",
    "bio_tags": "deid_ds.weak_labelling.note",
    "label_note": "deid_ds.weak_labelling.note",
    "labeller_for": "deid_ds.weak_labelling.note",
    "token_ranges": "deid_ds.weak_labelling.note",
    "WeakLabelOptions": "deid_ds.weak_labelling.options",
    "weak_label": "deid_ds.weak_labelling.pipeline",
    "flair_token": "deid_ds.weak_labelling.render",
    "jsonl_line": "deid_ds.weak_labelling.render",
    "render_lines": "deid_ds.weak_labelling.render",
    "WeakLabelReport": "deid_ds.weak_labelling.report",
    "report_table": "deid_ds.weak_labelling.report",
    "STATE_FILE": "deid_ds.weak_labelling.resume",
    "STATE_FORMAT": "deid_ds.weak_labelling.resume",
    "WORK_SUFFIX": "deid_ds.weak_labelling.resume",
    "part_name": "deid_ds.weak_labelling.resume",
    "prepare_work": "deid_ds.weak_labelling.resume",
    "run_fingerprint": "deid_ds.weak_labelling.resume",
    "work_directory": "deid_ds.weak_labelling.resume",
    "documents_schema": "deid_ds.weak_labelling.schemas",
    "sentences_schema": "deid_ds.weak_labelling.schemas",
    "spans_schema": "deid_ds.weak_labelling.schemas",
    "DEFAULT_SPLIT": "deid_ds.weak_labelling.split",
    "NO_PATIENT_PREFIX": "deid_ds.weak_labelling.split",
    "SPLITS": "deid_ds.weak_labelling.split",
    "assign_splits": "deid_ds.weak_labelling.split",
    "keeps_empty_sentence": "deid_ds.weak_labelling.split",
    "parse_split": "deid_ds.weak_labelling.split",
    "patient_group": "deid_ds.weak_labelling.split",
    "unit_hash": "deid_ds.weak_labelling.split",
}

__all__ = [
    "DEFAULT_SPLIT",
    "NO_PATIENT_PREFIX",
    "SPLITS",
    "STATE_FILE",
    "STATE_FORMAT",
    "WORK_SUFFIX",
    "BatchColumns",
    "LabelBatch",
    "LabelledNote",
    "WeakLabelOptions",
    "WeakLabelReport",
    "assign_splits",
    "bio_tags",
    "documents_schema",
    "flair_token",
    "jsonl_line",
    "keeps_empty_sentence",
    "label_note",
    "label_notes",
    "labeller_for",
    "parse_split",
    "part_name",
    "patient_group",
    "prepare_work",
    "read_gold",
    "render_lines",
    "report_table",
    "run_fingerprint",
    "sentences_schema",
    "spans_schema",
    "token_ranges",
    "unit_hash",
    "weak_label",
    "weak_label_stage",
    "work_directory",
]


__getattr__ = lazy_getattr(__name__, _API)
