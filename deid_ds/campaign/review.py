"""Adjudication of overlapping answers: the logic of the ``deid.review`` recipe.

The answers (``prodigy db-out DATASET > answers.jsonl``) of the overlap documents are grouped by
Prodigy's ``_input_hash`` (with the correction recipe's hashing, one input is one sentence of one
document), keeping each annotator's latest answer. An input that two or more annotators answered and
whose versions differ becomes one review task in the ordinary ``ner_manual`` interface:

* pre-annotated with the **majority** spans — those in the accepted versions of more than half of the
  annotators (two such spans can never overlap, since every annotator's spans are disjoint); with two
  annotators that is what both marked;
* ``meta`` gains ``review_annotators`` and ``review_differences`` (one line per span not everyone marked:
  label, the span's text and who marked it), which Prodigy shows on the card, so the reviewer sees what
  is disputed; ``review`` (top level) keeps every version (annotator, answer, spans) for the gold step;
* ``_input_hash`` is the answers' own, so re-running the review skips what was already adjudicated.

This is a ``ner_manual`` equivalent of Prodigy's ``review`` interface, built only on the documented task
format. ``ignore`` answers are left out; a ``reject`` is a version without spans that disagrees with
any accepted one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from deid_ds.errors import InputError
from deid_ds.io.jsonl import iter_json_objects

SpanKey = tuple[int, int, str]


def annotator_name(answer: Mapping[str, Any], dataset: str | None = None) -> str:
    """The annotator of a saved answer: ``_annotator_id`` (else ``_session_id``), ``DATASET-`` removed.

    With named sessions Prodigy writes ``DATASET-alice``; an id without that prefix is kept whole
    (:func:`infer_dataset` finds the prefix when it is not given).
    """
    session = str(answer.get("_annotator_id") or answer.get("_session_id") or "")
    if dataset and session.startswith(dataset + "-"):
        return session[len(dataset) + 1 :]
    return session


def infer_dataset(answers: Iterable[Mapping[str, Any]]) -> str | None:
    """The ``DATASET`` of ``DATASET-NAME`` session ids: their longest common prefix, cut after its last
    ``-`` (``None`` with fewer than two distinct ids or no common ``...-`` prefix)."""
    ids = sorted({str(a.get("_annotator_id") or a.get("_session_id") or "") for a in answers} - {""})
    if len(ids) < 2:
        return None
    first, last = ids[0], ids[-1]
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    cut = first[:n].rfind("-")
    return first[:cut] if cut > 0 else None


def input_key(answer: Mapping[str, Any]) -> object:
    """What identifies the input of an answer: ``_input_hash``, else (document id, sentence index)."""
    if answer.get("_input_hash") is not None:
        return answer["_input_hash"]
    meta = answer.get("meta") or {}
    return (str(meta.get("id_document")), meta.get("sentence_index"))


def group_answers(
    answers: Iterable[Mapping[str, Any]], dataset: str | None = None
) -> dict[object, dict[str, Mapping[str, Any]]]:
    """Input -> annotator -> that annotator's latest answer (by ``_timestamp``), ``ignore`` left out.

    The ``DATASET-`` prefix of the session ids is :func:`infer_dataset`'s when ``dataset`` is not given.
    """
    answers = list(answers)
    if dataset is None:
        dataset = infer_dataset(answers)
    groups: dict[object, dict[str, Mapping[str, Any]]] = {}
    for answer in answers:
        if answer.get("answer") == "ignore":
            continue
        versions = groups.setdefault(input_key(answer), {})
        name = annotator_name(answer, dataset)
        previous = versions.get(name)
        if previous is None or (answer.get("_timestamp") or 0) >= (previous.get("_timestamp") or 0):
            versions[name] = answer
    return groups


def span_keys(answer: Mapping[str, Any]) -> frozenset[SpanKey]:
    """The (start, end, label) of an answer's spans; none for a rejected answer."""
    if answer.get("answer") == "reject":
        return frozenset()
    return frozenset((span["start"], span["end"], span["label"]) for span in answer.get("spans") or [])


def build_review_task(versions: Mapping[str, Mapping[str, Any]], include_agreed: bool = False) -> dict[str, Any] | None:
    """The review task of one input's versions (annotator -> answer), or ``None`` when there is nothing
    to adjudicate (fewer than two annotators, or all agree and not ``include_agreed``)."""
    if len(versions) < 2:
        return None
    names = sorted(versions)
    marks = {name: span_keys(versions[name]) for name in names}
    answers = {name: versions[name].get("answer", "accept") for name in names}
    agreed = len(set(marks.values())) == 1 and len(set(answers.values())) == 1
    if agreed and not include_agreed:
        return None
    base = versions[names[0]]
    counts: dict[SpanKey, list[str]] = {}
    for name in names:
        for key in marks[name]:
            counts.setdefault(key, []).append(name)
    majority = sorted(key for key, who in counts.items() if 2 * len(who) > len(names))
    by_key = {}
    for name in names:
        for span in versions[name].get("spans") or []:
            by_key.setdefault((span["start"], span["end"], span["label"]), span)
    text = base["text"]
    differences = [
        f"{label} «{text[start:end]}» ({start}-{end}): {', '.join(who)}"
        for (start, end, label), who in sorted(counts.items())
        if len(who) < len(names)
    ]
    differences += [f"rejected by {name}" for name in names if answers[name] == "reject"]
    meta = dict(base.get("meta") or {})
    meta["review_annotators"] = ", ".join(names)
    meta["review_differences"] = " | ".join(differences) if differences else "none"
    task: dict[str, Any] = {
        "text": text,
        "tokens": [dict(token) for token in base.get("tokens") or []],
        "tokens_parser": [dict(token) for token in base.get("tokens_parser") or []],
        "spans": [_clean_span(by_key[key]) for key in majority],
        "meta": meta,
        "review": {
            "versions": [
                {
                    "annotator": name,
                    "answer": answers[name],
                    "spans": [_clean_span(by_key[key]) for key in sorted(marks[name])],
                }
                for name in names
            ],
            "agreed": agreed,
        },
    }
    if base.get("_input_hash") is not None:
        task["_input_hash"] = base["_input_hash"]
    return task


def _clean_span(span: Mapping[str, Any]) -> dict[str, Any]:
    return {key: span[key] for key in ("start", "end", "token_start", "token_end", "label", "source") if key in span}


def review_tasks(
    answers: Iterable[Mapping[str, Any]], dataset: str | None = None, include_agreed: bool = False
) -> Iterator[dict[str, Any]]:
    """The review tasks of a whole answers file, ordered by document id then sentence index."""
    tasks = [
        task
        for versions in group_answers(answers, dataset).values()
        if (task := build_review_task(versions, include_agreed)) is not None
    ]
    tasks.sort(key=lambda t: (str(t["meta"].get("id_document")), t["meta"].get("sentence_index") or 0))
    yield from tasks


def read_answers_file(path: str | Path) -> list[dict[str, Any]]:
    """The answers of a ``prodigy db-out`` JSONL file (blank lines skipped); a bad line is refused with
    its number, never its content."""
    answers = []
    for number, answer in iter_json_objects(path):
        if "text" not in answer:
            raise InputError(f"{path}, line {number}: not a Prodigy answer (no text)")
        answers.append(answer)
    return answers
