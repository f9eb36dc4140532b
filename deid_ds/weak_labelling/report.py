"""The report of a ``weak-label`` run: what ``report.json`` holds and the tables the command prints."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from deid_ds.model import LABELS, PATIENT_FIELDS, DocumentTotals
from deid_ds.weak_labelling.split import DEFAULT_SPLIT, SPLITS


@dataclass
class WeakLabelReport(DocumentTotals):
    """Totals of a ``weak-label`` run (what ``report.json`` holds and the command prints).

    ``written``: documents with at least one kept sentence; ``splits``: per split, the patients,
    documents and sentences written and the entities of its documents.
    """

    written: int = 0
    documents_without_patient: int = 0
    sentences_kept: int = 0
    sentences_kept_without_entity: int = 0
    entities: int = 0
    entities_per_label: dict[str, int] = field(default_factory=dict)
    entities_per_source: dict[str, int] = field(default_factory=dict)
    entities_per_function: dict[str, int] = field(default_factory=dict)  # from the sources (label.functions)
    entities_per_label_and_split: dict[str, dict[str, int]] = field(default_factory=dict)
    splits: dict[str, dict[str, int]] = field(default_factory=dict)
    split_shares: list[float] = field(default_factory=lambda: list(DEFAULT_SPLIT))
    seed: int = 0
    #: False for a ``--no-metadata`` run, or when the notes have none of the metadata columns: the labeller
    #: worked without the patients' metadata (what the figures measure).
    use_metadata: bool = True
    metadata_columns: list[str] = field(default_factory=list)  # the metadata columns read (PATIENT_FIELDS order)
    metadata_columns_missing: list[str] = field(default_factory=list)  # not in the notes (empty with --no-metadata)
    #: The knowledge base's coverage of the notes' postcodes (:class:`deid_ds.kb.coverage.KbCoverage`); None without.
    kb_coverage: dict | None = None
    batches: int = 0
    batches_resumed: int = 0
    notes_per_second: float = 0.0
    gold: dict | None = None
    #: The knowledge features of the Flair files' middle column (names, KB fingerprint, metadata); None without.
    knowledge_features: dict | None = None
    gold_table: str | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        """What ``report.json`` holds (the gold table is printed; its figures are under ``gold``)."""
        data = asdict(self)
        data.pop("gold_table")
        return data


def _label_order(labels: Iterable[str]) -> list[str]:
    return sorted(labels, key=lambda label: (LABELS.index(label) if label in LABELS else len(LABELS), label))


def report_table(report: WeakLabelReport, per_function: bool = False) -> str:
    """The tables printed at the end of ``deid-ds weak-label`` (entity counts: the paper's Table 5).

    ``per_function`` (``--verbose``) adds the spans kept per labelling function, every function listed.
    """
    from deid_ds.report import format_table

    rows: list[list[object]] = [
        ["documents read", report.documents],
        ["  written (kept sentences)", report.written],
        ["  ok", report.ok],
        ["  empty (no text)", report.empty],
        ["  failed", report.failed],
        ["  without id_patient", report.documents_without_patient],
        ["metadata columns used", f"{len(report.metadata_columns)} of {len(PATIENT_FIELDS)}"],
        ["sentences", report.sentences],
        ["  kept", report.sentences_kept],
        ["  kept without entity", report.sentences_kept_without_entity],
        ["entities", report.entities],
        ["batches (resumed)", f"{report.batches} ({report.batches_resumed})"],
        ["seconds", report.seconds],
        ["notes/s", report.notes_per_second],
    ]
    rows += [[f"failure: {reason}", n] for reason, n in sorted(report.failures.items())]
    tables = [format_table(["weak-label", "count"], rows)]
    split_rows = [
        [name, *(report.splits.get(name, {}).get(k, 0) for k in ("patients", "documents", "sentences", "entities"))]
        for name in SPLITS
    ]
    tables.append(format_table(["split", "patients", "documents", "sentences", "entities"], split_rows))
    per_split = report.entities_per_label_and_split
    label_rows = [
        [label, *(per_split.get(label, {}).get(s, 0) for s in SPLITS), report.entities_per_label[label]]
        for label in _label_order(report.entities_per_label)
    ]
    tables.append(format_table(["label", *SPLITS, "total"], label_rows))
    source_rows = [
        [source, n] for source, n in sorted(report.entities_per_source.items(), key=lambda item: (-item[1], item[0]))
    ]
    tables.append(format_table(["source", "entities"], source_rows))
    if per_function:
        function_rows = [[name, n] for name, n in report.entities_per_function.items()]
        tables.append(format_table(["labelling function", "entities"], function_rows))
    return "\n\n".join(tables)
