"""Gold spans: reading them, and scoring the run's spans on the input notes they cover."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from deid_ds.weak_labelling.report import WeakLabelReport
from deid_ds.weak_labelling.schemas import spans_schema


def read_gold(path: str | Path):
    """Gold spans (Parquet or JSONL): ``id_document``, ``label``, ``html_start``, ``html_end`` (+ ``text``).

    Read as ``deid-ds evaluate`` reads any spans table (:func:`deid_ds.evaluation.evaluate.read_spans`),
    with labels and offsets typed for scoring.
    """
    from deid_ds.evaluation.evaluate import read_spans

    frame = read_spans(path, "gold")
    frame["label"] = frame["label"].astype(str)
    frame["html_start"] = frame["html_start"].astype("int64")
    frame["html_end"] = frame["html_end"].astype("int64")
    return frame


def score_gold(report: WeakLabelReport, gold, documents, evaluated_spans: list, tokens) -> None:
    """Score the predicted spans on the notes of the input that the gold file covers.

    A gold document missing from the input is left out (and counted); an input note of the gold that
    failed is evaluated with no prediction, so its entities count as missed.
    """
    from deid_ds.evaluation.scoring import score_spans

    input_ids = set(documents["id_document"])
    gold_ids = set(gold["id_document"])
    evaluated = sorted(gold_ids & input_ids)
    predicted = (
        pd.concat(evaluated_spans, ignore_index=True) if evaluated_spans else spans_schema().empty_table().to_pandas()
    )
    gold_in = gold[gold["id_document"].isin(input_ids)].reset_index(drop=True)
    chosen = documents[documents["id_document"].isin(gold_ids)]
    doc_types = dict(zip(chosen["id_document"], chosen["doc_type"])) if chosen["doc_type"].notna().any() else None
    scores = score_spans(gold_in, predicted, tokens=tokens, documents=evaluated, doc_types=doc_types)
    report.gold = {
        "documents": len(evaluated),
        "gold_documents_not_in_input": len(gold_ids - input_ids),
        **scores.to_dict(),
    }
    report.gold_table = scores.table()
