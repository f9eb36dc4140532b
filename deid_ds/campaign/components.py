"""The logic of the Prodigy recipes ``deid.correct`` and ``deid.review``, in plain functions.

The recipe modules (``recipes/deid_correct.py``, ``recipes/deid_review.py``) only import Prodigy and
call these; nothing here imports Prodigy (the functions Prodigy provides, such as ``set_hashes``, are
passed in), so all of it is tested without a licence.

**Input hash.** Tasks are hashed with ``set_hashes(task, input_keys=("text", "meta"),
task_keys=("spans",), overwrite=True)``. Prodigy's default input key, the text alone, would make two
identical sentences of different documents (a signature line, an address block) one input: the second
would be dropped as a duplicate or excluded once the first was answered, and their answers merged in
review. ``meta`` holds the document id and sentence index, so the input is *this sentence of this
document*; it also holds the assignment (``annotator``, ``annotator2``), which is the same in
``tasks.jsonl`` and every ``tasks-NAME.jsonl`` of one campaign, so a sentence is one input whichever file
it was served from. (Preparing the campaign again with other annotators makes new inputs: prepare it
once.) For the same reason the stream is read with ``get_stream(source, rehash=False, dedup=False)``:
its own de-duplication would hash by text before ours is set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from deid_ds.campaign.tasks import TaskError, span_html_offsets, task_problems
from deid_ds.model import LABELS

#: ``set_hashes`` keys: see the module docstring.
INPUT_KEYS: tuple[str, ...] = ("text", "meta")
TASK_KEYS: tuple[str, ...] = ("spans",)

#: One distinct colour per label (colour-blind-friendly Okabe-Ito hues, plus two light tones).
LABEL_COLOURS: dict[str, str] = {
    "PATIENT": "#E69F00",
    "DOCTOR": "#56B4E9",
    "DATE": "#009E73",
    "EMAIL": "#F0E442",
    "PHONE": "#CC79A7",
    "STR": "#D55E00",
    "ZIP": "#B4A7D6",
    "VILLE": "#9AD0A1",
}


def parse_labels(value: str | Iterable[str] | None) -> list[str]:
    """Labels from ``PATIENT,DOCTOR`` (or a list); ``None``: the eight labels. Unknown labels are
    refused, since the guidelines define only these."""
    if value is None:
        return list(LABELS)
    names = [v.strip() for v in (value.split(",") if isinstance(value, str) else value) if v.strip()]
    unknown = [name for name in names if name not in LABELS]
    if unknown or not names:
        raise ValueError(
            f"unknown label(s) {', '.join(unknown) or '(none given)'}; expected some of {', '.join(LABELS)}"
        )
    return names


def correct_config(
    labels: Iterable[str],
    feed_overlap: bool = False,
    annotations_per_task: float | None = None,
    batch_size: int | None = None,
) -> dict[str, Any]:
    """The ``config`` of ``deid.correct`` (also used by ``deid.review``).

    ``exclude_by: "input"``: a sentence answered once is not served again even though its spans (the
    task hash) changed; ``force_stream_order``: sentences come in document order, and a refreshed page
    gets the same ones again; ``honor_token_whitespace``: the text reads as written. ``feed_overlap``
    and ``annotations_per_task`` are Prodigy's two ways of sharing a stream between sessions and cannot
    be set together.
    """
    labels = list(labels)
    if feed_overlap and annotations_per_task is not None:
        raise ValueError("feed_overlap and annotations_per_task cannot be set together")
    config: dict[str, Any] = {
        "labels": labels,
        "lang": "fr",
        "exclude_by": "input",
        "force_stream_order": True,
        "honor_token_whitespace": True,
        "custom_theme": {"labels": {label: LABEL_COLOURS[label] for label in labels if label in LABEL_COLOURS}},
        "feed_overlap": bool(feed_overlap),
    }
    if annotations_per_task is not None:
        if annotations_per_task <= 0:
            raise ValueError("annotations_per_task must be positive")
        del config["feed_overlap"]
        config["annotations_per_task"] = annotations_per_task
    if batch_size is not None:
        config["batch_size"] = batch_size
    return config


def hash_task(
    task: dict[str, Any], set_hashes: Callable[..., dict[str, Any]], overwrite: bool = True
) -> dict[str, Any]:
    """Prodigy's hashes of a task, with this project's keys (see the module docstring)."""
    return set_hashes(task, input_keys=INPUT_KEYS, task_keys=TASK_KEYS, overwrite=overwrite)


def prepare_stream(
    stream: Iterable[dict[str, Any]],
    set_hashes: Callable[..., dict[str, Any]],
    labels: Iterable[str] = LABELS,
    annotator: str | None = None,
) -> Iterator[dict[str, Any]]:
    """The correction stream: every task checked (:func:`~deid_ds.campaign.tasks.task_problems`) and
    hashed. A broken task stops the stream with its document id and sentence index (no text): it means
    the tasks file was edited by hand or is not a campaign file.

    ``annotator``: keep only the tasks of that annotator (primary or overlap), to serve one person's
    share from the overall ``tasks.jsonl``.
    """
    labels = list(labels)
    for task in stream:
        meta = task.get("meta") or {}
        if (
            annotator is not None
            and annotator != meta.get("annotator")
            and annotator not in (meta.get("annotator2") or [])
        ):
            continue
        problems = task_problems(task, labels=labels)
        if problems:
            raise TaskError(
                f"task of document {meta.get('id_document')}, sentence {meta.get('sentence_index')}: "
                f"{'; '.join(problems)}"
            )
        yield hash_task(task, set_hashes)


def answer_validator(labels: Iterable[str] = LABELS) -> Callable[[Mapping[str, Any]], None]:
    """``validate_answer`` of the recipes: raise ``ValueError`` (its message shown to the annotator) on
    a span that is not aligned to tokens, overlaps another or has an unknown label. ``ignore`` answers
    are not checked: they are not used."""
    allowed = list(labels)

    def validate_answer(eg: Mapping[str, Any]) -> None:
        if eg.get("answer") == "ignore":
            return
        problems = task_problems(eg, labels=allowed, check_tokens=False)
        if problems:
            raise TaskError("This answer cannot be saved: " + "; ".join(problems))

    return validate_answer


def before_db(examples: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """``before_db``: each answer as saved — its spans gain ``html_start``/``html_end`` (offsets in the
    note's HTML, from their tokens) for the gold step; ``meta`` and ``tokens_parser`` are kept as they
    are, and the hashes are not touched (Prodigy relies on them)."""
    saved = []
    for eg in examples:
        eg = dict(eg)
        eg["spans"] = span_html_offsets(eg)
        saved.append(eg)
    return saved
