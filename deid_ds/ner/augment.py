"""Training-time augmentation (``deid-ds train --augment RATE``): a share of the training sentences perturbed
with the noise of scans and bad exports (:mod:`deid_ds.synth.perturb`), their BIO tags carried along.

A sentence of a Flair column file (``token [FEATURES] TAG`` per line) is written as one text, its tokens
joined by single spaces and its entities as character spans; the text is perturbed with the spans mapped
exactly, then cut again on whitespace. Each new token takes:

* its **tag** from the span it lies in: ``B-`` for the first token of an entity, ``I-`` for the next ones,
  ``O`` outside. A token cut in two by an inserted space or a line-end hyphen (``Ker-`` / ``draon``)
  gives ``B-`` then ``I-`` (or ``I-``, ``I-`` when it was inside); two tokens merged by a lost space
  take the first one's tag, and only words of the same entity or two words outside entities merge: the
  space at an entity's edge is never lost, so no token ever straddles an entity boundary;
* its **middle columns** (the knowledge features) from the original token its first character comes from:
  a perturbed token keeps the features of the word it was (not recomputed: they describe the word as the
  knowledge base and the metadata know it, which a scanning error does not change); a merged token keeps
  the first word's.

A punctuation token dropped by the perturbation disappears with its line. Dev and test are never augmented.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from deid_ds.synth.perturb import OffsetMapper, Rates, apply_edits, plan_edits, rates_for


@dataclass(frozen=True)
class AugmentConfig:
    """``--augment RATE`` (share of training sentences perturbed) at ``--augment-level`` (1-3)."""

    rate: float = 0.0
    level: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError("the augmentation rate is a share, between 0 and 1")
        rates_for(self.level)  # an unknown level says so


def entity_spans(tags: Sequence[str], starts: Sequence[int], ends: Sequence[int]) -> list[tuple[int, int, str]]:
    """Character spans of the BIO entities of a sentence whose tokens lie at ``starts``/``ends``
    (an ``I-`` after another label or after ``O`` opens an entity, as Flair reads it)."""
    spans: list[tuple[int, int, str]] = []
    current: list = []
    for tag, start, end in zip(tags, starts, ends, strict=True):
        if tag == "O":
            current = []
            continue
        prefix, _, label = tag.partition("-")
        if prefix == "I" and current and current[2] == label:
            current[1] = end
            spans[-1] = (current[0], end, label)
        else:
            current = [start, end, label]
            spans.append((start, end, label))
    return spans


def perturb_sentence(rows: Sequence[Sequence[str]], level: int | Rates, rng: random.Random) -> list[list[str]]:
    """A sentence's rows (``[token, *features, tag]``) perturbed at ``level`` (1-3, or explicit rates), tags and
    features carried along by the rules of the module docstring. Returns the rows unchanged when nothing would
    be left."""
    tokens = [row[0] for row in rows]
    starts, ends, position = [], [], 0
    for token in tokens:
        starts.append(position)
        ends.append(position + len(token))
        position += len(token) + 1
    text = " ".join(tokens)
    spans = entity_spans([row[-1] for row in rows], starts, ends)
    rates = level if isinstance(level, Rates) else rates_for(level)
    edits = plan_edits(text, [(s, e) for s, e, _ in spans], rates, rng)
    new_text, mapped = apply_edits(text, edits), OffsetMapper(edits)
    new_spans = [(mapped(s), mapped(e), label) for s, e, label in spans]
    new_starts = [mapped(start) for start in starts]  # a token start never has an insertion
    out: list[list[str]] = []
    span_index = 0
    word_start = None
    for index, char in enumerate(new_text + " "):
        if not char.isspace():
            if word_start is None:
                word_start = index
            continue
        if word_start is None:
            continue
        start, word_start = word_start, None
        while span_index < len(new_spans) and new_spans[span_index][1] <= start:
            span_index += 1
        tag = "O"
        if span_index < len(new_spans) and new_spans[span_index][0] <= start:
            span_start, _, label = new_spans[span_index]
            tag = f"{'B' if start == span_start else 'I'}-{label}"
        origin = max(0, _last_at_or_before(new_starts, start))
        out.append([new_text[start:index], *rows[origin][1:-1], tag])
    return out if out else [list(row) for row in rows]


def _last_at_or_before(values: Sequence[int], position: int) -> int:
    """Index of the last value <= ``position`` in the sorted ``values`` (-1 when none)."""
    return bisect_right(values, position) - 1


def _sentences(path: Path) -> Iterator[list[list[str]]]:
    sentence: list[list[str]] = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            parts = line.split()
            if parts:
                sentence.append(parts)
            elif sentence:
                yield sentence
                sentence = []
    if sentence:
        yield sentence


def augment_file(source: Path, target: Path, config: AugmentConfig) -> dict:
    """Write ``source``'s sentences to ``target``, a seeded share ``config.rate`` of them perturbed; return
    what the model card records (settings and how many sentences were perturbed)."""
    rng = random.Random(f"augment-{config.seed}")
    total = perturbed = 0
    with target.open("w", encoding="utf-8") as out:
        for rows in _sentences(source):
            total += 1
            if rng.random() < config.rate:
                rows = perturb_sentence(rows, config.level, rng)
                perturbed += 1
            out.write("".join(" ".join(row) + "\n" for row in rows) + "\n")
    return {"rate": config.rate, "level": config.level, "seed": config.seed, "sentences": total, "perturbed": perturbed}
