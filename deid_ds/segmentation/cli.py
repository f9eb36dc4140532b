"""``deid-ds segment`` and ``deid-ds punkt-train``: thin wrappers over :mod:`deid_ds.segmentation.notes`."""

from __future__ import annotations

import click

from deid_ds.cli_common import (
    column_option,
    engine_options,
    failures_warning,
    handle_errors,
    missing_id_warning,
    note_limit_options,
    overwrite_option,
    print_report,
    quiet_option,
    segmentation_options,
    show_progress,
    verbose_option,
    warn,
)
from deid_ds.defaults import DEFAULT_BATCH_SIZE


@click.command("segment")
@click.argument("notes", type=click.Path(path_type=str))
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(path_type=str),
    help="Output directory (replaced atomically, only if deid-ds wrote it; see --overwrite).",
)
@overwrite_option
@column_option
@segmentation_options()
@click.option(
    "--batch-size",
    default=DEFAULT_BATCH_SIZE,
    show_default=True,
    type=click.IntRange(min=1),
    help="Notes read and processed at a time.",
)
@click.option("--workers", "-j", default=1, show_default=True, type=click.IntRange(min=1), help="Worker processes.")
@note_limit_options("segmented")
@engine_options
@quiet_option
@verbose_option
@handle_errors
def segment_command(
    notes,
    out,
    overwrite,
    column,
    punkt,
    max_tokens,
    batch_size,
    workers,
    max_note_bytes,
    note_timeout,
    engine,
    spark_master,
    quiet,
    verbose,
):
    """Split HTML notes into sentences and tokens with offsets in the text and in the HTML.

    NOTES is a Parquet file or directory (the notes table of docs/input.md), or HTML/text files (with
    --engine spark, any Parquet path Spark reads: hdfs://, s3a://, local).
    Writes OUT/sentences.parquet, OUT/documents.parquet (one row per input note) and OUT/report.json.
    An existing OUT not written by deid-ds segment is refused (exit status 2) unless --overwrite.
    """
    from deid_ds.io.notes import parse_column_map
    from deid_ds.segmentation.notes import report_table, segment_notes

    report = segment_notes(
        notes,
        out,
        column_map=parse_column_map(column),
        punkt=punkt,
        max_tokens=max_tokens,
        batch_size=batch_size,
        workers=workers,
        progress=show_progress(quiet),
        overwrite=overwrite,
        max_note_bytes=max_note_bytes,
        note_timeout=note_timeout,
        engine=engine,
        spark_master=spark_master,
    )
    failed = failures_warning(report.failures, f"{out}/documents.parquet")
    for warning in (missing_id_warning(report.documents_without_id), failed):
        if warning:
            warn(warning)
    print_report(
        full=report_table(report),
        summary=[
            f"{report.documents:,} documents: {report.ok:,} ok, {report.empty:,} empty, {report.failed:,} failed; "
            f"{report.sentences:,} sentences, {report.tokens:,} tokens",
        ],
        more=f"{out}/report.json",
        written=f"written to {out}",
        quiet=quiet,
        verbose=verbose,
    )


@click.command("punkt-train")
@click.argument("notes", type=click.Path(path_type=str))
@click.option(
    "--out", "-o", required=True, type=click.Path(dir_okay=False, path_type=str), help="Parameter file to write (JSON)."
)
@column_option
@click.option("--limit", type=click.IntRange(min=1), help="Train on the first N notes only.")
@quiet_option
@verbose_option
@handle_errors
def punkt_train_command(notes, out, column, limit, quiet, verbose):
    """Train NLTK Punkt sentence-splitting parameters on the text of your notes.

    Punkt is unsupervised: it learns abbreviations, collocations and sentence starters from raw text.
    The shipped French clinical abbreviations are always added. Use the result with --punkt.
    """
    from deid_ds.io.notes import parse_column_map
    from deid_ds.report import format_table
    from deid_ds.segmentation.notes import punkt_train

    counts = punkt_train(notes, out, column_map=parse_column_map(column), limit=limit, progress=show_progress(quiet))
    print_report(
        full=format_table(["punkt-train", "count"], [[k, v] for k, v in counts.items()]),
        summary=[", ".join(f"{k} {v:,}" for k, v in counts.items())],
        written=f"written to {out}",
        quiet=quiet,
        verbose=verbose,
    )
