"""``evaluate()``: read gold and systems' spans, choose documents, tokens and types, score, write.

Scoring itself is :func:`deid_ds.evaluation.scoring.compare_systems` (definitions in
:mod:`deid_ds.evaluation.scoring`); this module decides *what* is scored:

* **documents**: the gold's documents — every ``id_document`` of the gold table. Predictions on other
  documents are ignored (a model run on a whole warehouse is evaluated on the gold's notes only), and
  a gold document missing from a system's predictions counts as "nothing predicted" there. A document
  the annotators found no entity in has no gold row (``deid-ds gold`` writes none), so it is not
  evaluated: say so when reporting precision.
* **tokens** for the label-blind redaction recall: with ``notes``, the gold's notes are segmented as
  the labeller and the model segment them (:func:`deid_ds.segmentation.notes.segment_note`), and each
  token's HTML offsets are used; without, redaction is measured on the HTML characters of the gold
  spans (what :func:`~deid_ds.evaluation.scoring.score_spans` does without tokens).
* **document types**: from the notes' ``doc_type`` with ``notes``, else from a ``doc_type`` column of
  the gold (``deid-ds gold`` writes one), else no per-type breakdown.

Inputs are ``spans.parquet`` files (``weak-label``, ``predict``), directories holding one, gold tables
(Parquet or JSONL), anything with ``id_document``, ``label``, ``html_start``, ``html_end``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from deid_ds.errors import InputError
from deid_ds.io.files import atomic_write_text
from deid_ds.io.notes import as_identifier

SPAN_COLUMNS = ("id_document", "label", "html_start", "html_end")
#: File names looked for, in order, when a directory is given instead of a spans file.
DIRECTORY_FILES = ("spans.parquet", "gold.parquet", "spans.jsonl", "gold.jsonl")
DOCUMENTS_RULE = (
    "the gold's documents (every id_document of the gold table); predictions on other documents are ignored"
)


def _spans_file(path: Path, what: str) -> Path:
    if path.is_dir():
        for name in DIRECTORY_FILES:
            if (path / name).is_file():
                return path / name
        raise InputError(f"{path}: directory holds no {' or '.join(DIRECTORY_FILES)} ({what})")
    if not path.is_file():
        raise InputError(f"{path}: no such file or directory ({what})")
    return path


def read_spans(path: str | Path, what: str = "spans"):
    """A spans table (Parquet, JSONL, or a directory holding ``spans.parquet``) as a pandas frame.

    Ids become strings the way the notes reader makes them; offsets int64. Only the columns are
    checked here; :mod:`deid_ds.evaluation.scoring` validates the values.
    """
    file = _spans_file(Path(path), what)
    try:
        if file.suffix.lower() in (".jsonl", ".json"):
            frame = pd.read_json(file, lines=True, dtype={"id_document": str})
        else:
            frame = pd.read_parquet(file)
    except Exception as error:
        raise InputError(
            f"{file}: not a readable spans table (Parquet or JSONL; {type(error).__name__}) ({what})"
        ) from None
    missing = [c for c in SPAN_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(
            f"{file}: {what} column(s) {', '.join(missing)} not found (columns: {', '.join(map(str, frame.columns))})"
        )
    frame = frame.copy()
    frame["id_document"] = [as_identifier(v) for v in frame["id_document"]]
    return frame


def system_names(paths: Sequence[str | Path], names: Sequence[str] | None = None) -> list[str]:
    """Names of the systems: ``names`` when given, else each path's directory name, made unique.

    ``out/weak/spans.parquet`` and ``out/weak`` are both ``weak``: the directory a command wrote is what
    tells runs apart. Repeated names get ``-2``, ``-3``... in input order.
    """
    if names:
        if len(names) != len(paths):
            raise InputError(f"{len(names)} --name for {len(paths)} --pred: give one name per system, or none")
        chosen = [str(n) for n in names]
        if len(set(chosen)) != len(chosen):
            raise InputError("--name: system names must be distinct")
        return chosen
    chosen = []
    for path in paths:
        path = Path(path)
        base = path.name if path.is_dir() else (path.parent.name or path.stem)
        chosen.append(base or path.stem or "system")
    out: list[str] = []
    for name in chosen:
        candidate, k = name, 2
        while candidate in out:
            candidate, k = f"{name}-{k}", k + 1
        out.append(candidate)
    return out


@dataclass
class NotesInfo:
    """What the notes tell the evaluation: the gold notes' tokens and every note's document type."""

    tokens: object | None = None  # pandas frame id_document, html_start, html_end
    doc_types: dict[str, str | None] = field(default_factory=dict)
    found: int = 0
    failed: int = 0
    html: dict[str, str | bytes] = field(default_factory=dict)  # the gold notes' HTML (the report's context)


def notes_info(
    notes: str | Path,
    documents: set[str],
    column_map: Mapping[str, str] | None = None,
    punkt: str | Path | None = None,
    max_tokens: int | None = None,
    progress: bool = False,
) -> NotesInfo:
    """Segment the notes of ``documents`` (as the labeller does) for their tokens; types of all of them."""
    from deid_ds.defaults import DEFAULT_MAX_TOKENS
    from deid_ds.io.notes import open_notes
    from deid_ds.segmentation.notes import SegmentOptions, segment_note, segmenter_for, token_offsets

    source = open_notes(notes, column_map)
    segmenter = segmenter_for(
        SegmentOptions(str(Path(punkt).resolve()) if punkt else None, max_tokens or DEFAULT_MAX_TOKENS)
    )
    info = NotesInfo()
    ids: list[np.ndarray] = []
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    seen: set[str] = set()
    with tqdm(total=source.num_notes, unit="note", desc="evaluate: tokens", disable=not progress) as bar:
        for batch in source.iter_batches():
            for note in batch:
                if note.id_document in documents and note.id_document not in seen:
                    seen.add(note.id_document)
                    info.doc_types[note.id_document] = note.doc_type
                    info.found += 1
                    if isinstance(note.html, (str, bytes)):
                        info.html[note.id_document] = note.html
                    status, parsed, compact = segment_note(note, segmenter)
                    if status.status == "failed":
                        info.failed += 1
                    elif compact is not None and compact.starts:
                        _, _, html_starts, html_ends = token_offsets(parsed, compact)
                        ids.append(np.full(len(html_starts), note.id_document, dtype=object))
                        starts.append(html_starts)
                        ends.append(html_ends)
            bar.update(len(batch))
    if ids:
        info.tokens = pd.DataFrame(
            {"id_document": np.concatenate(ids), "html_start": np.concatenate(starts), "html_end": np.concatenate(ends)}
        )
    else:
        info.tokens = pd.DataFrame({"id_document": [], "html_start": [], "html_end": []})
    return info


@dataclass(frozen=True)
class Coverage:
    """How a system's predictions meet the gold's documents (counts only, never an id)."""

    gold_documents: int
    gold_documents_without_predictions: int  # scored as "nothing predicted" there
    prediction_documents: int
    prediction_documents_outside_gold: int  # ignored

    @property
    def partial(self) -> bool:
        return self.gold_documents_without_predictions > 0


def coverage_of(frame, documents: Sequence[str]) -> Coverage:
    """The :class:`Coverage` of a system's spans ``frame`` over the gold's ``documents``."""
    predicted = {d for d in frame["id_document"] if d is not None}
    gold = set(documents)
    return Coverage(len(gold), len(gold - predicted), len(predicted), len(predicted - gold))


def check_coverage(name: str, coverage: Coverage) -> None:
    """Refuse a system whose predictions share no document with the gold: scoring it would print F1 0.000
    for what is an id mismatch (case, prefix, another corpus). A system that predicted nothing at all is
    scored (it found nothing; the command warns)."""
    if coverage.prediction_documents and coverage.prediction_documents == coverage.prediction_documents_outside_gold:
        raise InputError(
            f"predictions of {name}: none of its {coverage.prediction_documents:,} document(s) is among the "
            f"{coverage.gold_documents:,} gold document(s): nothing to score (compare the id_document columns)"
        )


@dataclass
class Evaluation:
    """The result of :func:`evaluate`: the scored comparison and how its inputs were chosen."""

    comparison: object  # deid_ds.evaluation.scoring.SystemComparison
    gold: str
    systems: dict[str, str]  # name -> spans file
    documents: int
    redaction_unit: str
    doc_types_from: str | None
    notes_found: int | None = None
    notes_failed: int | None = None
    n_bootstrap: int = 1000
    seed: int = 0
    #: Per system, its :class:`Coverage` of the gold's documents (the CLI warns when it is partial).
    coverage: dict[str, Coverage] = field(default_factory=dict)
    #: Gold documents left out because a system's model was trained or calibrated on them (held_out).
    documents_learnt: int = 0

    def to_dict(self) -> dict:
        """The JSON of ``--json``: inputs, choices, then each system's scores (see docs/predict-evaluate.md)."""
        compared = self.comparison.to_dict()
        systems = {name: {"spans": self.systems[name], **scores} for name, scores in compared["systems"].items()}
        return {
            "gold": self.gold,
            "documents": self.documents,
            "documents_evaluated": DOCUMENTS_RULE,
            "documents_left_out_trained_or_calibrated_on": self.documents_learnt,
            "redaction_unit": self.redaction_unit,
            "doc_types_from": self.doc_types_from,
            "notes": None
            if self.notes_found is None
            else {"gold_documents_found": self.notes_found, "failed": self.notes_failed},
            "bootstrap": {"resamples": self.n_bootstrap, "seed": self.seed, "confidence": compared["confidence"]},
            "reference": next(iter(systems), None),
            "systems": systems,
            "coverage": {name: asdict(c) for name, c in self.coverage.items()},
        }

    def table(self) -> str:
        """The printed comparison: micro scores with intervals, F1 per label, F1 per document type."""
        from deid_ds.report import format_table

        unit = "token" if self.redaction_unit == "token" else "character"
        head = (
            f"{self.documents:,} documents evaluated: the gold's (predictions on other documents ignored); "
            f"redaction counted in {unit}s; {self.n_bootstrap:,} bootstrap resamples of documents, seed {self.seed}"
        )
        sections = [head, self.comparison.table()]
        scores = self.comparison.scores
        types = sorted({t for s in scores.values() for t in s.per_doc_type})
        if types:
            rows = []
            for doc_type in types:
                per = [s.per_doc_type.get(doc_type) for s in scores.values()]
                documents = next((p.documents for p in per if p is not None), 0)
                rows.append(
                    [
                        doc_type,
                        documents,
                        *(p.counts.f1 if p is not None else 1.0 for p in per),
                        *(p.redacted_recall if p is not None else 1.0 for p in per),
                    ]
                )
            headers = ["document type", "docs", *(f"F1 {n}" for n in scores), *(f"redacted {n}" for n in scores)]
            sections.append(format_table(headers, rows, title="Exact micro F1 and redaction recall per document type"))
        if self.notes_found is not None and (self.notes_found < self.documents or self.notes_failed):
            sections.append(
                f"note: {self.documents - self.notes_found:,} gold document(s) not found in the notes, "
                f"{self.notes_failed:,} failed to segment: "
                "their gold tokens are not counted in the redaction recall"
            )
        return "\n\n".join(sections)


