"""Sentences and tokens of a note, with offsets in the text and in the HTML.

Sentence splitting is Punkt (see :mod:`deid_ds.segmentation.punkt`) made aware of the layout the HTML parser
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
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass

from deid_ds.defaults import DEFAULT_MAX_TOKENS
from deid_ds.model import Sentence, Token
from deid_ds.segmentation.html_text import ParsedHtml, html_to_text
from deid_ds.segmentation.punkt import sentence_splitter
from deid_ds.segmentation.punkt_splitter import PunktParameters, PunktSplitter
from deid_ds.segmentation.tokens import fixup_positions, tokenize, tokenize_with

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
    """``(start, end)`` of the layout blocks of ``text`` (see the module docstring).

    A block starts at the first non-blank character of its first line and ends after the last non-blank
    character of its last line (``str.strip`` whitespace). One pass over ``text.split("\n")``: a note
    has hundreds of short lines, so per-line work is kept to a strip and a comparison.
    """
    block_start = -1  # -1: no open block
    block_end = 0  # end of the right-stripped last non-blank line of the open block
    line_start = 0
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped:
            # A line continues the open block when it starts lower-case after a single newline.
            if block_start >= 0 and not (stripped[0].islower() and line_start >= 2 and text[line_start - 2] != "\n"):
                yield block_start, block_end
                block_start = -1
            if block_start < 0:
                block_start = line_start + len(line) - len(stripped)
            block_end = line_start + len(line.rstrip())
        elif block_start >= 0:
            yield block_start, block_end
            block_start = -1
        line_start += len(line) + 1
    if block_start >= 0:
        yield block_start, block_end


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

    def __init__(self, parameters: PunktParameters | None = None, *, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        self._splitter: PunktSplitter = sentence_splitter(parameters)
        self.max_tokens = max_tokens

    def sentence_spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Text ``(start, end)`` of each sentence, before tokenisation and length capping."""
        split = self._splitter.span_tokenize
        search = _SENTENCE_END.search
        for block_start, block_end in iter_blocks(text):
            if search(text, block_start, block_end) is None:
                yield block_start, block_end  # Punkt only splits after . ? ! or …: nothing to do
                continue
            for start, end in split(text[block_start:block_end]):
                yield block_start + start, block_start + end

    def token_spans(self, text: str) -> TokenSpans:
        """The segmentation of ``text`` in compact form (no per-token objects).

        The note is tokenised in one pass and its tokens are dealt out to the sentences: that is the
        same as tokenising each sentence on its own whenever every gap between two sentences holds
        whitespace, because no token contains whitespace and the look-arounds of the token pattern
        read whitespace after a sentence exactly as they read the end of a range (not a letter, digit
        or hyphen). A note where a gap has no whitespace (Punkt can cut after a bracket) is tokenised
        sentence by sentence, as before.
        """
        sentences = list(self.sentence_spans(text))
        if not sentences:
            return TokenSpans([0], [], [])
        if _gaps_hold_whitespace(text, sentences):
            spans = tokenize(text)
            return self._deal(text, spans, sentences)
        return self._per_sentence(text, sentences)

    def _deal(self, text: str, spans: list[tuple[int, int]], sentences: list[tuple[int, int]]) -> TokenSpans:
        """Group the note's token spans by sentence (cutting long sentences), in compact form."""
        starts = [s for s, _ in spans]
        ends = [e for _, e in spans]
        bounds = [0]
        max_tokens = self.max_tokens
        first = 0
        for _, sentence_end in sentences:
            # Tokens lie inside sentences (gaps are whitespace): the sentence's tokens are those that
            # start before its end.
            last = bisect_left(starts, sentence_end, first)
            if last - first > max_tokens:
                position = first
                for chunk in _chunks(text, spans[first:last], max_tokens):
                    position += len(chunk)
                    bounds.append(position)
            elif last > first:
                bounds.append(last)
            first = last
        return TokenSpans(bounds, starts, ends)

    def _per_sentence(self, text: str, sentences: list[tuple[int, int]]) -> TokenSpans:
        """Tokenise sentence by sentence (the general case; see :meth:`token_spans`)."""
        spans: list[tuple[int, int]] = []
        bounds = [0]
        max_tokens = self.max_tokens
        fixups = fixup_positions(text)
        for sentence_start, sentence_end in sentences:
            if fixups:
                first = bisect_left(fixups, sentence_start)
                sentence_fixups = fixups[first : bisect_left(fixups, sentence_end, first)]
            else:
                sentence_fixups = fixups
            sentence = tokenize_with(text, sentence_start, sentence_end, sentence_fixups)
            if len(sentence) <= max_tokens:
                if sentence:
                    spans += sentence
                    bounds.append(len(spans))
                continue
            for chunk in _chunks(text, sentence, max_tokens):
                spans += chunk
                bounds.append(len(spans))
        starts = [s for s, _ in spans]
        ends = [e for _, e in spans]
        return TokenSpans(bounds, starts, ends)

    def segment(self, parsed: ParsedHtml) -> SegmentedNote:
        """Sentences and tokens of a parsed note, as :class:`Sentence` and :class:`Token` objects."""
        text = parsed.text
        compact = self.token_spans(text)
        starts, ends = compact.starts, compact.ends
        char_html_starts, char_html_ends = parsed.offsets.starts, parsed.offsets.ends
        n = len(text)
        # Field by field, then one map(Token, ...): cheaper than a Token(...) call per listcomp step.
        texts = [text[s:e] for s, e in zip(starts, ends)]
        html_starts = [char_html_starts[s] for s in starts]
        html_ends = [char_html_ends[e - 1] for e in ends]
        ws = [e >= n or text[e] in SPACES for e in ends]
        all_tokens = list(map(Token, texts, starts, ends, html_starts, html_ends, ws))
        sentences = []
        bounds = compact.bounds
        for index in range(len(bounds) - 1):
            tokens = all_tokens[bounds[index] : bounds[index + 1]]
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


def _gaps_hold_whitespace(text: str, sentences: list[tuple[int, int]]) -> bool:
    """Whether the text before, between and after the sentences is whitespace, none of it empty between two."""
    previous_end = 0
    for index, (start, end) in enumerate(sentences):
        gap = text[previous_end:start]
        if gap.strip() or (index and not gap):
            return False
        previous_end = end
    return not text[previous_end:].strip()


def _chunks(text: str, spans: list[tuple[int, int]], max_tokens: int) -> Iterator[list[tuple[int, int]]]:
    """Cut a sentence's token spans into pieces of at most ``max_tokens`` (see module docstring).

    The pieces are cut from an index into ``spans``, not from copies of its rest: a sentence of a
    million tokens (a note of megabytes with no line break) is cut in time linear in its length.
    """
    first, n = 0, len(spans)
    while n - first > max_tokens:
        cut = max_tokens
        for i in range(max_tokens, max(max_tokens - max_tokens // 4, 1) - 1, -1):
            s, e = spans[first + i - 1]
            gap = text[e : spans[first + i][0]] if first + i < n else ""
            if text[s:e] in _SOFT_BREAK_TOKENS or "\t" in gap or "\n" in gap:
                cut = i
                break
        yield spans[first : first + cut]
        first += cut
    if first < n:
        yield spans[first:]


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
