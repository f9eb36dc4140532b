"""NLTK Punkt sentence splitting for French clinical text, without any download.

``nltk.download("punkt")`` is not reachable from a hospital's secure zone, and NLTK's English/French
models know nothing of ``Dr.``, ``Mme.`` or ``cf.``. Punkt is unsupervised, so the project ships its own
parameters and lets users retrain them on their notes:

* :func:`default_parameters` builds parameters from the shipped French clinical abbreviation list
  (``resources/abbreviations_fr.txt``), merged with ``resources/punkt_fr_clinical.json`` when that file
  (parameters trained by :func:`train_parameters`) is present;
* :func:`train_parameters` runs NLTK's ``PunktTrainer`` on a corpus of note texts, then adds the
  abbreviation list, so known abbreviations are never lost to a small corpus;
* :func:`save_parameters` / :func:`load_parameters` keep parameters as a readable JSON file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from nltk.tokenize.punkt import PunktLanguageVars, PunktParameters, PunktSentenceTokenizer, PunktToken, PunktTrainer

from deid_ds.io.files import atomic_write_text
from deid_ds.resources import french_abbreviations, resource_path

TRAINED_PARAMETERS_FILE = "punkt_fr_clinical.json"
_FORMAT = "deid-ds/punkt-parameters/1"


# NLTK >= 3.9 runs every regular expression through ``nltk.redos``, a wall-clock-timed wrapper around
# the third-party ``regex`` engine meant for *caller-supplied* patterns. Punkt's own patterns are fixed
# and linear; compiled with the standard ``re`` they make sentence splitting several times faster.
# The patterns below are NLTK's, unchanged.


class FrenchLanguageVars(PunktLanguageVars):
    """Punkt's language variables: the French ellipsis ends a sentence; fixed patterns use ``re``."""

    __slots__ = ()
    sent_end_chars = (".", "?", "!", "\u2026")
    re_boundary_realignment = re.compile(PunktLanguageVars.re_boundary_realignment.pattern, re.MULTILINE)

    def _word_tokenizer_re(self):
        try:
            return self._re_word_tokenizer
        except AttributeError:
            self._re_word_tokenizer = re.compile(
                self._word_tokenize_fmt
                % {
                    "NonWord": self._re_non_word_chars,
                    "MultiChar": self._re_multi_char_punct,
                    "WordStart": self._re_word_start,
                },
                re.UNICODE | re.VERBOSE,
            )
            return self._re_word_tokenizer

    def period_context_re(self):
        try:
            return self._re_period_context
        except AttributeError:
            self._re_period_context = re.compile(
                self._period_context_fmt
                % {"NonWord": self._re_non_word_chars, "SentEndChars": self._re_sent_end_chars},
                re.UNICODE | re.VERBOSE,
            )
            return self._re_period_context


_NON_PUNCT = re.compile(r"[^\W\d]", re.UNICODE)


class FastPunktToken(PunktToken):
    """Punkt's token with its fixed patterns compiled by ``re`` (see above)."""

    _RE_ELLIPSIS = re.compile(r"\.\.+$")
    _RE_NUMERIC = re.compile(r"^-?[\.,]?\d[\d,\.-]*\.?$")
    # NLTK's initial is one letter and a period ("J."); French compound first names abbreviate to
    # hyphenated initials ("J.-P.", "A.-M."), which must not end a sentence before the last name either.
    _RE_INITIAL = re.compile(r"(?:[^\W\d]\.-)*[^\W\d]\.$", re.UNICODE)
    _RE_ALPHA = re.compile(r"[^\W\d]+$", re.UNICODE)

    @property
    def is_non_punct(self):
        return _NON_PUNCT.search(self.type)


def _with_abbreviations(parameters: PunktParameters) -> PunktParameters:
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
    parameters = PunktParameters()
    parameters.abbrev_types = set(data.get("abbrev_types", []))
    parameters.collocations = {tuple(pair) for pair in data.get("collocations", [])}
    parameters.sent_starters = set(data.get("sent_starters", []))
    for word, flags in data.get("ortho_context", {}).items():
        parameters.ortho_context[word] = int(flags)
    return parameters


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
    return _with_abbreviations(parameters_from_dict(data))


@lru_cache(maxsize=1)
def default_parameters() -> PunktParameters:
    """The shipped parameters: trained ones when present, plus the abbreviation list."""
    trained = resource_path(TRAINED_PARAMETERS_FILE)
    if trained.is_file():
        return load_parameters(trained)
    return _with_abbreviations(PunktParameters())


def train_parameters(texts: Iterable[str], *, include_all_collocations: bool = False) -> PunktParameters:
    """Train Punkt on note texts (unsupervised) and add the French clinical abbreviations."""
    trainer = PunktTrainer(lang_vars=FrenchLanguageVars(), token_cls=FastPunktToken)
    trainer.INCLUDE_ALL_COLLOCS = include_all_collocations
    for text in texts:
        trainer.train(text, finalize=False)
    trainer.finalize_training()
    return _with_abbreviations(trainer.get_params())


class MemoPunktSentenceTokenizer(PunktSentenceTokenizer):
    """Punkt with its per-boundary decision memoised.

    Punkt decides each candidate boundary from a short context (the token before the period and the one
    after: ``"mg. Le"``), with fixed parameters: a pure function of that string. Clinical notes repeat
    the same contexts endlessly, so a bounded cache of decisions makes splitting much cheaper without
    changing a single result.
    """

    def __init__(self, *args, cache_size: int = 1 << 16, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        uncached = super().text_contains_sentbreak
        self.text_contains_sentbreak = lru_cache(maxsize=cache_size)(uncached)  # type: ignore[method-assign]


def sentence_splitter(parameters: PunktParameters | None = None) -> PunktSentenceTokenizer:
    """A Punkt splitter with the given (default: shipped) parameters."""
    return MemoPunktSentenceTokenizer(
        parameters or default_parameters(), lang_vars=FrenchLanguageVars(), token_cls=FastPunktToken
    )
