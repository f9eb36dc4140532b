"""Entities cut by a sentence bound: which task's last entity goes on in the next sentence.

A campaign task is one sentence, and no annotation tool lets a span cross from one task to the next. An
entity written over two lines (``Dr Yann<br>KERBRAT``, a phone number broken by a line end) is one span of
the weak labeller (``spans.parquet``) but the segmenter may end a sentence at the line break, so the tasks
hold two pieces, and the gold read back would hold two entities where the note has one. The task of the
first sentence records, in ``meta.continues``, the label of the weak entity that crosses into the next
sentence; ``deid-ds gold`` joins the two pieces back when both are still there, with that label, at the
sentences' bounds (:mod:`deid_ds.agreement.gold`). Two entities that merely follow each other across a
line break (a list of names, one per line) are two weak spans, no ``continues``: never joined.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def continued_entities(sentences: Sequence[Mapping[str, Any]], spans: Iterable[tuple[int, int, str]]) -> dict[int, str]:
    """``sentence_index -> label`` for the sentences (of one document, in order) whose last entity goes on
    in the next sentence: a weak span ``(html_start, html_end, label)`` that overlaps the last token of a
    sentence and the first token of the next one (consecutive indices)."""
    bounds = []
    for sentence in sentences:
        tokens = sentence.get("tokens") or []
        index = (sentence.get("meta") or {}).get("sentence_index")
        if tokens and isinstance(index, int):
            bounds.append((index, tokens[0].get("html_start"), tokens[-1].get("html_end")))
    crossing: dict[int, str] = {}
    spans = sorted(spans)
    for (index, _, last_end), (next_index, next_start, _) in itertools.pairwise(bounds):
        if next_index != index + 1 or last_end is None or next_start is None:
            continue
        for start, end, label in spans:
            if start < last_end and end > next_start:
                crossing[index] = label
                break
    return crossing
