"""``deid-ds agreement`` and ``deid-ds gold``: thin wrappers over :mod:`deid_ds.agreement`."""

from __future__ import annotations

import json

import click

from deid_ds.cli_common import column_option, files_argument, handle_errors, quiet_option, seed_option, verbose_option

_FORMATS = ("auto", "prodigy", "doccano", "labelstudio", "label-studio")

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(_FORMATS),
    default="auto",
    show_default=True,
    help=(
        "Answer format: Prodigy db-out JSONL, doccano JSONL (one file per annotator), Label Studio JSON export; "
        "auto detects each file's."
    ),
)
annotator_from_option = click.option(
    "--annotator-from",
    type=click.Choice(("auto", "file", "user")),
    default="auto",
    show_default=True,
    help=(
        "doccano and Label Studio: who gave an answer. auto: doccano's 'user' field when present, else the "
        "task's assigned_to (deid-ds campaign), else the file name (doccano) or Label Studio's completed_by; "
        "user: the tool's user only; file: the file name."
    ),
)
dataset_option = click.option(
    "--dataset", help="Prodigy dataset name, stripped from the DATASET-NAME annotator ids (default: guessed)."
)


@click.command("agreement")
@files_argument("answers", required=True)
@format_option
@annotator_from_option
@dataset_option
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=str), help="Write the results as JSON.")
@click.option("--figure", type=click.Path(dir_okay=False, path_type=str), help="Write a PNG of the per-label kappas.")
@click.option(
    "--bootstrap",
    "n_bootstrap",
    default=1000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Bootstrap resamples (of documents).",
)
@seed_option("Seed of the bootstrap.")
@click.option(
    "--confidence",
    default=0.95,
    show_default=True,
    type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
    help="Level of the intervals.",
)
@quiet_option
@verbose_option
@handle_errors
def agreement_command(
    answers, fmt, annotator_from, dataset, json_path, figure, n_bootstrap, seed, confidence, quiet, verbose
):
    """Inter-annotator agreement of a correction campaign: token-level Fleiss' kappa with a bootstrap
    interval over documents, per label, per annotator pair (Cohen's kappa, entity F1), per document type.

    ANSWERS are answer files: Prodigy `db-out` JSONL (only accepted answers count), doccano JSONL
    exports, or Label Studio JSON exports.
    """
    from deid_ds.agreement.compute import agreement_from_files
    from deid_ds.io.files import atomic_write_text

    result = agreement_from_files(
        answers,
        fmt,
        annotator_from=annotator_from,
        dataset=dataset,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )
    if verbose or not quiet:  # the tables are the result: printed by default and with -v
        click.echo(result.table())
    if json_path:
        atomic_write_text(json_path, json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
        click.echo(f"JSON written to {json_path}")
    if figure:
        result.figure(figure)
        click.echo(f"figure written to {figure}")


@click.command("gold")
@files_argument("answers", required=True)
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(dir_okay=False, path_type=str),
    help="Gold table (Parquet); the same rows are written as JSONL beside it.",
)
@format_option
@click.option(
    "--strategy",
    type=click.Choice(("review", "majority")),
    default="review",
    show_default=True,
    help="review: the answers are adjudicated versions; majority: token-level majority of the annotators' answers.",
)
@click.option(
    "--notes",
    type=click.Path(exists=True, path_type=str),
    help="Notes table, to re-derive HTML offsets for answers without them (doccano, Label Studio).",
)
@column_option
@annotator_from_option
@dataset_option
@quiet_option
@verbose_option
@handle_errors
def gold_command(answers, out, fmt, strategy, notes, column, annotator_from, dataset, quiet, verbose):
    """Turn reviewed (or majority-voted) answers into the gold spans table with HTML offsets:
    id_document, label, html_start, html_end, text, id_patient, doc_type, annotators.

    The table is what `deid-ds weak-label --gold` and `deid-ds evaluate` read.
    """
    from deid_ds.agreement.gold import gold_from_files
    from deid_ds.io.notes import parse_column_map

    frame, summary = gold_from_files(
        answers,
        out,
        fmt=fmt,
        strategy=strategy,
        notes=notes,
        column_map=parse_column_map(column),
        annotator_from=annotator_from,
        dataset=dataset,
    )
    if verbose or not quiet:  # the summary table is short: printed by default and with -v
        click.echo(summary.table())
    click.echo(f"{len(frame):,} gold spans written to {out}")
