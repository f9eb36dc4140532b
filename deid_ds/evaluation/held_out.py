"""The documents a system's model learnt from, which ``evaluate`` never scores.

``deid-ds train --gold-train GOLD`` lists the corrected documents it trained on in the model card
(``data.gold_train.documents``); ``deid-ds calibrate`` lists those it chose the thresholds on
(``documents`` of its JSON). A ``deid-ds predict`` output names its model (and the calibration file
its thresholds came from) in ``report.json``, beside ``spans.parquet``: :func:`used_documents` follows
these links. Scoring a system on such documents would report how well it remembers its corrections,
not how well it generalises; ``evaluate`` leaves them out of every system's scores (the same documents
for all, so the paired comparison stays paired) and says how many.
"""

from __future__ import annotations

import json
from pathlib import Path

MODEL_CARD = "model_card.json"  # deid_ds.ner.train.MODEL_CARD (the ner layer is not imported from here)
CALIBRATION_FILE = "calibration.json"  # deid_ds.ner.thresholds.CALIBRATION_FILE


def _json(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def used_documents(spans_file: str | Path) -> dict[str, set[str]]:
    """``{"train": ids, "calibrate": ids}`` of the model behind the predictions in ``spans_file`` (empty sets
    for predictions that are not a ``predict`` output, or a model trained without gold)."""
    report = _json(Path(spans_file).parent / "report.json")
    used: dict[str, set[str]] = {"train": set(), "calibrate": set()}
    model = report.get("model")
    if not isinstance(model, str) or not model:
        return used
    directory = Path(model) if Path(model).is_dir() else Path(model).parent
    gold_train = (_json(directory / MODEL_CARD).get("data") or {}).get("gold_train") or {}
    used["train"] = {str(d) for d in gold_train.get("documents") or []}
    thresholds = report.get("thresholds") or {}
    calibration = thresholds.get("calibration") if isinstance(thresholds, dict) else None
    path = Path(calibration) if isinstance(calibration, str) else directory / CALIBRATION_FILE
    used["calibrate"] = {str(d) for d in _json(path).get("documents") or []}
    return used
