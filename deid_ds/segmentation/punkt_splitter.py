"""Punkt sentence splitting (inference only), without NLTK.

Punkt (Kiss & Strunk, 2006, *Unsupervised Multilingual Sentence Boundary Detection*) decides, for each
``.``, ``?``, ``!`` or ``…`` followed by a space or a closing mark, whether it ends a sentence, from the
token before it, the token after it and four learned tables (:class:`PunktParameters`). NLTK implements
both the training and the splitting; the project trains with NLTK (``deid-ds punkt-train``,
:mod:`deid_ds.segmentation.punkt_training`) but splits here, because importing ``nltk.tokenize.punkt``
runs NLTK's package ``__init__``, which imports all of NLTK and scipy: ~1 s of CPU in every process that
segments a note, against ~0.03 s for this module and the shipped parameters. The decisions are those of
NLTK's ``PunktSentenceTokenizer`` with the project's French settings (the ellipsis character ends a
sentence, hyphenated initials such as ``J.-P.`` are initials), down to its quirks:
``tests/segmentation/test_punkt_splitter.py`` checks that both give the same spans on the sample,
generated corpora and random texts with random parameters.

How a text is split (:meth:`PunktSplitter.span_tokenize`):

1. every candidate end (a sentence-end character followed by whitespace and a token, or by a closing
   mark) is found with the word before it, which gives a short *context* (``"mg. Le"``);
2. the context is cut into Punkt word tokens and each token gets the *type-based* decision (paper §3):
   a lone ``.``/``?``/``!``/``…`` ends a sentence, ``..``+ is an ellipsis, a word ending in a period is
   an abbreviation when its type (or the part after its last hyphen) is a known abbreviation, else it
   ends a sentence;
3. the *token-based* decision (§4) then revises a token ending in a period from the token after it:
   the collocation heuristic, the orthographic heuristic (how the next word's case was seen at the
   start and in the middle of sentences) and the frequent sentence starters;
4. the candidate is a boundary when any token of the context but the last ends a sentence; closing
   quotes and brackets after a boundary are moved into the sentence they close.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise

#: Characters that may end a sentence (NLTK's three and the French ellipsis).
SENTENCE_END_CHARS = ".?!\u2026"
_SENTENCE_ENDS = frozenset(SENTENCE_END_CHARS)

# Orthographic contexts of a word type, as bit flags (the values NLTK stores in ``ortho_context``):
# upper or lower case, seen at the beginning of a sentence, in its middle, or at an unknown position.
ORTHO_BEG_UC, ORTHO_MID_UC, ORTHO_UNK_UC = 1 << 1, 1 << 2, 1 << 3
ORTHO_BEG_LC, ORTHO_MID_LC, ORTHO_UNK_LC = 1 << 4, 1 << 5, 1 << 6
ORTHO_UC = ORTHO_BEG_UC | ORTHO_MID_UC | ORTHO_UNK_UC
ORTHO_LC = ORTHO_BEG_LC | ORTHO_MID_LC | ORTHO_UNK_LC

NUMBER_TYPE = "##number##"

# Brackets, quotes and punctuation that end a word token and may directly follow a sentence end.
_NON_WORD = "[" + re.escape(")\";}]*:@'({[\u2018\u2019\u201c\u201d\xab\xbb" + SENTENCE_END_CHARS.replace(".", "")) + "]"
# Runs of hyphens, of periods, and spaced ellipses (". . .") are one token each.
_MULTI_CHAR = r"(?:-{2,}|\.{2,}|(?:\.\s){2,}\.)"
# A word token never starts with one of these (they are tokens of their own).
_WORD_START = r"[^(\"`{\[:;&#*@)}\]\-,]"
# A Punkt word token: a multi-character mark, or the shortest run of non-spaces up to a space, a
# non-word mark or a comma that ends the word, or any other single character. Periods stay attached.
_WORD = re.compile(
    rf"{_MULTI_CHAR}"
    rf"|(?={_WORD_START})\S+?(?=\s|$|{_NON_WORD}|{_MULTI_CHAR}|,(?=$|\s|{_NON_WORD}|{_MULTI_CHAR}))"
    r"|\S"
)
# A candidate sentence end, with what follows it: a non-word mark, or whitespace and the next token.
_CANDIDATE = re.compile(
    rf"[{re.escape(SENTENCE_END_CHARS)}](?=(?P<after>{_NON_WORD}|\s+(?P<next_token>\S+)))",
)
# Closing marks at the start of a sentence that belong to the sentence before it: "(Vu.) Puis" -> "(Vu.)".
_CLOSING_MARKS = re.compile(r"[\"')\]}\u2018\u2019\u201c\u201d\xab\xbb]+?(?:\s+|(?=--)|$)", re.MULTILINE)
_NUMBER = re.compile(r"-?[.,]?\d[\d,.-]*\.?")
_ELLIPSIS = re.compile(r"\.\.+")
# An initial ("J.") or French hyphenated initials ("J.-P.", "A.-M."), which stand before a last name.
_INITIAL = re.compile(r"(?:[^\W\d]\.-)*[^\W\d]\.")
# Tokens that never start a sentence (the orthographic heuristic says "no" at once).
_PUNCTUATION = frozenset(";:,.!?")
# The whitespace NLTK looks for when it seeks the start of the word before a candidate end (ASCII only).
_ASCII_WHITESPACE = frozenset(" \t\n\r\x0b\x0c")


@dataclass
class PunktParameters:
    """What Punkt learned from a corpus: the tables that decide the boundaries.

    Same attributes as NLTK's ``PunktParameters`` (so either can be given to :class:`PunktSplitter`).
    """

    #: word types (lower case, no final period) that are abbreviations: "dr", "mme", "cf"
    abbrev_types: set[str] = field(default_factory=set)
    #: (type before the period, type after) pairs that do not straddle a boundary: ("s", "bach")
    collocations: set[tuple[str, str]] = field(default_factory=set)
    #: word types that often start a sentence
    sent_starters: set[str] = field(default_factory=set)
    #: word type -> the ORTHO_* flags of the contexts it was seen in
    ortho_context: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Token:
    """A Punkt word token with its type-based decision (step 2 of the module docstring)."""

    text: str
    type: str  # lower case, a number as NUMBER_TYPE
    sentbreak: bool
    abbr: bool
    ellipsis: bool

    @property
    def type_no_period(self) -> str:
        return self.type[:-1] if len(self.type) > 1 and self.type[-1] == "." else self.type

    @property
    def type_no_sentperiod(self) -> str:
        """The type without the period that ends the sentence, if it does."""
        return self.type_no_period if self.sentbreak else self.type


def word_tokens(text: str) -> list[str]:
    """Punkt's word tokens of ``text``, line by line (a token never spans a line break)."""
    return [token for line in text.split("\n") for token in _WORD.findall(line)]


