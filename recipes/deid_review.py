"""Prodigy recipe ``deid.review``: adjudicate the sentences that annotators corrected differently.

    prodigy db-out deid_gold > answers.jsonl
    prodigy deid.review deid_gold_reviewed answers.jsonl

Each sentence answered by two or more annotators whose versions differ is shown once in the ner_manual
interface, pre-annotated with the majority spans, the disputed spans and who marked them listed on the
card (``meta``). The logic is :mod:`deid_ds.campaign.review` and :mod:`deid_ds.campaign.components`;
this module imports only ``prodigy`` and ``deid_ds``.
"""

from prodigy import set_hashes
from prodigy.core import Arg, recipe

from deid_ds.campaign.components import answer_validator, before_db, correct_config, hash_task, parse_labels
from deid_ds.campaign.review import read_answers_file, review_tasks


@recipe(
    "deid.review",
    dataset=Arg(help="Dataset to save the adjudicated answers to"),
    source=Arg(help="Answers of the correction: JSONL from `prodigy db-out DATASET`"),
    source_dataset=Arg(
        "--source-dataset",
        "-S",
        help="Name of the correction dataset, removed from the session ids (default: inferred)",
    ),
    label=Arg("--label", "-l", help="Comma-separated labels (default: the eight of the guidelines)"),
    include_agreed=Arg("--all", "-A", help="Also show the sentences on which every annotator agreed"),
)
def deid_review(
    dataset: str,
    source: str,
    source_dataset: str | None = None,
    label: str | None = None,
    include_agreed: bool = False,
):
    """Adjudicate the overlapping answers of a correction dataset."""
    labels = parse_labels(label)
    answers = read_answers_file(source)
    # The answers' own _input_hash is kept (overwrite=False), so a reviewed sentence is not served again.
    stream = [
        hash_task(task, set_hashes, overwrite=False)
        for task in review_tasks(answers, dataset=source_dataset, include_agreed=include_agreed)
    ]
    return {
        "dataset": dataset,
        "stream": stream,
        "view_id": "ner_manual",
        "config": correct_config(labels),
        "validate_answer": answer_validator(labels),
        "before_db": before_db,
    }
