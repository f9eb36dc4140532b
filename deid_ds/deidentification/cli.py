"""``deid-ds deidentify``: a thin wrapper over :func:`deid_ds.deidentification.pipeline.deidentify`."""

from __future__ import annotations

import os

import click

from deid_ds.cli_common import (
    column_option,
    engine_options,
    failures_warning,
    handle_errors,
    overwrite_option,
    quiet_option,
    show_progress,
    verbose_option,
    warn,
)
from deid_ds.defaults import DEFAULT_BATCH_SIZE


@click.command("deidentify")
@click.argument("notes", type=click.Path(path_type=str))
@click.option(
    "--spans",
    type=click.Path(path_type=str),
    help=(
        "Entities to replace: spans.parquet of weak-label or predict, a gold table (Parquet/JSONL), or their directory."
    ),
)
@click.option(
    "--model",
    "-m",
    type=click.Path(path_type=str),
    metavar="MODELDIR",
    help="Predict the entities with this trained model instead (deid-ds predict, kept in a temporary directory).",
)
@click.option(
    "--with-rules",
    "with_rules",
    type=click.Path(path_type=str),
    metavar="KB",
    help="With --model: merge the weak labeller's spans (hybrid mode of predict).",
)
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(path_type=str),
    help=(
        "Output directory (replaced atomically, only if deid-ds wrote it; see --overwrite): notes.parquet, "
        "audit.parquet, documents.parquet, report.json."
    ),
)
@overwrite_option
@click.option(
    "--mode",
    type=click.Choice(["mask", "surrogate"]),
    default="surrogate",
    show_default=True,
    help="mask: [LABEL]; surrogate: realistic, consistent replacements.",
)
@click.option(
    "--kb",
    type=click.Path(path_type=str),
    help=(
        "Knowledge base (deid-ds build-kb) to draw surrogate communes, postcodes and streets from [default: a shipped "
        "list of Breton communes]."
    ),
)
@click.option(
    "--key",
    help=(
        "Secret key of the surrogate mapping (same key, same output) [default: the DEID_DS_KEY environment variable, "
        "else a random key, never written]. Prefer the variable: a command line is visible to other users. An empty "
        "key, or one shorter than 16 bytes, is refused (exit 1)."
    ),
)
@click.option(
    "--allow-short-key",
    is_flag=True,
    help=(
        "Accept a key shorter than 16 bytes. Dangerous: from one de-identified note and one original (a known name or "
        "date), a short key is found by trying candidates offline, and with it the whole mapping back to the "
        "originals. No key fingerprint is written then."
    ),
)
@click.option(
    "--keep-metadata",
    type=click.Choice(["drop", "surrogate"]),
    default="drop",
    show_default=True,
    help="Metadata columns (firstname ... email): dropped, or replaced by the surrogates used in the notes.",
)
@click.option(
    "--audit-originals",
    is_flag=True,
    help="Also write the original text of each replacement in audit.parquet (for the secure zone only).",
)
@click.option(
    "--fail-on-leak",
    is_flag=True,
    help=(
        "When the residual-leak check finds any of the patients' own values, or a note got no span and could not be "
        "checked (no metadata), leave OUT as it was, write the whole output to OUT.leaks instead (for inspection; a "
        "previous OUT.leaks is replaced) and exit with status 3."
    ),
)
@click.option(
    "--allow-unmatched-spans",
    is_flag=True,
    help=(
        "Run even when most notes get no span, or most documents of --spans are not among the notes (a subset of "
        "the notes). Spans matching none of the notes are refused all the same (exit 2). A note given no span is "
        "written with the status 'no spans', its text unchanged."
    ),
)
@click.option(
    "--hidden",
    type=click.Choice(["deidentify", "blank", "keep"]),
    default="deidentify",
    show_default=True,
    help=(
        "The views outside the visible text. deidentify: comments and <script> content blanked; <title>, <style>, "
        "attribute values (alt, title, href/mailto, src, data-*, meta content), doctype, PIs searched for the spans' "
        "texts, the patient's metadata, e-mails, phones and dates, replaced as in the text. blank: "
        "<title>/<style>/<template> blanked too. keep: left as they were (still checked)."
    ),
)
@click.option(
    "--keep-column",
    "keep_columns",
    multiple=True,
    metavar="NAME",
    help=(
        "Copy this input column unchanged into notes.parquet (repeatable). The columns deid-ds does not know are "
        "dropped otherwise: an export may carry identifiers in any column. A column of dates is shifted by each "
        "patient's offset (surrogate mode) or refused (mask mode)."
    ),
)
@click.option(
    "--keep-identifiers",
    is_flag=True,
    help=(
        "Leave the direct identifiers that are not one of the eight labels (NIR, INS, IPP, NDA/NIP, n° de dossier, "
        "d'examen, de séjour, RPPS, ADELI, a mutual's member number: MUTUELLE, an identity document's: "
        "PIECE_IDENTITE, a bank account: IBAN) as they are. Dangerous: each names a person by itself, and a NIR gives "
        "the birth year and month back. A warning is printed and the residual-leak check still counts them. By "
        "default they are found (cues, checksums, table columns) in every view and masked ([NIR], [IPP]...) or, in "
        "surrogate mode, replaced by keyed numbers of the same shape (a valid NIR, a valid RPPS, a valid IBAN of the "
        "same country). FINESS, SIRET and SIREN numbers (institutions) are kept."
    ),
)
@click.option(
    "--privacy",
    type=click.Choice(["shift", "dp"]),
    default="shift",
    show_default=True,
    help=(
        "Surrogate dates (surrogate mode). shift: every date of a patient moved by one keyed offset (intervals kept "
        "exactly; one true date known gives back all the others). dp: each distinct date, age and duration perturbed "
        "on its own in the unit it is written in, under epsilon*d-privacy (keyed Laplace noise, memoised per "
        "patient), communes drawn among similar ones; report.json holds the privacy accounting (docs/privacy.md). "
        "Refused with --mode mask."
    ),
)
@click.option(
    "--epsilon",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help=(
        "With --privacy dp: the epsilon of each distinct value, per unit of its distance (a day for a dated day, a "
        "month, a year, a week...): noise of scale 1/epsilon units. A patient's total is the sum over their distinct "
        "values (reported). Smaller: more private, less precise."
    ),
)
@click.option(
    "--k",
    "k",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="With --privacy dp: the number of nearest similar communes a commune's surrogate is drawn among.",
)
@click.option(
    "--dp-neighbourhood",
    type=click.Choice(["nearest", "groups"]),
    default="nearest",
    show_default=True,
    help=(
        "With --privacy dp: nearest draws among each commune's k nearest similar communes (the seed's mechanism; a "
        "rare surrogate can be the neighbour of one commune only); groups draws within fixed groups of k+1 to 2k+1 "
        "similar communes, so that every surrogate stands for at least k possible originals (docs/privacy.md)."
    ),
)
@click.option(
    "--dp-reference",
    metavar="YYYY-MM-DD",
    help=(
        "With --privacy dp: no date on or before this day is moved after it [default: the day it runs, written in "
        "report.json; give it to reproduce a run byte for byte]."
    ),
)
@click.option(
    "--birthdate-year", is_flag=True, help="Write a date equal to the patient's birthdate as its (shifted) year only."
)
@click.option(
    "--mask-format",
    default="[{label}]",
    show_default=True,
    help=(
        "The text written for a masked entity ({label} is the label), e.g. 'XXXX': every entity in mask mode, the "
        "fallbacks in surrogate mode."
    ),
)
@column_option
@click.option("--workers", "-j", type=click.IntRange(min=1), help="Worker processes [default: all cores].")
@click.option(
    "--batch-size",
    default=DEFAULT_BATCH_SIZE,
    show_default=True,
    type=click.IntRange(min=1),
    help="Notes per batch (the unit sent to a worker).",
)
@click.option("--device", default="auto", show_default=True, help="With --model: auto, cpu, cuda or cuda:N.")
@engine_options
@quiet_option
@verbose_option
@handle_errors
def deidentify_command(
    notes,
    spans,
    model,
    with_rules,
    out,
    overwrite,
    mode,
    kb,
    key,
    allow_short_key,
    keep_metadata,
    audit_originals,
    fail_on_leak,
    allow_unmatched_spans,
    hidden,
    keep_columns,
    keep_identifiers,
    privacy,
    epsilon,
    k,
    dp_neighbourhood,
    dp_reference,
    birthdate_year,
    mask_format,
    column,
    workers,
    batch_size,
    device,
    engine,
    spark_master,
    quiet,
    verbose,
):
    """Mask or replace the entities of HTML notes in the original HTML, and check nothing is left.

    \b
    NOTES is the notes table. The entities come from --spans (weak-label, predict, gold) or are
    predicted with --model. Surrogates are consistent per patient across their notes (names mapped
    part by part, dates shifted by a per-patient offset, a city with one of its own postcodes) and
    keyed: the same --key gives byte-identical output. The other views of the file (title,
    comments, attributes, scripts) are de-identified too (--hidden), and so are the direct
    identifiers no span names (NIR, INS, IPP, NDA, RPPS, IBAN...: see --keep-identifiers). The
    residual-leak check then looks for each patient's own metadata and each note's direct
    identifiers in every view of the de-identified notes, in every spelling (NFD accents,
    fullwidth letters, percent-encoded or base64 data: URLs); notes whose patient has no metadata
    are reported "not checked" for it, those with a value it cannot read (forms read:
    docs/input.md) "metadata unreadable"; --fail-on-leak makes any leak an error.

    \b
    A surrogate never equals its original nor carries one of its words. An entity that no surrogate
    can stand for safely (a DATE that is not a date, such as 15/15, 11,6 or 01:15; a PHONE too short;
    an EMAIL without @) is masked instead, never given invented digits: a fallback, listed per note in
    audit.parquet and documents.parquet (n_fallbacks) and counted in the summary.

    \b
    Exit status: 0 done; 1 bad input, a refused key or a write error; 2 OUT refused (an existing
    directory not written by deid-ds deidentify, unless --overwrite; an input's folder, the current or
    home directory, never), or --spans matching none of the notes, or (without --allow-unmatched-spans)
    leaving most notes without a span or mostly about other documents, refused before anything is
    written; 3 --fail-on-leak found leaks, or a note given no span that could not be checked (OUT
    untouched, output in OUT.leaks).
    """
    from deid_ds.deidentification.pipeline import deidentify, report_table
    from deid_ds.io.notes import parse_column_map

    report = deidentify(
        notes,
        out,
        spans=spans,
        model=model,
        with_rules=with_rules,
        mode=mode,
        kb=kb,
        key=key,
        allow_short_key=allow_short_key,
        keep_metadata=keep_metadata,
        audit_originals=audit_originals,
        birthdate_year=birthdate_year,
        mask_format=mask_format,
        column_map=parse_column_map(column),
        batch_size=batch_size,
        workers=workers or os.cpu_count() or 1,
        device=device,
        progress=show_progress(quiet),
        log=click.echo,
        engine=engine,
        spark_master=spark_master,
        hidden=hidden,
        keep_columns=keep_columns,
        fail_on_leak=fail_on_leak,
        overwrite=overwrite,
        keep_identifiers=keep_identifiers,
        allow_unmatched_spans=allow_unmatched_spans,
        privacy=privacy,
        epsilon=epsilon,
        k=k,
        dp_neighbourhood=dp_neighbourhood,
        dp_reference=dp_reference,
    )
    if report.documents_with_leaks and not report.kept_aside:
        warn(
            f"{report.documents_with_leaks:,} document(s) still hold their patient's metadata or a direct identifier "
            "after de-identification "
            f"(residual leaks: {out}/documents.parquet, n_leaks; --fail-on-leak refuses such an output)"
        )
    failed = failures_warning(report.failures, f"{report.written_to or out}/documents.parquet")
    if failed:
        warn(failed)
    from deid_ds.deidentification.pipeline import FALLBACK_WARN_SHARE, masked_labels

    for label, row in masked_labels(report).items():
        reasons = ", ".join(f"{reason} {n:,}" for reason, n in sorted(row["reasons"].items()))
        warn(
            f"{label}: {row['share']:.2f} % of the spans masked instead of replaced (above {FALLBACK_WARN_SHARE:g} %; "
            f"{row['masked']:,} of {row['spans']:,}: {reasons}; audit.parquet, fallback)"
        )
    if report.documents_without_patient:
        warn(
            f"{report.documents_without_patient:,} document(s) without id_patient: their surrogates are consistent "
            "within each note only, not across a patient's notes (map the column with -c id_patient=SOURCE)"
        )
    if report.dropped_columns:
        warn(
            f"{len(report.dropped_columns)} input column(s) dropped, not de-identified: "
            f"{', '.join(report.dropped_columns)} (--keep-column keeps one)"
        )
    if report.documents_without_spans:
        warn(
            f"{report.documents_without_spans:,} document(s) got no span: written with their text unchanged "
            f"(status 'no spans' in {report.written_to or out}/documents.parquet)"
        )
    if report.documents_not_checked:
        warn(
            f"{report.documents_not_checked:,} document(s) not checked for residual leaks: their patient has no "
            "metadata (names, birth date...) to look for"
        )
    if report.documents_metadata_unreadable:
        fields = ", ".join(report.leaks.get("metadata_unreadable", {}))
        warn(
            f"{report.documents_metadata_unreadable:,} document(s) with patient metadata that could not be read "
            f"({fields}; forms read: docs/input.md): those values were not looked for by the residual-leak check "
            "(documents.parquet, leak_check)"
        )
    if verbose or not quiet:  # the report table is the summary, and all of it (-v prints the same)
        click.echo(report_table(report))
    if report.kept_aside:
        found = [f"{report.leak_total} residual leak(s) found"] if report.leak_total else []
        if report.documents_without_spans_not_checked:
            found.append(
                f"{report.documents_without_spans_not_checked} document(s) got no span and could not be checked "
                "(no metadata)"
            )
        click.echo(
            f"--fail-on-leak: {'; '.join(found)}: {out} left as it was, "
            f"the output written to {report.written_to} for inspection",
            err=True,
        )
        raise SystemExit(3)
    click.echo(f"written to {out}")
