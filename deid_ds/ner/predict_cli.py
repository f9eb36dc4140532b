"""``deid-ds predict``: a thin wrapper over :func:`deid_ds.ner.predict.predict` (torch/flair load at run time)."""

from __future__ import annotations

import click

from deid_ds.cli_common import (
    column_option,
    engine_options,
    failures_warning,
    handle_errors,
    missing_id_warning,
    overwrite_option,
    quiet_option,
    segmentation_options,
    show_progress,
    verbose_option,
    warn,
)
from deid_ds.defaults import DEFAULT_BATCH_SIZE, DEFAULT_MINI_BATCH, available_cores


@click.command("predict")
@click.argument("model", type=click.Path(path_type=str))
@click.argument("notes", type=str)
@click.option(
    "--out",
    "-o",
    required=True,
    type=str,
    help=(
        "Output directory (replaced atomically, only if deid-ds wrote it; see --overwrite): spans.parquet, "
        "documents.parquet, report.json."
    ),
)
@overwrite_option
@click.option(
    "--with-rules",
    "with_rules",
    type=click.Path(path_type=str),
    metavar="KB",
    help=(
        "Hybrid mode: also run the weak labeller with this knowledge base (`deid-ds build-kb`) and merge its spans "
        "with the model's (policy: docs/predict-evaluate.md)."
    ),
)
@click.option(
    "--kb",
    type=click.Path(path_type=str),
    metavar="DIR",
    help=(
        "Knowledge base for a model trained with knowledge features (weak-label --features): its features are "
        "computed from it [default: the --with-rules one]."
    ),
)
@click.option(
    "--strict-kb",
    is_flag=True,
    help="Refuse, instead of warning, a knowledge base other than the one the model's features came from.",
)
@click.option(
    "--no-metadata",
    is_flag=True,
    help="Do not use the patients' metadata columns (hybrid mode, knowledge features).",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0.0, 1.0),
    help=(
        "Hybrid mode: least score of a model span the rules did not find (lower: more model spans, toward recall) "
        "[default: the calibration's, else the model card's, else 0]."
    ),
)
@click.option(
    "--override",
    type=click.FloatRange(0.0, 1.0),
    help=(
        "Hybrid mode: least score of a model span that overrides a weak rule span it overlaps "
        "[default: as for --threshold]."
    ),
)
@click.option(
    "--calibration",
    type=click.Path(path_type=str),
    metavar="FILE.json",
    help="Hybrid mode: thresholds chosen by deid-ds calibrate [default: MODEL/calibration.json when present].",
)
@click.option(
    "--workers",
    "-j",
    type=click.IntRange(min=1),
    help="Worker processes on CPU, each loading the model once [default: all cores]; one process on a GPU.",
)
@click.option(
    "--batch-size",
    default=DEFAULT_BATCH_SIZE,
    show_default=True,
    type=click.IntRange(min=1),
    help="Notes per batch (the unit sent to a worker).",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    help="torch threads per worker on CPU [default: 1]; at most the cores shared among the workers (never more).",
)
@click.option(
    "--mini-batch-size",
    default=DEFAULT_MINI_BATCH,
    show_default=True,
    type=click.IntRange(min=1),
    help="Sentences per forward pass of the tagger (sorted by length first).",
)
@click.option("--device", default="auto", show_default=True, help="auto (CUDA when available), cpu, cuda or cuda:N.")
@column_option
@segmentation_options(
    punkt_help="Punkt parameters, as given to weak-label (default: the shipped ones).",
    max_tokens_help="Longest sentence, in tokens, as for weak-label.",
)
@engine_options
@quiet_option
@verbose_option
@handle_errors
def predict_command(
    model,
    notes,
    out,
    overwrite,
    with_rules,
    kb,
    strict_kb,
    no_metadata,
    threshold,
    override,
    calibration,
    workers,
    batch_size,
    threads,
    mini_batch_size,
    device,
    column,
    punkt,
    max_tokens,
    engine,
    spark_master,
    quiet,
    verbose,
):
    """Tag HTML notes with a trained tagger (`deid-ds train`) into the weak labeller's spans.parquet.

    \b
    MODEL is a model directory (best-model.pt, else final-model.pt) or a .pt file; NOTES the notes
    table (with --engine spark, any path Spark reads: hdfs://, s3a://, local). Notes are segmented
    exactly as weak-label segments them, so the model sees its training
    tokens. Writes OUT/spans.parquet (same schema as weak-label, source "model"), OUT/documents.parquet
    (every note: ok, empty or failed with its reason) and OUT/report.json. An existing OUT not written
    by deid-ds predict is refused (exit status 2) unless --overwrite.
    """
    from deid_ds.io.notes import parse_column_map
    from deid_ds.ner.predict import predict, report_table

    report = predict(
        model,
        notes,
        out,
        with_rules=with_rules,
        use_metadata=not no_metadata,
        column_map=parse_column_map(column),
        punkt=punkt,
        max_tokens=max_tokens,
        batch_size=batch_size,
        mini_batch_size=mini_batch_size,
        workers=workers or available_cores(),
        threads=threads,
        device=device,
        progress=show_progress(quiet),
        log=click.echo,
        engine=engine,
        spark_master=spark_master,
        overwrite=overwrite,
        kb=kb,
        strict_kb=strict_kb,
        threshold=threshold,
        override=override,
        calibration=calibration,
    )
    from deid_ds.kb.coverage import coverage_warning

    warnings = (
        missing_id_warning(report.documents_without_id),
        failures_warning(report.failures, f"{out}/documents.parquet"),
        coverage_warning(report.kb_coverage, "predict --with-rules"),
    )
    for warning in warnings:
        if warning:
            warn(warning)
    if verbose or not quiet:  # the report table is the summary, and all of it (-v prints the same)
        click.echo(report_table(report))
    click.echo(f"written to {out}")
