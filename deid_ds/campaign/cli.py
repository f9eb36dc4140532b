"""``deid-ds campaign`` (a thin wrapper over :func:`deid_ds.campaign.build.prepare_campaign`) and ``deid-ds
label-studio push|pull`` (over :mod:`deid_ds.campaign.label_studio_api`)."""

from __future__ import annotations

import click

from deid_ds.campaign.choices import SELECTIONS, TOOLS
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


@click.group("label-studio")
def label_studio_group():
    """Send a campaign's Label Studio tasks to a server and fetch the answers, over its HTTP API.

    The token is read from $LABEL_STUDIO_API_KEY (Account & Settings in Label Studio; the server started
    with --enable-legacy-api-token). docs/annotation-tools.md has the steps.
    """


def _server_options(command):
    command = click.option(
        "--prefix",
        default="deid-ds ",
        show_default=True,
        help="Project titles: PREFIX followed by the annotator's name.",
    )(command)
    return click.option(
        "--url", required=True, metavar="URL", help="The Label Studio server, e.g. http://127.0.0.1:8080."
    )(command)


def _token() -> str:
    import os

    from deid_ds.campaign.label_studio_api import TOKEN_ENV
    from deid_ds.errors import InputError

    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise InputError(f"set {TOKEN_ENV} to your Label Studio API token (Account & Settings)")
    return token


@label_studio_group.command("push")
@click.argument("campaign_dir", type=click.Path(path_type=str))
@_server_options
@quiet_option
@verbose_option
@handle_errors
def label_studio_push_command(campaign_dir, url, prefix, quiet, verbose):
    """Create one project per annotator with the campaign's labelling configuration and import their tasks.

    CAMPAIGN_DIR is a `deid-ds campaign --tool label-studio` output. Refused if a project has one of the
    titles already.
    """
    from deid_ds.campaign.label_studio_api import push

    projects = push(campaign_dir, url, _token(), prefix)
    if not quiet:  # one line per annotator is the whole summary (-v prints the same)
        for project in projects:
            click.echo(f"{project.annotator}: project {project.id}, {project.tasks} tasks imported")
    click.echo(f"{len(projects)} projects created at {url}")


@label_studio_group.command("pull")
@click.argument("campaign_dir", type=click.Path(path_type=str))
@_server_options
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(path_type=str),
    help="Directory of the exports, NAME-export.json per annotator (replaced as a whole, only if deid-ds wrote it).",
)
@overwrite_option
@click.option(
    "--export-type",
    type=click.Choice(["JSON", "JSON_MIN"]),
    default="JSON",
    show_default=True,
    help="Label Studio's export: the full JSON or JSON-MIN (NAME-export-min.json); agreement and gold read both.",
)
@quiet_option
@verbose_option
@handle_errors
def label_studio_pull_command(campaign_dir, url, prefix, out, overwrite, export_type, quiet, verbose):
    """Export each annotator's project, for `deid-ds agreement` and `deid-ds gold`.

    CAMPAIGN_DIR is the `deid-ds campaign --tool label-studio` output the projects were pushed from.
    """
    from deid_ds.campaign.label_studio_api import pull
    from deid_ds.io.output_dir import output_directory

    token = _token()
    with output_directory(out, "label-studio pull", inputs=[campaign_dir], overwrite=overwrite) as tmp:
        written = pull(campaign_dir, url, token, tmp, export_type, prefix)
    if not quiet:
        for name, path, count in written:
            click.echo(f"{name}: {count} {'answers' if export_type == 'JSON_MIN' else 'answered tasks'} in {path.name}")
    click.echo(f"{len(written)} exports written to {out}")