def evaluate(
    gold: str | Path,
    predictions: Sequence[str | Path],
    *,
    names: Sequence[str] | None = None,
    notes: str | Path | None = None,
    column_map: Mapping[str, str] | None = None,
    punkt: str | Path | None = None,
    max_tokens: int | None = None,
    json_out: str | Path | None = None,
    figure: str | Path | None = None,
    html: str | Path | None = None,
    examples_per_label: int = 3,
    n_bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    progress: bool = False,
) -> Evaluation:
    """Score each spans file of ``predictions`` against ``gold`` on the gold's documents (module docstring).

    The first system is the reference of the paired F1 differences. ``json_out``, ``figure`` and ``html``
    are written atomically when given; ``progress`` shows a bar while the notes are segmented.

    ``html`` is the page of :mod:`deid_ds.evaluation.html_report`, with at most ``examples_per_label``
    false positives and negatives per system and label; with ``notes`` they show the note's text around
    them, so the page holds note text: written only when asked, it warns in a banner (and the command on
    stderr).
    """
    from deid_ds.evaluation.scoring import compare_systems

    if not predictions:
        raise InputError("evaluate: give at least one --pred spans file")
    if n_bootstrap < 1:
        raise InputError(f"--bootstrap {n_bootstrap}: at least 1 resample")
    if html is not None:
        from deid_ds.io.html_page import check_replaceable

        # before the work, not after it (evaluate has no --overwrite); never over an input
        check_replaceable(html, overwrite=None, inputs=(gold, *predictions, notes))
    labels = system_names(predictions, names)
    gold_frame = read_spans(gold, "gold")
    frames = {name: read_spans(path, f"predictions of {name}") for name, path in zip(labels, predictions)}
    learnt = _learnt_documents(predictions)
    left_out = len({d for d in gold_frame["id_document"] if d is not None} & learnt)
    if left_out:  # a document a system was trained or calibrated on is never scored, for any system
        gold_frame = gold_frame[~gold_frame["id_document"].isin(learnt)]
        if gold_frame.empty:
            raise InputError(
                f"{gold}: every gold document was used to train or calibrate the model of the predictions "
                "(its model card, its calibration file): nothing left to score"
            )
    documents = sorted({d for d in gold_frame["id_document"] if d is not None})
    coverage = {name: coverage_of(frame, documents) for name, frame in frames.items()}
    for name, covered in coverage.items():
        check_coverage(name, covered)
    tokens = None
    doc_types: dict[str, str | None] | None = None
    doc_types_from = None
    found = failed = None
    notes_html = None
    if notes is not None:
        info = notes_info(notes, set(documents), column_map, punkt, max_tokens, progress)
        tokens, found, failed, notes_html = info.tokens, info.found, info.failed, info.html
        if any(v is not None for v in info.doc_types.values()):
            doc_types, doc_types_from = info.doc_types, "notes"
    if doc_types is None and "doc_type" in gold_frame.columns and gold_frame["doc_type"].notna().any():
        typed = gold_frame.dropna(subset=["doc_type"]).drop_duplicates("id_document")
        doc_types, doc_types_from = dict(zip(typed["id_document"], typed["doc_type"].astype(str))), "gold"
    comparison = compare_systems(
        frames,
        gold_frame,
        tokens=tokens,
        documents=documents,
        doc_types=doc_types,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )
    result = Evaluation(
        comparison=comparison,
        gold=str(_spans_file(Path(gold), "gold")),
        systems={name: str(_spans_file(Path(path), name)) for name, path in zip(labels, predictions)},
        documents=len(documents),
        redaction_unit="token" if tokens is not None else "char",
        doc_types_from=doc_types_from,
        notes_found=found,
        notes_failed=failed,
        n_bootstrap=n_bootstrap,
        seed=seed,
        coverage=coverage,
        documents_learnt=left_out,
    )
    if json_out is not None:
        atomic_write_text(json_out, json.dumps(result.to_dict(), indent=1, ensure_ascii=False) + "\n")
    png = None
    if figure is not None:
        from deid_ds.evaluation.figure import f1_figure, f1_figure_png

        png = f1_figure_png(comparison)  # drawn once: the file and the page's inline copy
        f1_figure(comparison, figure, png=png)
    if html is not None:
        _write_html(result, html, gold_frame, frames, documents, notes_html, examples_per_label, seed, png)
    return result


def _learnt_documents(predictions: Sequence[str | Path]) -> set[str]:
    """The documents any system's model was trained (``--gold-train``) or calibrated on."""
    from deid_ds.evaluation.held_out import used_documents

    learnt: set[str] = set()
    for path in predictions:
        used = used_documents(_spans_file(Path(path), "predictions"))
        learnt |= used["train"] | used["calibrate"]
    return learnt


def _write_html(result, html, gold_frame, frames, documents, notes_html, per_label, seed, png) -> None:
    """The ``html`` page: the figure inline, error examples with their context when the notes are given
    (``notes_html``: the gold notes' HTML, read while the notes were segmented)."""
    from deid_ds.evaluation.examples import add_context, error_examples
    from deid_ds.evaluation.html_report import write_html_report

    if png is None:
        try:
            from deid_ds.evaluation.figure import f1_figure_png

            png = f1_figure_png(result.comparison)
        except ImportError:  # matplotlib missing: the page without its figure
            png = None
    examples = error_examples(gold_frame, frames, documents, per_label=per_label, seed=seed)
    if notes_html is not None:
        examples = add_context(examples, notes_html)
    write_html_report(html, result, figure_png=png, examples=examples, per_label=per_label)
