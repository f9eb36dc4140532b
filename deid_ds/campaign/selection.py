"""Which documents to correct first: ``campaign --select random|disagreement|uncertainty``.

``random`` (the default) is the unbiased draw of :mod:`~deid_ds.campaign.sampling`: the only choice
for a gold standard that *scores* a system. The two others rank each document type's documents by a
score computed from a trained model's predictions (a ``deid-ds predict`` output, without
``--with-rules``, on the same notes as the weak labels), highest first, within the same per-type
quotas and with the same assignment and overlap; they pick the documents whose correction teaches
the model most, for ``train --gold-train``, never an evaluation set:

* ``disagreement``: :func:`disagreement_score`, how many entities the model and the rules do not
  share (exact HTML offsets and label);
* ``uncertainty``: :func:`uncertainty_score`, the expected number of wrong model entities, the sum of
  ``1 - score`` over the model's spans.

Documents of equal score keep their random (seeded hash) order.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

import pyarrow.parquet as pq

from deid_ds.campaign.choices import RANDOM, SELECTIONS, UNCERTAINTY
from deid_ds.errors import InputError

MODEL_SOURCE = "model"  # deid_ds.ner.predict.MODEL_SOURCE (the ner layer is not imported from here)

Span = tuple[int, int, str]  # html_start, html_end, label


def disagreement_score(rule_spans: Iterable[Span], model_spans: Iterable[Span]) -> int:
    """Entities found by only one of the rules and the model (same offsets and label: agreed)."""
    return len(set(rule_spans) ^ set(model_spans))


def uncertainty_score(model_scores: Iterable[float]) -> float:
    """Expected number of wrong entities among the model's: the sum of ``1 - score`` (0 without any)."""
    return sum(1.0 - score for score in model_scores)


def document_priorities(
    select: str, weak_dir: str | Path, predictions: str | Path | None, documents: Collection[str]
) -> dict[str, float] | None:
    """Score of each of ``documents`` for ``select`` (``None`` for ``random``), read from the rules'
    ``weak_dir/spans.parquet`` and the model's ``predictions/spans.parquet``.

    Refuses predictions of the hybrid (sources other than the model's), without scores (uncertainty),
    or missing a document (tagged ``ok`` in ``predictions/documents.parquet``): its score would be unknown.
    """
    if select not in SELECTIONS:
        raise InputError(f"--select {select}: expected one of {', '.join(SELECTIONS)}")
    if select == RANDOM:
        return None
    if predictions is None:
        raise InputError(f"--select {select} needs the model's predictions: --predictions PREDICT_DIR")
    predictions = Path(predictions)
    tagged = _tagged_documents(predictions)
    missing = [d for d in documents if d not in tagged]
    if missing:
        raise InputError(
            f"{predictions}: {len(missing)} document(s) of the campaign's pool not tagged by the model "
            "(run `deid-ds predict` on the notes weak-labelled in the campaign's input)"
        )
    model = _read_spans(predictions / "spans.parquet", documents, with_score=select == UNCERTAINTY)
    sources = {source for rows in model.values() for *_, source, _ in rows} - {MODEL_SOURCE}
    if sources:
        raise InputError(
            f"{predictions}: spans of sources {', '.join(sorted(map(str, sources)))}: --select needs the "
            "model's own predictions (`deid-ds predict` without --with-rules)"
        )
    if select == UNCERTAINTY:
        if any(score is None for rows in model.values() for *_, score in rows):
            raise InputError(f"{predictions}: spans without a score (an older predict): run predict again")
        return {d: uncertainty_score(row[4] for row in model.get(d, [])) for d in documents}
    rules = _read_spans(Path(weak_dir) / "spans.parquet", documents, with_score=False)
    return {
        d: float(disagreement_score((r[:3] for r in rules.get(d, [])), (m[:3] for m in model.get(d, []))))
        for d in documents
    }


def weak_spans(weak_dir: str | Path, documents: Collection[str]) -> dict[str, list[Span]]:
    """The rules' entities of ``documents`` in ``weak_dir/spans.parquet`` (none when there is no such file)."""
    path = Path(weak_dir) / "spans.parquet"
    if not path.is_file():
        return {}
    return {d: [row[:3] for row in rows] for d, rows in _read_spans(path, documents, with_score=False).items()}


def _tagged_documents(predictions: Path) -> set[str]:
    path = predictions / "documents.parquet"
    if not path.is_file():
        raise InputError(f"{predictions}: no documents.parquet (expected the output of `deid-ds predict`)")
    names = pq.read_schema(path).names
    if "id_document" not in names:
        raise InputError(f"{path}: no id_document column")
    table = pq.read_table(path, columns=[c for c in ("id_document", "status") if c in names]).to_pydict()
    statuses = table.get("status", ["ok"] * len(table["id_document"]))
    return {str(d) for d, status in zip(table["id_document"], statuses) if status == "ok"}


def _read_spans(path: Path, documents: Collection[str], with_score: bool) -> Mapping[str, list[tuple]]:
    """``id -> [(html_start, html_end, label, source, score)]`` of ``documents``."""
    if not path.is_file():
        raise InputError(f"{path}: not found (expected the spans of `deid-ds weak-label` or `deid-ds predict`)")
    names = pq.read_schema(path).names
    wanted = ["id_document", "html_start", "html_end", "label", "source"] + (["score"] if with_score else [])
    absent = [c for c in wanted if c not in names]
    if absent:
        raise InputError(f"{path}: no {', '.join(absent)} column")
    table = pq.read_table(path, columns=wanted).to_pydict()
    scores = table["score"] if with_score else [None] * len(table["id_document"])
    chosen = set(documents)
    found: dict[str, list[tuple]] = {}
    for document, start, end, label, source, score in zip(
        table["id_document"], table["html_start"], table["html_end"], table["label"], table["source"], scores
    ):
        if str(document) in chosen:
            found.setdefault(str(document), []).append((start, end, label, source, score))
    return found
