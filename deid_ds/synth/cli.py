"""``deid-ds synth``: a thin wrapper over :func:`deid_ds.synth.synthesize`."""

from __future__ import annotations

import click

from deid_ds.cli_common import handle_errors, print_report, quiet_option, seed_option, show_progress, verbose_option
from deid_ds.synth.config import GEOGRAPHIES, PHRASINGS

_SHARE = click.FloatRange(0.0, 1.0)


@click.command("synth")
@click.option("--notes", "-n", default=300, show_default=True, type=click.IntRange(min=1), help="Number of notes.")
@click.option(
    "--patients", "-p", type=click.IntRange(min=1), help="Number of patients (default: notes / 4). At most --notes."
)
@seed_option("Random seed: same options and seed, same bytes.", default=1)
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(file_okay=False, path_type=str),
    help="Output directory: notes.parquet, gold.parquet, gold.jsonl, README.md (and kb/ unless --kb-dir). "
    "An existing directory is written into only if it is empty or an earlier synth wrote it (see --overwrite).",
)
@click.option(
    "--overwrite",
    is_flag=True,
    help="Write into OUT (and --kb-dir) even when deid-ds did not write them (no .deid-ds.json marker inside): "
    "the files of the same names are replaced, the others kept. Never allowed: /, the home or current directory.",
)
@click.option(
    "--kb-dir",
    type=click.Path(file_okay=False, path_type=str),
    help="Where to write the knowledge-base files (default: OUT/kb).",
)
@click.option(
    "--missing-professionals",
    default=0.15,
    show_default=True,
    type=_SHARE,
    help="Share of the professionals mentioned in notes left out of the Annuaire Santé file.",
)
@click.option(
    "--missing-streets",
    default=0.2,
    show_default=True,
    type=_SHARE,
    help="Share of the streets mentioned in notes left out of the BAN files.",
)
@click.option(
    "--noise",
    default=0.3,
    show_default=True,
    type=_SHARE,
    help="0 = clean; higher = more character references, markup inside entities, metadata typos and gaps.",
)
@click.option(
    "--text-noise",
    default=0,
    show_default=True,
    type=click.IntRange(0, 3),
    metavar="LEVEL",
    help="Scan and typing noise in the notes' text, gold kept exact: 0 none; 1 light, 2 poor, 3 very poor "
    "(look-alike characters, lost or mangled accents, lost or inserted spaces, line-end hyphens, lines in capitals "
    "or lower case, dropped punctuation). Never inside tags or character references.",
)
@click.option(
    "--phrasing",
    default="train",
    show_default=True,
    type=click.Choice(list(PHRASINGS)),
    help="Template family: 'heldout' uses layouts and wordings 'train' never uses (for a generalisation test set); "
    "'all' mixes train and heldout; 'unseen' is a third house style written blind to the rules, a test set only; "
    "'exports' renders notes as warehouses receive them (PDF and CDA renderings, fixed-width exports, dictation, "
    "nurse transmissions, capital-letter letters, lab reports), 'exports-heldout' in other phrasings, "
    "'exports-all' mixes both.",
)
@click.option(
    "--geography",
    type=click.Choice(list(GEOGRAPHIES)),
    help="Where the world lies: 'brittany' (four Breton départements, the default of train/heldout/all/unseen) or "
    "'france' (Paris/Lyon/Marseille arrondissements, Corsica, overseas départements 971-976, CEDEX/BP/CS/TSA, "
    "buildings and quartiers, people of many origins; the default of the exports phrasings).",
)
@click.option(
    "--third-parties",
    type=_SHARE,
    help="Share of notes given a passage about the people around the patient (relatives, neighbours, guardians, "
    "friends; names of many origins the knowledge base does not hold) in many phrasings, spliced in the note's own "
    "style. Default: 0.4 of the 'exports' family's notes, none in the other families (their corpora stay as they "
    "were).",
)
@click.option(
    "--distractor-professionals",
    default=2500,
    show_default=True,
    type=click.IntRange(min=0),
    help="Directory entries for professionals no note mentions.",
)
@click.option(
    "--distractor-streets",
    default=20,
    show_default=True,
    type=click.IntRange(min=0),
    help="BAN streets per commune (on average) no note mentions.",
)
@quiet_option
@verbose_option
@handle_errors
def synth_command(
    notes,
    patients,
    seed,
    out,
    overwrite,
    kb_dir,
    missing_professionals,
    missing_streets,
    noise,
    text_noise,
    phrasing,
    geography,
    third_parties,
    distractor_professionals,
    distractor_streets,
    quiet,
    verbose,
):
    """Generate a synthetic sample: French clinical HTML notes with patient metadata, gold annotations,
    and BAN / Annuaire Santé source files in their official formats.

    Notes are written as they are generated (row groups of 1,024 notes), so memory does not grow with
    --notes beyond the patients and places the knowledge bases list: --notes 878217 runs on a small
    machine. The tables go into place only once complete; an interrupted run leaves the previous ones.

    \b
    Example (the committed sample):
      deid-ds synth --notes 300 --patients 80 --seed 1 --out data --kb-dir kb/sources
    """
    from deid_ds.synth import SynthConfig, canonical_command, summary_table, synthesize

    if patients is not None and patients > notes:
        raise click.BadParameter(
            f"{patients} patients for {notes} notes: every patient needs a note", param_hint="--patients"
        )
    config = SynthConfig(
        notes=notes,
        patients=patients,
        seed=seed,
        missing_professionals=missing_professionals,
        missing_streets=missing_streets,
        noise=noise,
        text_noise=text_noise,
        phrasing=phrasing,
        geography=geography,
        third_parties=third_parties,
        distractor_professionals=distractor_professionals,
        distractor_streets=distractor_streets,
    )
    counts = synthesize(
        config,
        out,
        kb_dir=kb_dir,
        command=canonical_command(config, out, kb_dir),
        progress=show_progress(quiet),
        overwrite=overwrite,
    )
    full = summary_table(counts)
    print_report(
        full=full,
        summary=[full.split("\n\n")[-1]],
        written=f"written to {out}" + (f" (knowledge bases in {kb_dir})" if kb_dir else ""),
        quiet=quiet,
        verbose=verbose,
    )
