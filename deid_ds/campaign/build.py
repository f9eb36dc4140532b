"""``deid-ds campaign``: choose, assign and write the correction campaign's Prodigy tasks.

Reads a weak-label-format directory (:mod:`~deid_ds.campaign.source`), draws ``per_type`` documents per
document type (:mod:`~deid_ds.campaign.sampling`), assigns them (:mod:`~deid_ds.campaign.assignment`),
builds and checks one task per sentence (:mod:`~deid_ds.campaign.tasks`) and writes, into ``OUT``
(replaced as a whole, atomically):

* ``tasks.jsonl``: every task once, ordered by document id then sentence index;
* ``tasks-NAME.jsonl``: the tasks of annotator NAME (primary and overlap documents), same order and the
  very same task objects, so a sentence is the same Prodigy input in every file;
* ``assignments.csv``: ``id_document``, ``doc_type``, ``annotator``, ``role`` (``primary``/``overlap``),
  ``n_sentences``;
* ``campaign.json``: the options and the counts (per document type and per annotator).

These are the Prodigy files (``tool="prodigy"``, the default). For the open tools, the two ``tasks``
files are replaced by a folder of import files, one per annotator, with the same sentences in the same
order and the weak labels as pre-annotations (:mod:`~deid_ds.campaign.label_studio`,
:mod:`~deid_ds.campaign.doccano`):

* ``tool="label-studio"``: ``label-studio/NAME.json``, ``label-studio/label_config.xml`` (the eight
  labels) and ``label-studio/README.md`` (how to import and export);
* ``tool="doccano"``: ``doccano/NAME.jsonl``, ``doccano/labels.json`` and ``doccano/README.md``.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from deid_ds.campaign import doccano, label_studio
from deid_ds.campaign.assignment import OVERLAP, PRIMARY, annotators_of, assign_documents, parse_annotators
from deid_ds.campaign.choices import RANDOM, TOOLS
from deid_ds.campaign.continuation import continued_entities
from deid_ds.campaign.sampling import NO_TYPE, sample_documents
from deid_ds.campaign.selection import document_priorities, weak_spans
from deid_ds.campaign.source import read_pool, read_sentences
from deid_ds.campaign.tasks import TaskError, build_task, validate_task
from deid_ds.errors import InputError
from deid_ds.io.output_dir import check_output_dir, output_directory
from deid_ds.report import format_table

CAMPAIGN_FORMAT = "deid-ds-campaign/1"


@dataclass
class CampaignReport:
    """What ``campaign.json`` holds: the options and the counts (never text or identifiers)."""

    format: str = CAMPAIGN_FORMAT
    options: dict = field(default_factory=dict)
    documents: int = 0
    tasks: int = 0
    overlap_documents: int = 0
    sentences_missing: int = 0  # sentences of chosen documents absent from the input (see source.py)
    documents_other_split: int = 0
    documents_without_sentence: int = 0
    per_doc_type: dict[str, dict[str, int]] = field(default_factory=dict)  # available, chosen, overlap, tasks
    short_doc_types: dict[str, int] = field(default_factory=dict)  # type -> available, when < per_type
    per_annotator: dict[str, dict[str, int]] = field(default_factory=dict)  # primary, overlap, documents, tasks
    per_annotator_doc_type: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def parse_splits(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``test``, ``dev,test`` or ``all`` (every document, also those of an input without splits)."""
    if value is None:
        return None
    names = [v.strip() for v in (value.split(",") if isinstance(value, str) else value) if v.strip()]
    if not names:
        raise InputError("--split: expected split names such as test or dev,test, or all")
    if "all" in names:
        return None
    return tuple(names)


