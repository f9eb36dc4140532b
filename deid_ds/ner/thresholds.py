"""Where ``predict`` finds the hybrid's thresholds (the story: :mod:`deid_ds.ner.calibrate`).

Apart from :mod:`~deid_ds.ner.calibrate` so that ``predict`` reads thresholds without importing what
calibrates them (which runs ``predict``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from deid_ds.errors import InputError

#: A model span overrides a weak rule span only when at least this sure (not tuned: a documented choice).
DEFAULT_OVERRIDE = 0.9
#: ``calibrate``'s file, read by ``predict`` when it sits in the model's directory.
CALIBRATION_FILE = "calibration.json"
#: The model card's entry written by ``train`` (the proxy).
CARD_KEY = "hybrid"


@dataclass(frozen=True)
class Thresholds:
    """The hybrid's two thresholds and where they came from (recorded in predict's ``report.json``)."""

    add: float = 0.0
    override: float = 0.0
    source: str = "none recorded: every model span counts (the hybrid before thresholds)"
    #: The calibration file they came from (its documents are never scored: deid_ds.evaluation.held_out).
    calibration: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def check_threshold(value, where: str, name: str) -> float:
    """``value`` as a float in [0, 1], else a one-line error naming ``where`` it came from."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise InputError(f"{where}: {name} must be a number between 0 and 1")
    return float(value)


def read_calibration(path: str | Path) -> Thresholds:
    """The thresholds chosen by ``deid-ds calibrate`` in ``path`` (its ``chosen`` entry)."""
    path = Path(path)
    try:
        chosen = json.loads(path.read_text(encoding="utf-8"))["chosen"]
    except FileNotFoundError:
        raise InputError(f"{path}: calibration file not found") from None
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(f"{path}: not a deid-ds calibrate file (JSON with a 'chosen' entry)") from None
    if not isinstance(chosen, dict):
        raise InputError(f"{path}: not a deid-ds calibrate file (JSON with a 'chosen' entry)")
    return Thresholds(
        check_threshold(chosen.get("add"), str(path), "add"),
        check_threshold(chosen.get("override"), str(path), "override"),
        f"calibration {path}",
        str(path.resolve()),
    )


def _card_thresholds(directory: Path) -> Thresholds | None:
    try:
        card = json.loads((directory / "model_card.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entry = card.get(CARD_KEY) if isinstance(card, dict) else None
    if not isinstance(entry, dict) or entry.get("add") is None:
        return None
    where = f"{directory / 'model_card.json'}"
    return Thresholds(
        check_threshold(entry.get("add"), where, "hybrid add"),
        check_threshold(entry.get("override", DEFAULT_OVERRIDE), where, "hybrid override"),
        f"model card {where} ({entry.get('source', 'train')})",
    )


def resolve_thresholds(
    model: str | Path,
    *,
    threshold: float | None = None,
    override: float | None = None,
    calibration: str | Path | None = None,
) -> Thresholds:
    """The thresholds ``predict`` uses (module docstring: the user's, a calibration file, the model card, none)."""
    directory = Path(model) if Path(model).is_dir() else Path(model).parent
    if calibration is not None:
        base = read_calibration(calibration)
    elif (directory / CALIBRATION_FILE).is_file():
        base = read_calibration(directory / CALIBRATION_FILE)
    else:
        base = _card_thresholds(directory) or Thresholds()
    if threshold is None and override is None:
        return base
    add = base.add if threshold is None else check_threshold(threshold, "--threshold", "the threshold")
    over = base.override if override is None else check_threshold(override, "--override", "the override threshold")
    given = " and ".join(
        name for name, value in (("--threshold", threshold), ("--override", override)) if value is not None
    )
    return Thresholds(add, over, f"{given}; otherwise {base.source}", base.calibration)