class PunktSplitter:
    """Splits text into sentences with Punkt parameters. Build once, reuse for every text.

    Each candidate boundary is decided from its short context (``"mg. Le"``) and the fixed parameters: a
    pure function of that string. Clinical notes repeat the same contexts endlessly, so a bounded cache
    of decisions makes splitting much cheaper without changing a single result.
    """

    def __init__(self, parameters: PunktParameters, *, cache_size: int = 1 << 16) -> None:
        self.parameters = parameters
        self._abbreviations = frozenset(parameters.abbrev_types)
        self._collocations = frozenset(parameters.collocations)
        self._sent_starters = frozenset(parameters.sent_starters)
        self._ortho_context = dict(parameters.ortho_context)
        self.context_has_boundary = lru_cache(maxsize=cache_size)(self._context_has_boundary)

    def tokenize(self, text: str) -> list[str]:
        """The sentences of ``text``."""
        return [text[start:end] for start, end in self.span_tokenize(text)]

    def span_tokenize(self, text: str) -> Iterator[tuple[int, int]]:
        """``(start, end)`` of each sentence of ``text``."""
        return _realign(text, self._sentence_slices(text))

    def _sentence_slices(self, text: str) -> Iterator[tuple[int, int]]:
        last_break = 0
        for match, context in _candidates(text):
            if self.context_has_boundary(context):
                yield last_break, match.end()
                # The next sentence starts at the next token, or at the mark that follows the period.
                last_break = match.start("next_token") if match.group("next_token") else match.end()
        yield last_break, len(text.rstrip())  # the last sentence has no trailing whitespace

    def _context_has_boundary(self, context: str) -> bool:
        """Whether a token of ``context``, other than its last, ends a sentence (step 4)."""
        tokens = [self._type_based(token) for token in word_tokens(context)]
        return any(self._ends_sentence(token, after) for token, after in pairwise(tokens))

    def _type_based(self, text: str) -> _Token:
        """A token and its type-based decision (paper §3; step 2 of the module docstring)."""
        lowered = text.lower()
        type_ = NUMBER_TYPE if _NUMBER.fullmatch(lowered) else lowered
        sentbreak = abbr = ellipsis = False
        if text in _SENTENCE_ENDS:
            sentbreak = True
        elif _ELLIPSIS.fullmatch(text):
            ellipsis = True
        elif text.endswith(".") and not text.endswith(".."):
            word = lowered[:-1]
            if word in self._abbreviations or word.split("-")[-1] in self._abbreviations:
                abbr = True
            else:
                sentbreak = True
        return _Token(text, type_, sentbreak, abbr, ellipsis)

    def _ends_sentence(self, token: _Token, after: _Token) -> bool:
        """The token-based decision for ``token`` followed by ``after`` (paper §4; step 3)."""
        if not token.text.endswith("."):
            return token.sentbreak
        type_, next_type = token.type_no_period, after.type_no_sentperiod
        initial = _INITIAL.fullmatch(token.text) is not None
        if (type_, next_type) in self._collocations:  # §4.1.2: a known collocation is not a boundary
            return False
        if (token.abbr or token.ellipsis) and not initial:
            # §4.2: an abbreviation or ellipsis also ends the sentence when the next word starts one.
            if self._starts_sentence(after, next_type) is True:
                return True
            if after.text[0].isupper() and next_type in self._sent_starters:  # §4.1.3
                return True
        if initial or type_ == NUMBER_TYPE:
            # §4.3: an initial or an ordinal is not a boundary when the next word does not start a sentence.
            starts = self._starts_sentence(after, next_type)
            if starts is False:
                return False
            # ... nor an initial before a capitalised word never seen in lower case ("J. Bach").
            if (
                starts is None
                and initial
                and after.text[0].isupper()
                and not self._ortho_context.get(next_type, 0) & ORTHO_LC
            ):
                return False
        return token.sentbreak

    def _starts_sentence(self, token: _Token, type_: str) -> bool | None:
        """The orthographic heuristic (§4.1.1): does ``token`` start a sentence? ``None``: unknown."""
        if token.text in _PUNCTUATION:
            return False
        context = self._ortho_context.get(type_, 0)
        first = token.text[0]
        # Capitalised here, seen in lower case, never capitalised inside a sentence: it starts one.
        if first.isupper() and context & ORTHO_LC and not context & ORTHO_MID_UC:
            return True
        # Lower case here, and seen capitalised or never seen starting a sentence in lower case: it does not.
        if first.islower() and (context & ORTHO_UC or not context & ORTHO_BEG_LC):
            return False
        return None


