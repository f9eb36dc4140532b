"""``deid-ds evaluate``: several systems' spans scored against a gold standard, side by side.

The metrics are :mod:`deid_ds.evaluation.scoring`'s (entity-level exact and lenient match, label-blind redaction,
fully redacted documents, per document type, paired bootstrap intervals on micro F1); this package
reads the inputs, chooses the documents, tokens and document types, and writes the table, the JSON
and the figure. Modules: :mod:`.evaluate` (:func:`evaluate`), :mod:`.figure` (the PNG), :mod:`.cli`.
"""

from __future__ import annotations

from deid_ds.evaluation.evaluate import Evaluation, evaluate, read_spans, system_names

__all__ = ["Evaluation", "evaluate", "read_spans", "system_names"]
