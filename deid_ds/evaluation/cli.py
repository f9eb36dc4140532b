"""``deid-ds evaluate``: a thin wrapper over :func:`deid_ds.evaluation.evaluate`."""

from __future__ import annotations

import click

from deid_ds.cli_common import (
    ManyValuesOption,
    column_option,
    files_option,
    handle_errors,
    print_report,
    quiet_option,
    seed_option,
    show_progress,
    verbose_option,
    warn,
)
from deid_ds.defaults import DEFAULT_MAX_TOKENS


@click.command("evaluate")
@click.option(
    "--gold",
    required=True,
    type=click.Path(path_type=str),
    help="Gold spans: Parquet or JSONL (id_document, label, html_start, html_end), or a directory holding one.",
)
@files_option(
    "--pred",
    "predictions",
    required=True,
    help=(
        "Systems' spans.parquet (weak-label, predict) or their directories; the first is the reference of the F1 "
        "differences."
    ),
)
@click.option(
    "--name",
    "names",
    cls=ManyValuesOption,
    multiple=True,
    help="Name of each --pred system, in order (several after one --name) [default: the directory names].",
)
@click.option(
    "--notes",
    type=click.Path(path_type=str),
    help=(
        "The notes table: token-level redaction recall (the gold notes are segmented as the labeller does) and "
        "document types."
    ),
)
@column_option
@click.option(
    "--punkt",
    type=click.Path(exists=True, dir_okay=False),
    help="Punkt parameters used by weak-label/predict, if not the shipped ones (with --notes).",
)
@click.option(
    "--max-tokens",
    default=DEFAULT_MAX_TOKENS,
    show_default=True,
    type=click.IntRange(min=1),
    help="Longest sentence in tokens, as for weak-label (with --notes).",
)
@click.option("--json", "json_out", type=click.Path(path_type=str), help="Write every score to this JSON file.")
@click.option("--figure", type=click.Path(path_type=str), help="Write a PNG of F1 per label per system.")
@click.option(
    "--html",
    type=click.Path(path_type=str),
    help=(
        "Write a self-contained HTML report (tables, figure, error examples). With --notes it shows note text "
        "around the errors: keep it where the notes may be."
    ),
)
@click.option(
    "--examples",
    "examples_per_label",
    default=3,
    show_default=True,
    type=click.IntRange(min=0),
    help="Error examples per system, label and kind (false positive, false negative) in --html.",
)
@click.option(
    "--bootstrap",
    "n_bootstrap",
    default=1000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Bootstrap resamples of documents for the micro F1 intervals.",
)
@seed_option("Seed of the bootstrap.")
@click.option(
    "--confidence",
    default=0.95,
    show_default=True,
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="Level of the intervals.",
)
@quiet_option
@verbose_option
@handle_errors
def evaluate_command(
    gold,
    predictions,
    names,
    notes,
    column,
    punkt,
    max_tokens,
    json_out,
    figure,
    html,
    examples_per_label,
    n_bootstrap,
    seed,
    confidence,
    quiet,
    verbose,
):
    """Score systems' spans against a gold standard, side by side.

    \b
    Entity-level exact-match precision, recall and F1 per label and micro (the paper's metric),
    lenient (overlap) match, label-blind redaction recall and fully redacted documents, per document
    type, with paired bootstrap 95% intervals on micro F1 over documents. Evaluated documents: the
    gold's (every id_document of the gold table); predictions on other documents are ignored.
    Predictions sharing no document with the gold are refused (exit 1: an id mismatch, not a
    score); a gold document without any prediction is warned about (counts only). Gold documents
    the predictions' model was trained on (train --gold-train) or calibrated on (calibrate) are left
    out of every system's scores, with a warning (counts only).
    """
    from deid_ds.evaluation import evaluate
    from deid_ds.io.notes import parse_column_map

    result = evaluate(
        gold,
        list(predictions),
        names=list(names) or None,
        notes=notes,
        column_map=parse_column_map(column),
        punkt=punkt,
        max_tokens=max_tokens,
        json_out=json_out,
        figure=figure,
        html=html,
        examples_per_label=examples_per_label,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
        progress=show_progress(quiet),
    )
    if result.documents_learnt:
        warn(
            f"{result.documents_learnt:,} gold document(s) left out: the predictions' model was trained "
            "(train --gold-train) or calibrated (calibrate) on them; scores on them would not generalise"
        )
    for name, covered in result.coverage.items():
        if covered.partial:
            warn(
                f"{name}: no prediction on {covered.gold_documents_without_predictions:,} of the "
                f"{covered.gold_documents:,} gold document(s), scored as nothing predicted there "
                f"({covered.prediction_documents_outside_gold:,} of its {covered.prediction_documents:,} "
                "document(s) are not in the gold: ignored); check that both are about the same notes"
            )
    written = [
        f"{what} written to {path}"
        for what, path in (("scores", json_out), ("figure", figure), ("report", html))
        if path
    ]
    if html and notes:
        warn(
            f"{html} holds note text (the context of the error examples): keep it where the notes may be, "
            "do not send or publish it"
        )
    print_report(
        full=result.table(),
        summary=evaluation_summary(result),
        more=html or json_out,
        written="; ".join(written) or f"{result.documents:,} documents evaluated (--json FILE keeps every score)",
        quiet=quiet,
        verbose=verbose,
    )


def evaluation_summary(result) -> list[str]:
    """One line per system: exact micro F1 (the paper's metric) and the redaction recall."""
    scores = result.comparison.scores
    lines = [f"{result.documents:,} documents evaluated"]
    width = max((len(name) for name in scores), default=0)
    for name, score in scores.items():
        lines.append(f"  {name:<{width}}  micro F1 {score.micro.f1:.3f}  redaction recall {score.redacted_recall:.3f}")
    return lines