def prepare_campaign(
    weak_dir: str | Path,
    out: str | Path,
    annotators: str | Sequence[str],
    per_type: int | None = None,
    overlap: float = 0.2,
    splits: str | Sequence[str] | None = ("test",),
    seed: int = 0,
    log: Callable[[str], None] | None = None,
    overwrite: bool = False,
    tool: str = "prodigy",
    select: str = RANDOM,
    predictions: str | Path | None = None,
) -> CampaignReport:
    """Prepare the campaign of ``weak_dir`` into ``out``; see the module docstring for the files.

    ``per_type=None`` takes every document of the chosen splits. A type with fewer documents than
    ``per_type`` is taken whole and listed in ``short_doc_types`` (and logged, counts only). ``out`` is
    replaced only if deid-ds campaign wrote it, or with ``overwrite`` (:mod:`deid_ds.io.output_dir`).
    ``tool``: ``prodigy``, ``label-studio`` or ``doccano``, the format of the task files. ``select``:
    ``random``, or ``disagreement``/``uncertainty`` from the model's ``predictions`` (a ``deid-ds predict``
    output): the documents to correct first (:mod:`~deid_ds.campaign.selection`).
    """
    try:
        if tool not in TOOLS:
            raise ValueError(f"--tool {tool}: expected one of {', '.join(TOOLS)}")
        names = parse_annotators(annotators)
        if not 0.0 <= overlap <= 1.0:
            raise ValueError("--overlap must be a share between 0 and 1")
        if per_type is not None and per_type < 1:
            raise ValueError("--per-type must be at least 1")
    except ValueError as error:
        raise InputError(str(error)) from None
    wanted = parse_splits(splits)
    inputs = (weak_dir,) if predictions is None else (weak_dir, predictions)
    check_output_dir(out, "campaign", inputs, overwrite)
    pool = read_pool(weak_dir, wanted)
    if not pool.doc_types:
        where = "any split" if wanted is None else f"split {','.join(wanted)}"
        raise InputError(f"{weak_dir}: no document with sentences in {where}")
    priority = document_priorities(select, weak_dir, predictions, pool.doc_types.keys())
    sample = sample_documents(pool.doc_types, per_type, seed, priority=priority)
    chosen = sample.documents
    assignments = assign_documents(chosen, names, overlap=overlap, seed=seed)
    who = annotators_of(assignments)
    sentences = read_sentences(weak_dir, set(chosen))
    entities = weak_spans(weak_dir, set(chosen))  # empty without spans.parquet: no entity is known to continue

    tasks: dict[str, list[dict]] = {}
    for document in sorted(chosen):
        primary, others = who[document]
        built = []
        continues = continued_entities(sentences.get(document, []), entities.get(document, []))
        for sentence in sentences.get(document, []):
            task = build_task(sentence, primary, others, continues.get(sentence["meta"].get("sentence_index")))
            try:
                validate_task(task)
            except TaskError as error:
                index = task["meta"].get("sentence_index")
                raise InputError(f"{weak_dir}: document {document}, sentence {index}: {error}") from None
            built.append(task)
        tasks[document] = built

    report = CampaignReport(
        options={
            "input": str(weak_dir),
            "annotators": names,
            "per_type": per_type,
            "overlap": overlap,
            "splits": list(wanted) if wanted else "all",
            "seed": seed,
            "tool": tool,
            "select": select,
            "predictions": None if predictions is None else str(predictions),
        },
        documents=len(chosen),
        tasks=sum(len(t) for t in tasks.values()),
        overlap_documents=sum(1 for _, others in who.values() if others),
        sentences_missing=sum(max(0, pool.n_sentences_total.get(d, 0) - len(tasks[d])) for d in chosen),
        documents_other_split=pool.documents_other_split,
        documents_without_sentence=pool.documents_without_sentence,
        short_doc_types=sample.short_types,
    )
    for doc_type, documents in sample.chosen.items():
        report.per_doc_type[doc_type] = {
            "available": sample.available[doc_type],
            "chosen": len(documents),
            "overlap": sum(1 for d in documents if who[d][1]),
            "tasks": sum(len(tasks[d]) for d in documents),
        }
    for name in names:
        mine = [a for a in assignments if a.annotator == name]
        report.per_annotator[name] = {
            "primary": sum(1 for a in mine if a.role == PRIMARY),
            "overlap": sum(1 for a in mine if a.role == OVERLAP),
            "documents": len(mine),
            "tasks": sum(len(tasks[a.id_document]) for a in mine),
        }
        report.per_annotator_doc_type[name] = dict(sorted(Counter(a.doc_type for a in mine).items()))

    with output_directory(out, "campaign", inputs=inputs, overwrite=overwrite) as tmp:
        per_annotator = {
            name: [
                task
                for document in sorted({a.id_document for a in assignments if a.annotator == name})
                for task in tasks[document]
            ]
            for name in names
        }
        if tool == label_studio.FOLDER:
            label_studio.write_files(tmp / label_studio.FOLDER, names, per_annotator)
        elif tool == doccano.FOLDER:
            doccano.write_files(tmp / doccano.FOLDER, names, per_annotator)
        else:
            _write_jsonl(tmp / "tasks.jsonl", (task for document in sorted(tasks) for task in tasks[document]))
            for name in names:
                _write_jsonl(tmp / f"tasks-{name}.jsonl", per_annotator[name])
        with (tmp / "assignments.csv").open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id_document", "doc_type", "annotator", "role", "n_sentences"])
            for a in assignments:
                writer.writerow(
                    [
                        a.id_document,
                        a.doc_type if a.doc_type else NO_TYPE,
                        a.annotator,
                        a.role,
                        len(tasks[a.id_document]),
                    ]
                )
        (tmp / "campaign.json").write_text(
            json.dumps(report.to_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )

    if log is not None:
        if report.short_doc_types:
            short = ", ".join(f"{doc_type} {n}" for doc_type, n in report.short_doc_types.items())
            log(
                f"{len(report.short_doc_types)} document type(s) with fewer documents than --per-type {per_type}, "
                f"all taken: {short}"
            )
        if report.sentences_missing:
            log(
                f"{report.sentences_missing} sentence(s) of the chosen documents are not in the input "
                "(weak-label keeps the sentences without entity of train and dev only for a --keep-empty share, "
                "of test for --keep-empty-test, 1 by default: a campaign needs them all)"
            )
    return report


def _write_jsonl(path: Path, tasks) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for task in tasks:
            handle.write(json.dumps(task, ensure_ascii=False) + "\n")


def campaign_table(report: CampaignReport) -> str:
    """The printed summary: documents per type, then per annotator (counts only)."""
    types = format_table(
        ["doc_type", "available", "chosen", "overlap", "sentences"],
        [[t or NO_TYPE, c["available"], c["chosen"], c["overlap"], c["tasks"]] for t, c in report.per_doc_type.items()]
        + [
            [
                "total",
                sum(c["available"] for c in report.per_doc_type.values()),
                report.documents,
                report.overlap_documents,
                report.tasks,
            ]
        ],
    )
    people = format_table(
        ["annotator", "primary", "overlap", "documents", "sentences"],
        [[name, c["primary"], c["overlap"], c["documents"], c["tasks"]] for name, c in report.per_annotator.items()],
    )
    return f"{types}\n\n{people}"
