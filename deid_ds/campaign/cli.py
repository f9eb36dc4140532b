"""``deid-ds campaign``: a thin wrapper over :func:`deid_ds.campaign.build.prepare_campaign`."""

from __future__ import annotations

import click

from deid_ds.campaign.build import TOOLS
from deid_ds.campaign.selection import SELECTIONS
from deid_ds.cli_common import handle_errors, overwrite_option, quiet_option, seed_option, verbose_option


@click.command("campaign")
@click.argument("weak_dir", type=click.Path(path_type=str))
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(path_type=str),
    help="Output directory (replaced as a whole, atomically, only if deid-ds wrote it; see --overwrite).",
)
@overwrite_option
@click.option(
    "--annotators",
    "-a",
    required=True,
    metavar="A,B,C",
    help="Annotator names, comma-separated (also their Prodigy session names).",
)
@click.option(
    "--per-type",
    type=click.IntRange(min=1),
    metavar="N",
    help="Documents per document type (the paper: 250 per source format); fewer available: all taken. [default: all]",
)
@click.option(
    "--overlap",
    default=0.2,
    show_default=True,
    type=click.FloatRange(0.0, 1.0),
    metavar="SHARE",
    help="Share of each annotator's documents also given to every other annotator.",
)
@click.option(
    "--split",
    "split",
    default="test",
    show_default=True,
    metavar="NAMES",
    help="Splits to draw from: test, dev,test… or all (an input without splits, e.g. predictions).",
)
@seed_option("Seed of the sampling and the assignment.")
@click.option(
    "--tool",
    type=click.Choice(TOOLS),
    default="prodigy",
    show_default=True,
    help="Annotation tool the tasks are written for: Prodigy, or the open Label Studio and doccano "
    "(OUT/label-studio/, OUT/doccano/: one import file per annotator, with the tool's import instructions).",
)
@click.option(
    "--select",
    type=click.Choice(SELECTIONS),
    default="random",
    show_default=True,
    help="Which documents of each type: a random draw (the only choice for an evaluation set), or those where "
    "the model and the rules disagree most, or where the model is least sure (to correct for --gold-train); "
    "the last two need --predictions.",
)
@click.option(
    "--predictions",
    type=click.Path(path_type=str),
    metavar="PREDICT_DIR",
    help="The model's predictions on the same notes (`deid-ds predict` output, without --with-rules), "
    "for --select disagreement or uncertainty.",
)
@quiet_option
@verbose_option
@handle_errors
def campaign_command(
    weak_dir, out, overwrite, annotators, per_type, overlap, split, seed, tool, select, predictions, quiet, verbose
):
    """Prepare the correction campaign: sample documents per type, assign them, write the annotation tasks.

    WEAK_DIR is a `deid-ds weak-label` output (or any directory of sentences in its format). Writes
    OUT/tasks.jsonl (every task once), OUT/tasks-NAME.jsonl per annotator, OUT/assignments.csv and
    OUT/campaign.json, then prints the counts per document type and per annotator. With --tool
    label-studio or doccano, a folder OUT/TOOL/ of import files (one per annotator) and instructions
    replaces the tasks files. An existing OUT not written by deid-ds campaign is refused (exit
    status 2) unless --overwrite.
    """
    from deid_ds.campaign.build import campaign_table, prepare_campaign

    report = prepare_campaign(
        weak_dir,
        out,
        annotators,
        per_type=per_type,
        overlap=overlap,
        splits=split,
        seed=seed,
        log=(lambda message: None) if quiet else click.echo,
        overwrite=overwrite,
        tool=tool,
        select=select,
        predictions=predictions,
    )
    if verbose or not quiet:  # the counts per type and annotator are the summary, and all of it (-v prints the same)
        click.echo(campaign_table(report))
    click.echo(
        f"{report.documents} documents, {report.tasks} sentences, {report.overlap_documents} in the overlap; "
        f"written to {out}"
    )
