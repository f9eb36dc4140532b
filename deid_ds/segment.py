"""Sentences and tokens of a note, with offsets in the text and in the HTML.

Sentence splitting is NLTK Punkt (see :mod:`deid_ds.punkt`) made aware of the layout the HTML parser
preserved. Clinical notes are full of lines that are not sentences — letterhead lines, identity blocks,
signatures, table rows — and Punkt, which only looks at periods, would glue them to the next paragraph.
So the text is first cut into *blocks* at line breaks, and Punkt runs inside each block:

* a blank line (two newlines: a paragraph or block element) always ends a block;
* a single newline ends a block too, unless the next line starts with a lower-case letter, which is a
  line wrapped in the middle of a sentence (``Le patient a été\\nhospitalisé le...``);
* table cells (``\\t``) stay in one block: a row is read as one line.

Very long "sentences" (a flattened table, a note with no punctuation) are cut into pieces of at most
``max_tokens`` tokens, preferably after a ``;``, ``,``, ``:`` or a cell separator, because a sequence
tagger's memory grows with sentence length and the paper notes that poor splitting hurts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

from deid_ds.html_text import ParsedHtml, html_to_text
from deid_ds.model import Sentence, Token
from deid_ds.punkt import sentence_splitter
from deid_ds.tokens import tokenize

from deid_ds.defaults import DEFAULT_MAX_TOKENS  # noqa: E402 - re-exported
_SOFT_BREAK_TOKENS = frozenset({";", ",", ":"})
SPACES = frozenset(" \t\n\r\f\v\xa0\u202f\u2009\u2007\u2002\u2003\u3000")
_SENTENCE_END = re.compile(r"[.?!\u2026]\W*\s")


@dataclass(frozen=True)
class SegmentedNote:
    """A parsed note and its sentences."""

    parsed: ParsedHtml
    sentences: list[Sentence]

    @property
    def text(self) -> str:
        return self.parsed.text

    @property
    def tokens(self) -> list[Token]:
        return [token for sentence in self.sentences for token in sentence.tokens]


def iter_blocks(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of the layout blocks of ``text`` (see the module docstring)."""
    n = len(text)
    block_start = None
    line_start = 0
    while line_start <= n:
        newline = text.find("\n", line_start)
        line_end = n if newline < 0 else newline
        line = text[line_start:line_end]
        stripped = line.strip()
        if stripped:
            if block_start is not None and not _continues(stripped, text, line_start):
                yield block_start, _rstrip_end(text, block_start, line_start)
                block_start = None
            if block_start is None:
                block_start = line_start + (len(line) - len(line.lstrip()))
        elif block_start is not None:
            yield block_start, _rstrip_end(text, block_start, line_start)
            block_start = None
        if newline < 0:
            break
        line_start = newline + 1
    if block_start is not None:
        yield block_start, _rstrip_end(text, block_start, n)


def _continues(stripped_line: str, text: str, line_start: int) -> bool:
    """A non-blank line continues the open block when it starts lower-case after a single newline."""
    return stripped_line[0].islower() and line_start >= 2 and text[line_start - 2] != "\n"


def _rstrip_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


@dataclass(frozen=True)
class TokenSpans:
    """A note's segmentation in compact form: token offsets in the text, grouped into sentences.

    ``bounds[k]:bounds[k + 1]`` are the indices of the tokens of sentence ``k``. Writers that turn a
    whole batch into Arrow columns use this directly, without building a Python object per token.
    """

    bounds: list[int]
    starts: list[int]
    ends: list[int]

    def __len__(self) -> int:
        return len(self.bounds) - 1


class Segmenter:
    """Splits parsed notes into sentences and tokens. Build once, reuse for every note."""

    def __init__(
        self, parameters: PunktParameters | None = None, *, max_tokens: int = DEFAULT_MAX_TOKENS
    ) -> None:
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        self._splitter: PunktSentenceTokenizer = sentence_splitter(parameters)
        self.max_tokens = max_tokens

    def sentence_spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Text ``(start, end)`` of each sentence, before tokenisation and length capping."""
        for block_start, block_end in iter_blocks(text):
            block = text[block_start:block_end]
            if not _SENTENCE_END.search(block):
                yield block_start, block_end  # Punkt only splits after . ? ! or …: nothing to do
                continue
            for start, end in self._splitter.span_tokenize(block):
                yield block_start + start, block_start + end

    def token_spans(self, text: str) -> TokenSpans:
        """The segmentation of ``text`` in compact form (no per-token objects)."""
        starts: list[int] = []
        ends: list[int] = []
        bounds = [0]
        for sentence_start, sentence_end in self.sentence_spans(text):
            spans = tokenize(text, sentence_start, sentence_end)
            for chunk in _chunks(text, spans, self.max_tokens):
                chunk_starts, chunk_ends = zip(*chunk)
                starts.extend(chunk_starts)
                ends.extend(chunk_ends)
                bounds.append(len(starts))
        return TokenSpans(bounds, starts, ends)

    def segment(self, parsed: ParsedHtml) -> SegmentedNote:
        """Sentences and tokens of a parsed note, as :class:`Sentence` and :class:`Token` objects."""
        text = parsed.text
        html_starts, html_ends = parsed.offsets.starts, parsed.offsets.ends
        compact = self.token_spans(text)
        n = len(text)
        all_tokens = [
            Token(text[s:e], s, e, html_starts[s], html_ends[e - 1], e >= n or text[e] in SPACES)
            for s, e in zip(compact.starts, compact.ends)
        ]
        sentences = []
        for index, (first_index, end_index) in enumerate(zip(compact.bounds, compact.bounds[1:])):
            tokens = all_tokens[first_index:end_index]
            first, last = tokens[0], tokens[-1]
            sentences.append(
                Sentence(
                    index=index,
                    text=text[first.start : last.end],
                    start=first.start,
                    end=last.end,
                    html_start=first.html_start,
                    html_end=last.html_end,
                    tokens=tokens,
                )
            )
        return SegmentedNote(parsed, sentences)

    def segment_html(self, html: str | bytes) -> SegmentedNote:
        return self.segment(html_to_text(html))


def _chunks(text: str, spans: list[tuple[int, int]], max_tokens: int) -> Iterator[list[tuple[int, int]]]:
    """Cut a sentence's token spans into pieces of at most ``max_tokens`` (see module docstring)."""
    while len(spans) > max_tokens:
        cut = max_tokens
        for i in range(max_tokens, max(max_tokens - max_tokens // 4, 1) - 1, -1):
            s, e = spans[i - 1]
            gap = text[e : spans[i][0]] if i < len(spans) else ""
            if text[s:e] in _SOFT_BREAK_TOKENS or "\t" in gap or "\n" in gap:
                cut = i
                break
        yield spans[:cut]
        spans = spans[cut:]
    if spans:
        yield spans


_DEFAULT: Segmenter | None = None


def default_segmenter() -> Segmenter:
    """A process-wide segmenter with the shipped parameters (built on first use)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Segmenter()
    return _DEFAULT


def segment_html(html: str | bytes) -> SegmentedNote:
    """Parse and segment one HTML note with the default segmenter."""
    return default_segmenter().segment_html(html)
