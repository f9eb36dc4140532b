"""Punkt sentence splitting for French clinical text, without any download.

``nltk.download("punkt")`` is not reachable from a hospital's secure zone, and NLTK's English/French
models know nothing of ``Dr.``, ``Mme.`` or ``cf.``. Punkt is unsupervised, so the project ships its own
parameters and lets users retrain them on their notes:

* :func:`default_parameters` builds parameters from the shipped French clinical abbreviation list
  (``resources/abbreviations_fr.txt``), merged with ``resources/punkt_fr_clinical.json`` when that file
  (parameters trained by :func:`~deid_ds.segmentation.punkt_training.train_parameters`) is present;
* :func:`save_parameters` / :func:`load_parameters` keep parameters as a readable JSON file;
* :func:`sentence_splitter` splits with them (:mod:`deid_ds.segmentation.punkt_splitter`, which does not
  import NLTK: only training does).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from deid_ds.io.files import atomic_write_text
from deid_ds.resources import french_abbreviations, resource_path
from deid_ds.segmentation.punkt_splitter import PunktParameters, PunktSplitter

TRAINED_PARAMETERS_FILE = "punkt_fr_clinical.json"
_FORMAT = "deid-ds/punkt-parameters/1"


def with_abbreviations(parameters: PunktParameters) -> PunktParameters:
    """``parameters`` with the shipped French clinical abbreviations added (known ones are never lost)."""
    parameters.abbrev_types.update(french_abbreviations())
    return parameters


def parameters_to_dict(parameters: PunktParameters) -> dict:
    return {
        "format": _FORMAT,
        "abbrev_types": sorted(parameters.abbrev_types),
        "collocations": sorted([list(pair) for pair in parameters.collocations]),
        "sent_starters": sorted(parameters.sent_starters),
        "ortho_context": dict(sorted(parameters.ortho_context.items())),
    }


def parameters_from_dict(data: dict) -> PunktParameters:
    if data.get("format") != _FORMAT:
        raise ValueError(f"not a deid-ds Punkt parameter file (format {data.get('format')!r}, expected {_FORMAT!r})")
    return PunktParameters(
        abbrev_types=set(data.get("abbrev_types", [])),
        collocations={tuple(pair) for pair in data.get("collocations", [])},
        sent_starters=set(data.get("sent_starters", [])),
        ortho_context={word: int(flags) for word, flags in data.get("ortho_context", {}).items()},
    )


def save_parameters(parameters: PunktParameters, path: str | Path) -> None:
    """Write parameters as JSON (atomically)."""
    atomic_write_text(Path(path), json.dumps(parameters_to_dict(parameters), ensure_ascii=False, indent=1) + "\n")


def load_parameters(path: str | Path) -> PunktParameters:
    """Read parameters written by :func:`save_parameters`; the abbreviation list is always added."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not valid JSON (line {error.lineno})") from None
    return with_abbreviations(parameters_from_dict(data))


@lru_cache(maxsize=1)
def default_parameters() -> PunktParameters:
    """The shipped parameters: trained ones when present, plus the abbreviation list."""
    trained = resource_path(TRAINED_PARAMETERS_FILE)
    if trained.is_file():
        return load_parameters(trained)
    return with_abbreviations(PunktParameters())


def sentence_splitter(parameters: PunktParameters | None = None) -> PunktSplitter:
    """A Punkt splitter with the given (default: shipped) parameters."""
    return PunktSplitter(parameters or default_parameters())