def _candidates(text: str) -> Iterator[tuple[re.Match[str], str]]:
    """Each candidate end of ``text`` with its context: the word before it, the end and what follows.

    The word before a candidate starts after the last ASCII whitespace since the previous candidate's
    word, or, when there is none, where the previous candidate's word started; a candidate whose word
    overlaps the next candidate's is dropped in favour of the next ("bien!!! Le": only the last "!").
    """
    previous: re.Match[str] | None = None
    previous_start = previous_end = 0  # the word before the previous candidate
    for match in _CANDIDATE.finditer(text):
        word_start = _after_last_space(text, previous_end, match.start()) or previous_start
        if previous is not None and previous_end <= word_start:
            yield previous, text[previous_start:previous_end] + previous.group() + previous.group("after")
        previous, previous_start, previous_end = match, word_start, match.start()
    if previous is not None:
        yield previous, text[previous_start:previous_end] + previous.group() + previous.group("after")


def _after_last_space(text: str, start: int, end: int) -> int:
    """The position after the last ASCII whitespace of ``text[start + 1:end]``; 0 when there is none.

    (NLTK reads a whitespace at ``start`` itself as "none": kept, since the contexts depend on it.)
    """
    for position in range(end - 1, start, -1):
        if text[position] in _ASCII_WHITESPACE:
            return position + 1
    return 0


def _realign(text: str, slices: Iterator[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Move the closing marks that start a sentence to the end of the one before; drop empty sentences."""
    shift = 0
    pending: tuple[int, int] | None = None
    for following in slices:
        if pending is not None:
            start, end = pending[0] + shift, pending[1]
            closing = _CLOSING_MARKS.match(text, following[0], following[1])
            if closing:
                yield start, following[0] + len(closing.group().rstrip())
                shift = closing.end() - following[0]
            else:
                shift = 0
                if start < end:
                    yield start, end
        pending = following
    if pending is not None and pending[0] + shift < pending[1]:
        yield pending[0] + shift, pending[1]
