"""``deid-ds calibrate``: a thin wrapper over :func:`deid_ds.ner.calibrate.calibrate` (torch/flair load at run time)."""

from __future__ import annotations

import click

from deid_ds.cli_common import (
    column_option,
    handle_errors,
    print_report,
    quiet_option,
    segmentation_options,
    verbose_option,
)
from deid_ds.ner.calibrate import DEFAULT_TOLERANCE
from deid_ds.ner.thresholds import DEFAULT_OVERRIDE


@click.command("calibrate")
@click.argument("model", type=click.Path(path_type=str))
@click.argument("notes", type=str)
@click.option(
    "--gold",
    required=True,
    type=click.Path(path_type=str),
    help="Gold spans of (some of) these notes: a gold table (deid-ds gold) or a spans.parquet, or their directory.",
)
@click.option(
    "--kb", required=True, type=click.Path(path_type=str), help="Knowledge base (deid-ds build-kb) of the rules."
)
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(path_type=str),
    metavar="FILE.json",
    help="The curve and the chosen threshold (written atomically; predict --calibration FILE.json reads it).",
)
@click.option(
    "--override",
    default=DEFAULT_OVERRIDE,
    show_default=True,
    type=click.FloatRange(0.0, 1.0),
    help="Least score of a model span that overrides a weak rule span (fixed during the sweep).",
)
@click.option(
    "--tolerance",
    default=DEFAULT_TOLERANCE,
    show_default=True,
    type=click.FloatRange(0.0, 1.0),
    help="How far below the rules' precision the hybrid may go.",
)
@click.option("--no-metadata", is_flag=True, help="Do not use the patients' metadata columns (as predict).")
@click.option("--workers", "-j", default=1, show_default=True, type=click.IntRange(min=1), help="Worker processes.")
@click.option("--device", default="auto", show_default=True, help="auto (CUDA when available), cpu, cuda or cuda:N.")
@column_option
@segmentation_options(
    punkt_help="Punkt parameters, as given to weak-label (default: the shipped ones).",
    max_tokens_help="Longest sentence, in tokens, as for weak-label.",
)
@quiet_option
@verbose_option
@handle_errors
def calibrate_command(
    model,
    notes,
    gold,
    kb,
    out,
    override,
    tolerance,
    no_metadata,
    workers,
    device,
    column,
    punkt,
    max_tokens,
    quiet,
    verbose,
):
    """Choose the hybrid's threshold on gold-annotated dev notes (e.g. a campaign's corrected notes).

    \b
    Runs MODEL and the rules (--kb) once on NOTES, then merges their spans at each threshold from 0 to 1
    and scores the result against --gold: the threshold chosen redacts the most gold characters with an
    exact precision at most --tolerance below the rules' alone. Writes the curve and the choice to --out;
    `deid-ds predict --with-rules KB --calibration FILE.json` uses it (also read from MODEL/calibration.json).
    The model card is left as it is.
    """
    from deid_ds.io.notes import parse_column_map
    from deid_ds.ner.calibrate import calibrate

    written = calibrate(
        model,
        notes,
        gold,
        kb,
        out,
        override=override,
        tolerance=tolerance,
        use_metadata=not no_metadata,
        column_map=parse_column_map(column),
        punkt=punkt,
        max_tokens=max_tokens,
        workers=workers,
        device=device,
        log=(lambda message: None) if quiet else click.echo,
    )
    rules, chosen = written["rules"], written["chosen"]
    first = f"rules alone: precision {rules['precision']:.4f}, redaction {rules['redacted_recall']:.4f}"
    curve = [
        f"threshold {point['add']:.2f}: precision {point['precision']:.4f}, redaction {point['redacted_recall']:.4f}"
        for point in written["curve"]
    ]
    met = "" if chosen["constraint_met"] else " (no threshold keeps the rules' precision: the most precise)"
    last = (
        f"chosen threshold {chosen['add']:.2f}{met}: precision {chosen['precision']:.4f}, "
        f"redaction {chosen['redacted_recall']:.4f}"
    )
    print_report(
        full="\n".join([first, *curve, last]),
        summary=[first, last],
        more=f"the curve in {out}",
        written=f"written to {out}",
        quiet=quiet,
        verbose=verbose,
    )
