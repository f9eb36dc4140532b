"""``deid-ds weak-label``: a thin wrapper over :func:`deid_ds.weak_labelling.weak_label`."""

from __future__ import annotations

import os

import click

from deid_ds.cli_common import (
    column_option,
    engine_options,
    failures_warning,
    handle_errors,
    missing_id_warning,
    note_limit_options,
    overwrite_option,
    quiet_option,
    seed_option,
    segmentation_options,
    show_progress,
    warn,
)
from deid_ds.defaults import DEFAULT_BATCH_SIZE


def _print_rules(context: click.Context, _parameter, value: bool) -> None:
    """``--rules``: the labelling functions' table, then exit (before the arguments are checked)."""
    if value and not context.resilient_parsing:
        from deid_ds.label.functions import functions_table

        click.echo(functions_table())
        context.exit()


@click.command("weak-label")
@click.argument("notes", type=str)
@click.option(
    "--kb",
    type=click.Path(path_type=str),
    help=(
        "Knowledge base from `deid-ds build-kb`. Without it the gazetteer rules are off; patterns, context cues and "
        "metadata still label."
    ),
)
@click.option(
    "--out",
    "-o",
    required=True,
    type=str,
    help=(
        "Output directory (replaced atomically, only if deid-ds wrote it; see --overwrite; work in progress is kept "
        "in OUT.partial and resumed; with --engine spark, in OUT.spark-partial, not resumed)."
    ),
)
@overwrite_option
@click.option("--workers", "-j", type=click.IntRange(min=1), help="Worker processes [default: all cores].")
@click.option(
    "--gold",
    type=click.Path(path_type=str),
    help="Gold spans (Parquet or JSONL: id_document, label, html_start, html_end) to score the labels against.",
)
@column_option
@click.option(
    "--keep-empty",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0.0, 1.0),
    metavar="SHARE",
    help="Share of the sentences without entity to keep in train and dev (chosen by a hash, deterministic).",
)
@click.option(
    "--keep-empty-test",
    default=1.0,
    show_default=True,
    type=click.FloatRange(0.0, 1.0),
    metavar="SHARE",
    help=(
        "Share of the sentences without entity to keep in test (default: all, so that a correction campaign on the "
        "test documents shows every sentence)."
    ),
)
@click.option(
    "--split",
    "split",
    default="0.8,0.1,0.1",
    show_default=True,
    metavar="TRAIN,DEV,TEST",
    help="Shares of patients in train, dev and test (all of a patient's notes in one split).",
)
@seed_option("Key of the hash that orders patients for the split.")
@click.option("--no-metadata", is_flag=True, help="Do not use the patients' metadata columns.")
@click.option(
    "--disable-rule",
    "disabled_rules",
    multiple=True,
    metavar="NAME",
    help="Switch off the labelling function NAME (see --rules): it proposes no span. Repeatable.",
)
@click.option(
    "--rules",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=_print_rules,
    help="List the labelling functions (name, labels, what each needs, what it finds) and exit.",
)
@segmentation_options()
@click.option(
    "--batch-size",
    default=DEFAULT_BATCH_SIZE,
    show_default=True,
    type=click.IntRange(min=1),
    help="Notes per batch (the unit of resumption).",
)
@note_limit_options("labelled")
@click.option(
    "--sentences-jsonl",
    is_flag=True,
    help=(
        "Also write OUT/sentences.jsonl, the rows of sentences.parquet as Prodigy tasks (off by default: the largest "
        "output, ~11 times the notes' HTML, 2.2 GB per 100,000 notes; the campaign reads sentences.parquet)."
    ),
)
@click.option(
    "--features/--no-features",
    default=True,
    show_default=True,
    help=(
        "Write each token's knowledge features (KB lists, street types, postcodes, common words, metadata matches, "
        "shape) as a middle column of the Flair files (token FEATURES TAG), for train to embed."
    ),
)
@engine_options
@quiet_option
@click.option("--verbose", "-v", is_flag=True, help="Also print the spans kept per labelling function.")
@handle_errors
def weak_label_command(
    notes,
    kb,
    out,
    overwrite,
    workers,
    gold,
    column,
    keep_empty,
    keep_empty_test,
    split,
    seed,
    no_metadata,
    disabled_rules,
    punkt,
    max_tokens,
    batch_size,
    max_note_bytes,
    note_timeout,
    sentences_jsonl,
    features,
    engine,
    spark_master,
    quiet,
    verbose,
):
    """Label the eight entity types in HTML notes by distant supervision, into BIO training sets.

    NOTES is a Parquet file or directory (the notes table of docs/input.md; with --engine spark, any path
    Spark reads: hdfs://, s3a://, local). Writes OUT/spans.parquet,
    OUT/sentences.parquet (and .jsonl with --sentences-jsonl), OUT/train.txt, dev.txt, test.txt (Flair,
    split by patient), OUT/documents.parquet (one row per input note) and OUT/report.json. An
    interrupted run restarted with the same inputs and options resumes where it stopped (inputs are
    compared by content). A knowledge base whose tables do not match its manifest is refused. SIGTERM
    stops the run and its workers (exit status 143), keeping the finished batches for the restart.
    An existing OUT not written by deid-ds weak-label is refused (exit status 2) unless --overwrite;
    so is a second run on the same OUT. A note over --max-note-bytes or --note-timeout is failed with
    its reason in documents.parquet; the other notes are labelled.
    """
    from deid_ds.io.notes import parse_column_map
    from deid_ds.weak_labelling import parse_split, report_table, weak_label

    report = weak_label(
        notes,
        out,
        kb=kb,
        column_map=parse_column_map(column),
        punkt=punkt,
        max_tokens=max_tokens,
        batch_size=batch_size,
        workers=workers or os.cpu_count() or 1,
        keep_empty=keep_empty,
        keep_empty_test=keep_empty_test,
        split=parse_split(split),
        seed=seed,
        gold=gold,
        use_metadata=not no_metadata,
        disabled_rules=disabled_rules,
        progress=show_progress(quiet),
        log=click.echo,
        engine=engine,
        spark_master=spark_master,
        overwrite=overwrite,
        max_note_bytes=max_note_bytes,
        note_timeout=note_timeout,
        sentences_jsonl=sentences_jsonl,
        features=features,
    )
    for warning in (*weak_label_warnings(report), failures_warning(report.failures, f"{out}/documents.parquet")):
        if warning:
            warn(warning)
    if verbose or not quiet:  # the report table is the summary; -v adds the spans kept per labelling function
        click.echo(report_table(report, per_function=verbose))
        if report.gold_table:
            click.echo("")
            click.echo(report.gold_table)
    click.echo(f"written to {out}")


def weak_label_warnings(report) -> list[str | None]:
    """What a user must not miss in a weak-label run: an empty split, no metadata column, a knowledge base
    for other départements, notes without a patient (None: nothing to say)."""
    from deid_ds.weak_labelling.split import SPLITS

    warnings = [
        f"the {name} split got no document (share {share:g}): too few patients, or change --split"
        for name, share in zip(SPLITS, report.split_shares)
        if share > 0 and not report.splits.get(name, {}).get("documents", 0)
    ]
    if report.metadata_columns_missing and not report.metadata_columns:
        warnings.append(
            f"none of the metadata columns ({', '.join(report.metadata_columns_missing)}) is in the notes: labelled "
            "without the patients' metadata, the main source of distant supervision (map them with -c "
            "firstname=SOURCE..., or say so with --no-metadata)"
        )
    from deid_ds.kb.coverage import coverage_warning

    warnings.append(coverage_warning(report.kb_coverage, "weak-label"))
    warnings.append(missing_id_warning(report.documents_without_id))
    if report.documents_without_patient:
        warnings.append(
            f"{report.documents_without_patient:,} document(s) without id_patient: each is its own patient "
            "(no per-patient consistency; map the column with -c id_patient=SOURCE)"
        )
    return warnings
