"""Prodigy tasks of the correction campaign: built from weak-label sentences, and checked.

A task is one sentence, in the form ``deid-ds weak-label`` writes to ``sentences.jsonl`` (which is
already Prodigy's ``ner_manual`` format) with the campaign's assignment added to ``meta``:

* ``text``; ``tokens`` (``text``, ``start``, ``end``, ``id``, ``ws``, and our ``html_start``/``html_end``);
* ``spans``: the pre-annotations (``start``, ``end``, ``token_start``, ``token_end`` **inclusive**,
  ``label``, and the weak labeller's ``source``);
* ``tokens_parser``: the tokens' offsets in the original HTML (the paper's name);
* ``meta``: ``id_document``, ``id_patient``, ``doc_type``, ``sentence_index``, ``annotator`` (the primary
  annotator) and ``annotator2`` (the *list* of the other annotators of the document, empty outside the
  overlap; a list because with three or more annotators an overlap document has several).

The BIO ``tags`` and the ``split`` of the weak-label line are not carried: tags would contradict the
corrected spans of the saved answer, and every campaign document comes from the splits it was asked
for. Everything else is copied untouched, so that the answers read back like weak-label sentences.

:func:`task_problems` is the one consistency check, used when the tasks are written and by the
``deid.correct`` recipe's ``validate_answer`` on every submitted answer. Its messages give offsets,
indices and labels, never text (they can reach logs).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from deid_ds.model import LABELS
from deid_ds.segmentation.segmenter import SPACES

#: Keys of a weak-label sentence line that a task keeps (``tags`` and ``split`` are dropped).
TASK_KEYS: tuple[str, ...] = ("text", "tokens", "tokens_parser", "spans", "meta")
#: The ``meta`` keys a campaign task has, in this order.
META_KEYS: tuple[str, ...] = ("id_document", "id_patient", "doc_type", "sentence_index", "annotator", "annotator2")


class TaskError(ValueError):
    """A task or an answer is inconsistent. A ``ValueError``, so that Prodigy's ``validate_answer``
    shows its message to the annotator and refuses the submit."""


def build_task(
    sentence: Mapping[str, Any], annotator: str, others: Sequence[str], continues: str | None = None
) -> dict[str, Any]:
    """The campaign task of one weak-label sentence, assigned to ``annotator`` (primary) and ``others``.

    ``continues``: the label of the weak entity that goes on in the next sentence, kept as ``meta.continues``
    (only then: :mod:`~deid_ds.campaign.continuation`).

    The same sentence gets the same task object in every file it appears in (the overall file and each
    of its annotators' files), so Prodigy hashes it to the same input everywhere.
    """
    meta = dict(sentence.get("meta") or {})
    task_meta = {key: meta.get(key) for key in META_KEYS[:4]}
    task_meta["annotator"] = annotator
    task_meta["annotator2"] = list(others)
    if continues is not None:
        task_meta["continues"] = continues
    task: dict[str, Any] = {
        "text": sentence["text"],
        "tokens": [dict(token) for token in sentence["tokens"]],
        "tokens_parser": [dict(token) for token in (sentence.get("tokens_parser") or [])],
        "spans": [dict(span) for span in (sentence.get("spans") or [])],
        "meta": task_meta,
    }
    return task


def expected_ws(text: str, ends: Sequence[int]) -> list[bool]:
    """Prodigy's ``ws`` of each token: whether whitespace (or the end of the sentence) follows it."""
    n = len(text)
    return [end >= n or text[end] in SPACES for end in ends]


def task_problems(
    task: Mapping[str, Any], labels: Iterable[str] | None = LABELS, check_tokens: bool = True
) -> list[str]:
    """What is wrong with a task or an answer, as messages without note text (empty: consistent).

    Checks the tokens (ids ``0..n-1``, offsets inside the text and increasing, ``text[start:end]`` is the
    token, ``ws`` as the offsets say, one ``tokens_parser`` entry per token) when ``check_tokens``, and
    the spans always: offsets inside the text, known label, ``token_start``/``token_end`` (inclusive)
    inside the tokens and in order, span offsets equal to the tokens' boundaries, no two spans
    overlapping.
    """
    problems: list[str] = []
    text = task.get("text")
    tokens = task.get("tokens")
    if not isinstance(text, str):
        return ["the task has no text"]
    if not isinstance(tokens, list):
        return ["the task has no tokens"]
    if check_tokens:
        problems.extend(_token_problems(text, tokens, task.get("tokens_parser")))
    allowed = set(labels) if labels is not None else None
    ranges: list[tuple[int, int, int]] = []
    for index, span in enumerate(task.get("spans") or []):
        where = f"span {index + 1} ({span.get('label')}, characters {span.get('start')}-{span.get('end')})"
        start, end = span.get("start"), span.get("end")
        if allowed is not None and span.get("label") not in allowed:
            problems.append(f"{where}: unknown label; expected one of {', '.join(sorted(allowed))}")
        if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start < end <= len(text):
            problems.append(f"{where}: offsets outside the sentence or empty")
            continue
        token_start, token_end = span.get("token_start"), span.get("token_end")
        if (
            not isinstance(token_start, int)
            or not isinstance(token_end, int)
            or not 0 <= token_start <= token_end < len(tokens)
        ):
            problems.append(
                f"{where}: token_start/token_end ({token_start}-{token_end}) not tokens of the sentence "
                "(token_end is inclusive)"
            )
            continue
        if tokens[token_start].get("start") != start or tokens[token_end].get("end") != end:
            problems.append(
                f"{where}: not aligned to tokens {token_start}-{token_end} "
                f"(characters {tokens[token_start].get('start')}-{tokens[token_end].get('end')}); select whole tokens"
            )
        ranges.append((start, end, index))
    ranges.sort()
    for (_, previous_end, previous), (start, _, current) in itertools.pairwise(ranges):
        if start < previous_end:
            problems.append(
                f"spans {previous + 1} and {current + 1} overlap; a character belongs to one entity at most"
            )
    return problems


def _token_problems(
    text: str, tokens: Sequence[Mapping[str, Any]], parser: Sequence[Mapping[str, Any]] | None
) -> list[str]:
    problems: list[str] = []
    previous_end = 0
    for index, token in enumerate(tokens):
        start, end = token.get("start"), token.get("end")
        if token.get("id") != index:
            problems.append(f"token {index}: id {token.get('id')} instead of {index}")
        if not isinstance(start, int) or not isinstance(end, int) or not previous_end <= start < end <= len(text):
            problems.append(f"token {index}: offsets {start}-{end} outside the sentence, empty or out of order")
            continue
        previous_end = end
        if text[start:end] != token.get("text"):
            problems.append(f"token {index}: its text is not the sentence's characters {start}-{end}")
        if "ws" in token and bool(token["ws"]) != expected_ws(text, [end])[0]:
            problems.append(f"token {index}: ws={token['ws']} contradicts the offsets")
    if parser is not None and len(parser) != len(tokens):
        problems.append(f"tokens_parser has {len(parser)} entries for {len(tokens)} tokens")
    return problems


def validate_task(task: Mapping[str, Any], labels: Iterable[str] | None = LABELS, check_tokens: bool = True) -> None:
    """Raise :class:`TaskError` listing every problem of :func:`task_problems`, if any."""
    problems = task_problems(task, labels=labels, check_tokens=check_tokens)
    if problems:
        raise TaskError("; ".join(problems))


def span_html_offsets(task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The task's spans, each with ``html_start``/``html_end`` (offsets in the note's HTML) added.

    Taken from the first and last token of the span (``html_start`` of ``token_start``, ``html_end`` of
    ``token_end``), so an entity split by markup runs from its first to its last character in the
    source, as the guidelines ask. A span whose tokens carry no HTML offsets is copied unchanged.
    """
    tokens = task.get("tokens") or []
    spans = []
    for span in task.get("spans") or []:
        span = dict(span)
        first, last = span.get("token_start"), span.get("token_end")
        if isinstance(first, int) and isinstance(last, int) and 0 <= first <= last < len(tokens):
            html_start, html_end = tokens[first].get("html_start"), tokens[last].get("html_end")
            if html_start is not None and html_end is not None:
                span["html_start"], span["html_end"] = html_start, html_end
        spans.append(span)
    return spans


#: The fields a task keeps in Label Studio's ``data`` and on a doccano line, beside the text: the
#: campaign's ``meta`` (so the answers name their document and sentence; the assignment renamed, see
#: :func:`tool_fields`), ``assigned_to`` and the tokens.
TOOL_FIELDS: tuple[str, ...] = (
    *META_KEYS[:4],
    "primary_annotator",
    "other_annotators",
    "assigned_to",
    "tokens",
)


def tool_fields(task: Mapping[str, Any], assigned_to: str) -> dict[str, Any]:
    """What a Label Studio or doccano task carries beside its text and pre-annotations, flat.

    The assignment's ``annotator`` and ``annotator2`` are named ``primary_annotator`` and
    ``other_annotators``: Label Studio's JSON-MIN export writes its own ``annotator`` (the user id) over a
    data field of that name, and both tools show their own annotator beside these fields. ``assigned_to``
    is the annotator whose file holds the task (an overlap sentence is in several files, with the same
    primary annotator): the exports are read back per annotator from it. ``tokens`` keep only their
    offsets in the sentence and in the HTML (``start``, ``end``, ``html_start``, ``html_end``): the answers
    then map to the HTML exactly as Prodigy's do (:func:`span_html_offsets`, :mod:`deid_ds.agreement.gold`),
    without the notes. Flat, because both tools show and filter a task's top-level fields, and both export
    them back unchanged.
    """
    meta = task.get("meta") or {}
    fields: dict[str, Any] = {key: meta.get(key) for key in META_KEYS[:4]}
    fields["primary_annotator"] = meta.get("annotator")
    fields["other_annotators"] = list(meta.get("annotator2") or [])
    fields["assigned_to"] = assigned_to
    if meta.get("continues") is not None:  # an entity cut by the sentence bound (campaign.continuation)
        fields["continues"] = meta["continues"]
    fields["tokens"] = [
        {key: token.get(key) for key in ("start", "end", "html_start", "html_end")}
        for token in task.get("tokens") or []
    ]
    return fields
