"""Agreement and gold merging of a correction campaign: ``deid-ds agreement`` and ``deid-ds gold``.

* :mod:`~deid_ds.agreement.readers`: Prodigy ``db-out`` JSONL, doccano JSONL and Label Studio JSON
  answers into one model (:mod:`~deid_ds.agreement.model`);
* :mod:`~deid_ds.agreement.items`: answers grouped by item on one tokenisation;
* :mod:`~deid_ds.agreement.kappa`: Fleiss' kappa for a varying number of raters, per-category and
  Cohen's kappa, bootstrap over documents;
* :mod:`~deid_ds.agreement.compute`: the agreement report (table, JSON, figure);
* :mod:`~deid_ds.agreement.gold`: reviewed or majority-voted answers into the gold spans table;
* :mod:`~deid_ds.agreement.cli`: the two commands.

Submodules import numpy and pandas; this package module imports nothing, so ``deid_ds`` stays cheap.
"""

from __future__ import annotations

from deid_ds.lazy_api import lazy_getattr

_API: dict[str, str] = {
    "agreement": "deid_ds.agreement.compute",
    "agreement_from_files": "deid_ds.agreement.compute",
    "AgreementResult": "deid_ds.agreement.compute",
    "build_gold": "deid_ds.agreement.gold",
    "gold_from_files": "deid_ds.agreement.gold",
    "write_gold": "deid_ds.agreement.gold",
    "read_answers": "deid_ds.agreement.readers",
    "Annotation": "deid_ds.agreement.model",
    "Span": "deid_ds.agreement.model",
    "fleiss_kappa": "deid_ds.agreement.kappa",
    "fleiss_kappa_varying": "deid_ds.agreement.kappa",
    "cohen_kappa": "deid_ds.agreement.kappa",
}

__all__ = list(_API)


__getattr__ = lazy_getattr(__name__, _API)
