"""Training Punkt parameters with NLTK's ``PunktTrainer`` (``deid-ds punkt-train`` only).

This is the one module that imports NLTK, whose package ``__init__`` imports all of NLTK and scipy (~1 s of
CPU): splitting uses the parameters without it (:mod:`deid_ds.segmentation.punkt_splitter`). The
trainer reads tokens with the same French settings as the splitter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from nltk.tokenize.punkt import PunktLanguageVars, PunktToken, PunktTrainer

from deid_ds.segmentation.punkt import with_abbreviations
from deid_ds.segmentation.punkt_splitter import SENTENCE_END_CHARS, PunktParameters

# NLTK >= 3.9 runs every regular expression through ``nltk.redos``, a wall-clock-timed wrapper around
# the third-party ``regex`` engine meant for *caller-supplied* patterns. Punkt's own patterns are fixed
# and linear; compiled with the standard ``re`` they make training several times faster.
# The patterns below are NLTK's, unchanged.


class FrenchLanguageVars(PunktLanguageVars):
    """Punkt's language variables: the French ellipsis ends a sentence; fixed patterns use ``re``."""

    __slots__ = ()
    sent_end_chars = tuple(SENTENCE_END_CHARS)
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


def train_parameters(texts: Iterable[str], *, include_all_collocations: bool = False) -> PunktParameters:
    """Train Punkt on note texts (unsupervised) and add the French clinical abbreviations."""
    trainer = PunktTrainer(lang_vars=FrenchLanguageVars(), token_cls=FastPunktToken)
    trainer.INCLUDE_ALL_COLLOCS = include_all_collocations
    for text in texts:
        trainer.train(text, finalize=False)
    trainer.finalize_training()
    learned = trainer.get_params()
    return with_abbreviations(
        PunktParameters(
            abbrev_types=set(learned.abbrev_types),
            collocations={tuple(pair) for pair in learned.collocations},
            sent_starters=set(learned.sent_starters),
            ortho_context=dict(learned.ortho_context),
        )
    )
