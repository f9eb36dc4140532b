"""Which gazetteer entries are also ordinary French words, and so need context to be labelled.

A surname such as ``PETIT``, ``BLANC`` or ``ROSE``, a commune such as ``Orange``, ``Tours`` or ``Sens``
appears in clinical prose as a plain word far more often than as an identifier. Such entries are kept,
but marked, so that the labeller can require context (``Dr``, ``Mme``, a postcode before a city...).

The decision is read from data, not from a hand-made list: the lower-case entries of a real French
lexicon (Grammalecte's Hunspell dictionary, where proper nouns are capitalised; see
``tools/make_french_lexicon.py``), with the regular plural forms. Very short entries (``Y``, ``Eu``,
``Ay``) are ambiguous whatever they are.
"""

from __future__ import annotations

import gzip
import unicodedata
from functools import lru_cache

from deid_ds.kb.normalize import fold_key, fold_text
from deid_ds.resources import resource_path

LEXICON_FILE = "french_common_words.txt.gz"
LEXICON_DESCRIPTION = (
    "lower-case lemmas of Grammalecte's French Hunspell dictionary fr_FR 7.0 (MPL-2.0), with plurals in -s/-x"
)
SHORT = "short"
COMMON_WORD = "common_word"


@lru_cache(maxsize=1)
def _lexicon() -> tuple[frozenset[str], frozenset[str]]:
    with gzip.open(resource_path(LEXICON_FILE), "rt", encoding="utf-8") as handle:
        words = frozenset(line.strip() for line in handle if line.strip() and not line.startswith("#"))
    return words, _folded_keys(words)


def _folded_keys(words: frozenset[str]) -> frozenset[str]:
    """``{fold_key(w) for w in words}``, the words folded in one call: folding is character by character and
    keeps the NUL character that joins them, and a word that folds without whitespace is its own key. Twice as
    fast as a call per word (70,000 words: ~0.05 s of every process's start-up)."""
    listed = [w for w in words if "\x00" not in w]
    folded = fold_text("\x00".join(listed)).split("\x00") if listed else []
    keys = {key if key.split() == [key] else fold_key(word) for word, key in zip(listed, folded)}
    return frozenset(keys | {fold_key(w) for w in words if "\x00" in w})


def load_lexicon() -> None:
    """Read the lexicon now: a process's first note would otherwise pay for it inside its time limit."""
    _lexicon()


def is_common_word(word: str, *, accents_known: bool = True) -> bool:
    """True when ``word`` (lower case) is a French word of the lexicon or the regular plural of one.

    With ``accents_known=False`` (a name written in capitals without accents, ``LEGER``) the comparison
    ignores accents; otherwise it keeps them, so that ``Marie`` is not taken for ``marié``.
    """
    exact, folded = _lexicon()
    words = exact if accents_known else folded
    word = word if accents_known else fold_key(word)
    if word in words:
        return True
    return (word.endswith(("s", "x")) and word[:-1] in words) or (word.endswith("es") and word[:-2] in words)


def ambiguity_reason(surface: str) -> str | None:
    """Why an entry is ambiguous (``"short"``, ``"common_word"``), or ``None`` when it is not.

    Multi-word entries (``LE GALL``, ``Saint-Brieuc``) are specific enough; each single word is checked.
    """
    key = fold_key(surface)
    letters = key.replace(" ", "").replace("-", "").replace("'", "")
    if len(letters) <= 2:
        return SHORT
    if " " in key or "-" in key:
        return None
    word = " ".join(surface.split())
    accents_known = not (word.isupper() and word == fold_key(word).upper())
    if is_common_word(unicodedata.normalize("NFC", word.lower()), accents_known=accents_known):
        return COMMON_WORD
    return None
