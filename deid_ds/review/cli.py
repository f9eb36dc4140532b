"""``deid-ds review``: a thin wrapper over :func:`deid_ds.review.review`."""

from __future__ import annotations

import click

from deid_ds.cli_common import column_option, handle_errors, quiet_option, seed_option, verbose_option, warn


@click.command("review")
@click.argument("notes", type=click.Path(path_type=str))
@click.option(
    "--spans",
    required=True,
    type=click.Path(path_type=str),
    help="Spans to replace, as for deidentify --spans (weak-label, predict or gold: a file or its directory).",
)
@click.option("--out", "-o", required=True, type=click.Path(path_type=str), help="The HTML page to write.")
@click.option("--documents", metavar="ID,...", help="Review these notes (comma-separated id_document values).")
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    help="Review this many notes drawn at random from the input [default: 10, when --documents is not given].",
)
@seed_option("Seed of the --sample draw.")
@click.option(
    "--mode",
    type=click.Choice(["mask", "surrogate"]),
    default="mask",
    show_default=True,
    help="What the de-identified side shows: labels in place of the entities, or surrogates (as deidentify does).",
)
@click.option(
    "--key",
    help=(
        "With --mode surrogate: the key of the release, so that the page shows its surrogates [default: the "
        "DEID_DS_KEY environment variable, else a random key]. Prefer the variable."
    ),
)
@click.option("--allow-short-key", is_flag=True, help="Accept a key shorter than 16 bytes (see deidentify).")
@click.option(
    "--kb",
    type=click.Path(exists=True, file_okay=False, path_type=str),
    help="Knowledge base of the surrogate places, as for deidentify.",
)
@column_option
@click.option(
    "--overwrite",
    is_flag=True,
    help=(
        "Replace OUT even when deid-ds did not write it (a page it wrote is replaced). Never allowed: an input "
        "of the run (the notes, the spans, the KB) or a file inside one."
    ),
)
@click.option(
    "--allow-unmatched-spans",
    is_flag=True,
    help=(
        "Review even when most notes have no span, or most span documents are not among the notes (as for "
        "deidentify). Spans that match none of the notes are refused whatever the options (exit 2)."
    ),
)
@quiet_option
@verbose_option
@handle_errors
def review_command(
    notes,
    spans,
    out,
    documents,
    sample,
    seed,
    mode,
    key,
    allow_short_key,
    kb,
    column,
    overwrite,
    allow_unmatched_spans,
    quiet,
    verbose,
):
    """Write an HTML page of original and de-identified notes side by side, for review before release.

    \b
    Entities are highlighted in a colour per label on both sides. The notes are shown as text, never
    as their own HTML. The page holds the original notes: identifiers. It is self-contained (opening it
    loads nothing from the network); keep it where the notes may be read.
    """
    from deid_ds.io.notes import parse_column_map
    from deid_ds.review import review

    if documents is not None and sample is not None:
        raise click.UsageError("give --documents or --sample, not both")
    chosen = [d.strip() for d in documents.split(",") if d.strip()] if documents is not None else None
    if documents is not None and not chosen:
        raise click.UsageError("--documents: no id given")
    result = review(
        notes,
        spans,
        out,
        documents=chosen,
        sample=sample,
        seed=seed,
        mode=mode,
        key=key,
        allow_short_key=allow_short_key,
        kb=kb,
        column_map=parse_column_map(column),
        overwrite=overwrite,
        allow_unmatched_spans=allow_unmatched_spans,
    )
    failed = f", {result.failed} not de-identifiable" if result.failed else ""
    # One line at every level (-q, default, -v): the page is the report.
    click.echo(f"{len(result.notes)} note(s) reviewed{failed}: page written to {result.path}")
    warn(
        f"{result.path} holds the original notes (identifiers): review it where the notes may be read, "
        "then delete it; do not send or publish it"
    )
