"""Prodigy recipe ``deid.correct``: correct the weak labeller's pre-annotations, sentence by sentence.

    prodigy deid.correct deid_gold out/campaign/tasks-alice.jsonl --feed-overlap
    prodigy deid.correct deid_gold out/campaign/tasks.jsonl -F recipes/deid_correct.py

A thin adapter: every piece of logic is in :mod:`deid_ds.campaign.components` (tested without Prodigy).
This module imports only ``prodigy`` and ``deid_ds``, and nothing imports it but Prodigy (through the
``prodigy_recipes`` entry point of the ``deid-ds`` package, or ``-F``).
"""

from prodigy import set_hashes
from prodigy.core import Arg, recipe

from deid_ds.campaign.components import answer_validator, before_db, correct_config, parse_labels, prepare_stream

try:  # Prodigy >= 1.12
    from prodigy.components.stream import get_stream
except ImportError:  # older Prodigy: the JSONL loader
    get_stream = None
    from prodigy.components.loaders import JSONL


@recipe(
    "deid.correct",
    dataset=Arg(help="Dataset to save the answers to"),
    source=Arg(help="Tasks of `deid-ds campaign` (OUT/tasks.jsonl or OUT/tasks-NAME.jsonl)"),
    label=Arg("--label", "-l", help="Comma-separated labels (default: the eight of the guidelines)"),
    annotator=Arg("--annotator", "-a", help="Serve only this annotator's tasks (primary and overlap) from tasks.jsonl"),
    feed_overlap=Arg("--feed-overlap", "-FO", help="Send every task to every named session (?session=NAME)"),
    annotations_per_task=Arg(
        "--annotations-per-task", "-APT", help="Task routing: annotators per task (not with --feed-overlap)"
    ),
)
def deid_correct(
    dataset: str,
    source: str,
    label: str | None = None,
    annotator: str | None = None,
    feed_overlap: bool = False,
    annotations_per_task: float | None = None,
):
    """Correct the pre-annotated sentences of a campaign in the ner_manual interface."""
    labels = parse_labels(label)
    config = correct_config(labels, feed_overlap=feed_overlap, annotations_per_task=annotations_per_task)
    if get_stream is not None:
        # No rehash/dedup here: the input hash must include meta (see deid_ds.campaign.components).
        stream = get_stream(source, rehash=False, dedup=False)
        stream.apply(prepare_stream, stream=stream, set_hashes=set_hashes, labels=labels, annotator=annotator)
    else:
        stream = prepare_stream(JSONL(source), set_hashes=set_hashes, labels=labels, annotator=annotator)
    return {
        "dataset": dataset,
        "stream": stream,
        "view_id": "ner_manual",
        "config": config,
        "validate_answer": answer_validator(labels),
        "before_db": before_db,
    }
