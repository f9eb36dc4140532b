"""Error examples for the HTML report: a few false positives and false negatives per system and label.

Scores say how often a system errs; examples say *how*: a boundary cut short, a wrong label, a
common word taken for a name. By the exact-match rule of :mod:`deid_ds.evaluation.scoring`, a false
positive is a predicted span no gold span matches exactly (document, label and offsets), a false
negative a gold span no prediction matches. Each example says what it overlaps on the other side, so
a reader tells a boundary or label error (``overlaps gold VILLE``) from a pure miss or invention.

The choice is a seeded sample, spread over the documents, of at most ``per_label`` examples per
system, label and kind: bounded whatever the corpus size, and the same for the same inputs. The
context (some characters of the note's text around the entity) is added by :func:`add_context` from
the notes, so this module holds no note text until then.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

_BLANKS = re.compile(r"\s+")
FALSE_POSITIVE = "false positive"
FALSE_NEGATIVE = "false negative"


@dataclass(frozen=True)
class ErrorExample:
    """One error of one system; ``before``/``entity``/``after`` are filled by :func:`add_context`."""

    kind: str  # FALSE_POSITIVE or FALSE_NEGATIVE
    id_document: str
    label: str
    html_start: int
    html_end: int
    overlaps: str = ""  # e.g. "gold VILLE 50-56" for a prediction overlapping a gold span of another extent
    before: str | None = None
    entity: str | None = None
    after: str | None = None


def _unique(frame: pd.DataFrame, documents: set[str]) -> pd.DataFrame:
    key = ["id_document", "label", "html_start", "html_end"]
    frame = frame[frame["id_document"].isin(documents)][key].drop_duplicates(ignore_index=True)
    return frame.astype({"html_start": "int64", "html_end": "int64"})


def _unmatched(left: pd.DataFrame, right: pd.DataFrame) -> pd.DataFrame:
    key = ["id_document", "label", "html_start", "html_end"]
    merged = left.merge(right[key].assign(_hit=True), on=key, how="left")
    return left[merged["_hit"].isna().to_numpy()].reset_index(drop=True)


def _overlap_text(row, other: pd.DataFrame, side: str) -> str:
    same = other[
        (other["id_document"] == row.id_document)
        & (other["html_start"] < row.html_end)
        & (other["html_end"] > row.html_start)
    ]
    return "; ".join(f"{side} {r.label} {r.html_start}-{r.html_end}" for r in same.itertuples(index=False))


def _sample(frame: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """At most ``n`` rows, at most one per document first (spread), in document order."""
    frame = frame.sort_values(["id_document", "html_start", "html_end"], ignore_index=True)
    if len(frame) <= n:
        return frame
    order = rng.permutation(len(frame))
    shuffled = frame.iloc[order]
    first = shuffled.drop_duplicates("id_document")
    chosen = pd.concat([first, shuffled.drop(first.index)]).head(n)
    return chosen.sort_values(["id_document", "html_start", "html_end"], ignore_index=True)


def error_examples(
    gold: pd.DataFrame,
    systems: Mapping[str, pd.DataFrame],
    documents: list[str],
    *,
    per_label: int = 3,
    seed: int = 0,
) -> dict[str, list[ErrorExample]]:
    """For each system, at most ``per_label`` false positives and as many false negatives per label.

    ``gold`` and each system's frame have ``id_document`` (strings, as :func:`deid_ds.evaluation.read_spans`
    makes them), ``label``, ``html_start``, ``html_end``; only ``documents`` are looked at.
    """
    wanted = set(documents)
    gold_u = _unique(gold, wanted)
    out: dict[str, list[ErrorExample]] = {}
    for name, frame in systems.items():
        rng = np.random.default_rng(seed)
        pred_u = _unique(frame, wanted)
        found: list[ErrorExample] = []
        for kind, errors, other, side in (
            (FALSE_POSITIVE, _unmatched(pred_u, gold_u), gold_u, "gold"),
            (FALSE_NEGATIVE, _unmatched(gold_u, pred_u), pred_u, "predicted"),
        ):
            for label in sorted(errors["label"].unique()):
                for row in _sample(errors[errors["label"] == label], per_label, rng).itertuples(index=False):
                    found.append(
                        ErrorExample(
                            kind,
                            str(row.id_document),
                            str(row.label),
                            int(row.html_start),
                            int(row.html_end),
                            _overlap_text(row, other, side),
                        )
                    )
        out[name] = found
    return out


def add_context(
    examples: Mapping[str, list[ErrorExample]], notes_html: Mapping[str, str | bytes], width: int = 60
) -> dict[str, list[ErrorExample]]:
    """The examples with ``width`` characters of the note's text on each side of the entity.

    The context is the note's extracted text (:func:`deid_ds.segmentation.html_text.html_to_text`), as the
    labeller and the model read it, not its markup. An example whose note is not in ``notes_html`` keeps
    no context.
    """
    from deid_ds.segmentation.html_text import html_to_text

    parsed_cache: dict[str, object] = {}
    out: dict[str, list[ErrorExample]] = {}
    for name, items in examples.items():
        done = []
        for example in items:
            source = notes_html.get(example.id_document)
            if not isinstance(source, (str, bytes)):  # no note, or no HTML in it: no context
                done.append(example)
                continue
            if example.id_document not in parsed_cache:
                parsed_cache[example.id_document] = html_to_text(source)
            parsed = parsed_cache[example.id_document]
            start, end = parsed.text_span(example.html_start, example.html_end)
            text = parsed.text
            before = text[max(0, start - width) : start]
            after = text[end : end + width]
            done.append(
                replace(
                    example,
                    before=("…" if start > width else "") + _one_line(before),
                    entity=_one_line(text[start:end]),
                    after=_one_line(after) + ("…" if end + width < len(text) else ""),
                )
            )
        out[name] = done
    return out


def _one_line(text: str) -> str:
    """Line breaks and tabs as single spaces: a context fits a table cell."""
    return _BLANKS.sub(" ", text)
