"""Answers grouped by item, on one common tokenisation: what agreement and gold merging both start from.

An *item* is what an annotator was shown (a sentence). Its answers are grouped by
:attr:`~deid_ds.agreement.model.Annotation.item_key`; when one annotator answered the same item more
than once (an answer revised in a later session), the latest one is kept and the duplicate counted.
Answers of one item whose texts differ cannot be compared token by token: the item is left out and
counted.

Tokens: the answer's own tokens when one of the answers carries them (the Prodigy tasks of
``weak-label``), else the text tokenised with :func:`deid_ds.segmentation.tokens.tokenize`, the project tokenizer, so
that a doccano or Label Studio export of the same tasks is compared on the same tokens. A token takes the
label of the span that overlaps it by at least one character (spans of these tools are character
ranges, and a selection that cuts a word still says the word is an entity); where two spans of one
answer overlap the same token with different labels (doccano and Label Studio allow it), the span that
starts first (then the longer) wins and the conflict is counted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from deid_ds.agreement.model import Annotation, ReadReport, Span
from deid_ds.model import LABELS
from deid_ds.segmentation.tokens import tokenize

OUTSIDE = "O"


@dataclass
class Item:
    """One item and its answers, one per annotator (sorted by annotator name)."""

    key: str
    text: str
    answers: dict[str, Annotation]
    tokens: list[tuple[int, int]]
    html: list[tuple[int, int]] | None

    @property
    def first(self) -> Annotation:
        return next(iter(self.answers.values()))

    @property
    def document(self) -> str:
        return self.first.document

    @property
    def doc_type(self) -> str | None:
        return next((a.doc_type for a in self.answers.values() if a.doc_type is not None), None)

    @property
    def primary(self) -> str | None:
        """The annotator the campaign assigned the item to, when the answers say so."""
        return next((a.primary for a in self.answers.values() if a.primary is not None), None)


def group_items(annotations: Iterable[Annotation], report: ReadReport) -> list[Item]:
    """Items in a stable order (document, sentence index, key), duplicates and text conflicts counted."""
    by_key: dict[str, dict[str, Annotation]] = defaultdict(dict)
    for annotation in annotations:
        answers = by_key[annotation.item_key]
        previous = answers.get(annotation.annotator)
        if previous is not None:
            report.skip("duplicate answer of one annotator on one item (latest kept)")
            if previous.order > annotation.order:
                continue
        answers[annotation.annotator] = annotation
    items = []
    for key, answers in by_key.items():
        ordered = {name: answers[name] for name in sorted(answers)}
        texts = {a.text for a in ordered.values()}
        if len(texts) > 1:
            report.skip("item whose answers have different texts (left out)")
            continue
        text = texts.pop()
        with_tokens = next((a for a in ordered.values() if a.tokens is not None), None)
        if with_tokens is not None:
            tokens, html = with_tokens.tokens, with_tokens.html
        else:
            tokens, html = tokenize(text), None
        if html is None:
            html = next((a.html for a in ordered.values() if a.html is not None and a.tokens == tokens), None)
        items.append(Item(key, text, ordered, tokens, html))
    items.sort(
        key=lambda item: (
            item.first.id_document or "",
            item.first.sentence_index if item.first.sentence_index is not None else -1,
            item.key,
        )
    )
    return items


def token_labels(
    spans: Sequence[Span], starts: np.ndarray, ends: np.ndarray, report: ReadReport | None = None
) -> list[str]:
    """The label of each token (``O`` outside every span), by the overlap rule of the module docstring."""
    labels = [OUTSIDE] * len(starts)
    for span in sorted(spans, key=lambda s: (s.start, -s.end, s.label)):
        hit = np.flatnonzero((starts < span.end) & (ends > span.start))
        for t in hit.tolist():
            if labels[t] == OUTSIDE:
                labels[t] = span.label
            elif labels[t] != span.label and report is not None:
                report.skip("token covered by spans of different labels in one answer (first kept)")
    return labels


def token_span_ids(spans: Sequence[Span], starts: np.ndarray, ends: np.ndarray) -> list[int]:
    """For each token, the index (in start order) of the span that labels it, or -1: tells adjacent
    entities of one label apart when spans are rebuilt from tokens."""
    ids = [-1] * len(starts)
    for k, span in enumerate(sorted(spans, key=lambda s: (s.start, -s.end, s.label))):
        for t in np.flatnonzero((starts < span.end) & (ends > span.start)).tolist():
            if ids[t] < 0:
                ids[t] = k
    return ids


def label_order(labels: Iterable[str]) -> list[str]:
    """Entity labels in report order: the eight of the study first, then any other, sorted."""
    found = set(labels) - {OUTSIDE}
    return [label for label in LABELS if label in found] + sorted(found - set(LABELS))
