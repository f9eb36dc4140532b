"""``deid-ds build-kb`` and ``deid-ds kb-info``: thin wrappers over :mod:`deid_ds.kb.build`."""

from __future__ import annotations

from pathlib import Path

import click

from deid_ds.cli_common import files_option, handle_errors, print_report, quiet_option, show_progress, verbose_option


def _split_codes(values: tuple[str, ...]) -> list[str]:
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


@click.command("build-kb")
@files_option(
    "--ban",
    metavar="PATH_OR_URL",
    help="BAN files adresses-XX.csv.gz (or adresses-france.csv.gz), local or by URL.",
)
@click.option(
    "--ban-departements",
    multiple=True,
    metavar="CODES",
    help="Département codes to download from the official BAN URL pattern, e.g. 35,29,22,56 (or 'france').",
)
@files_option(
    "--health-directory",
    metavar="PATH_OR_URL",
    help="The Annuaire Santé PS_LibreAcces zip or PS_LibreAcces_Personne_activite_*.txt, local or by URL.",
)
@click.option(
    "--sources",
    type=click.Path(exists=True, file_okay=False),
    help=(
        "A folder of downloaded sources: its files with the official names (adresses-*.csv.gz, adresses-*.csv, "
        "PS_LibreAcces_Personne_activite*.txt, else the PS_LibreAcces*.zip) are read, added to --ban and "
        "--health-directory."
    ),
)
@click.option(
    "--population",
    type=click.Path(exists=True, dir_okay=False),
    help=(
        "An INSEE population file (CSV, ';' or ','; code in CODGEO/DEPCOM/COM/code_insee or DEP+CODCOM, population in "
        "PMUN/PTOT/population/Pyy_POP): the communes' size for deidentify --privacy dp (else their BAN address count)."
    ),
)
@click.option(
    "--ca-bundle",
    type=click.Path(exists=True, dir_okay=False),
    help="PEM bundle to verify HTTPS with (the Annuaire Santé server's chain is IGC-Santé).",
)
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(file_okay=False),
    help="Gazetteer directory (downloads are kept in OUT/downloads); not the --sources folder.",
)
@click.option(
    "--offline", is_flag=True, help="Never use the network: URLs must already be downloaded in OUT/downloads."
)
@click.option("--refresh", is_flag=True, help="Ask the servers whether downloaded files changed (conditional GET).")
@click.option("--no-matcher", is_flag=True, help="Do not compile the matcher now (it is compiled on first use).")
@click.option(
    "--overwrite",
    is_flag=True,
    help=(
        "Write into OUT even when it is neither empty nor a knowledge base deid-ds wrote (its tables, matcher and "
        "manifest are replaced, nothing else). Never allowed: /, the home or current directory, a source or the "
        "--sources folder, or a directory holding one."
    ),
)
@quiet_option
@verbose_option
@handle_errors
def build_kb_command(
    ban,
    ban_departements,
    health_directory,
    sources,
    population,
    ca_bundle,
    out,
    offline,
    refresh,
    no_matcher,
    overwrite,
    quiet,
    verbose,
):
    """Build gazetteers from the BAN and the Annuaire Santé, and compile the matcher.

    \b
    Offline, from the files of a folder (found by their official names):
      deid-ds build-kb --sources kb/sources --out kb/built
    Offline, from local files:
      deid-ds build-kb --out kb/built --ban kb/sources/adresses-35.csv.gz --health-directory kb/sources/PS_LibreAcces_Personne_activite_202401150830.txt
    Downloading:
      deid-ds build-kb --out kb/built --ban-departements 35,29,22,56 --health-directory https://service.annuaire.sante.fr/annuaire-sante-webservices/V300/services/extraction/PS_LibreAcces --ca-bundle igc-sante.pem
    """  # noqa: E501 -- --help prints the \b example lines verbatim (one carries the Annuaire Santé URL): not wrappable
    from deid_ds.kb.build import build_kb

    if sources:
        from deid_ds.kb.sources_dir import find_sources

        if Path(out).resolve() == Path(sources).resolve():
            raise click.BadParameter("the gazetteers go beside the sources, not among them", param_hint="--out")
        found = find_sources(sources)
        ban, health_directory = (*ban, *found.ban), (*health_directory, *found.health_directory)
        if not quiet:
            click.echo(f"{sources}: {found.describe()}")
    report = build_kb(
        out,
        ban=ban,
        ban_departements=_split_codes(ban_departements),
        health_directory=health_directory,
        ca_bundle=ca_bundle,
        offline=offline,
        refresh=refresh,
        progress=show_progress(quiet),
        matcher=not no_matcher,
        inputs=(sources,),
        overwrite=overwrite,
        population=population,
    )
    print_report(
        full=kb_tables(out),
        summary=kb_summary(out),
        more=f"deid-ds kb-info {out}",
        written=f"written to {out} in {report.seconds:.1f} s",
        quiet=quiet,
        verbose=verbose,
    )


@click.command("kb-info")
@click.argument("kb_dir", default="kb", type=click.Path(file_okay=False))
@handle_errors
def kb_info_command(kb_dir):
    """Print the manifest of a built knowledge base: sources, rows read/kept/rejected, tables."""
    click.echo(kb_tables(kb_dir))


def kb_summary(kb_dir) -> list[str]:
    """Two lines: the sources read, and the gazetteers' sizes."""
    from deid_ds.kb.build import read_manifest

    manifest = read_manifest(kb_dir)
    sources = manifest["sources"]
    kept = sum(source["rows_kept"] for source in sources)
    rejected = sum(sum(source["rejected"].values()) for source in sources)
    tables = ", ".join(f"{name} {info['rows']:,}" for name, info in manifest["tables"].items())
    return [f"{len(sources)} source file(s): {kept:,} rows kept, {rejected:,} rejected", f"gazetteers: {tables}"]


def kb_tables(kb_dir) -> str:
    """The manifest as two tables (sources, gazetteers)."""

    from deid_ds.kb.build import read_manifest
    from deid_ds.report import format_table

    manifest = read_manifest(kb_dir)
    sources = [
        [
            source["base"],
            Path(source["path"]).name,
            source["size"],
            source["rows_read"],
            source["rows_kept"],
            sum(source["rejected"].values()),
            source["fetched_at"][:10],
            source["sha256"][:12],
        ]
        for source in manifest["sources"]
    ]
    parts = [
        format_table(
            ["base", "file", "bytes", "rows read", "kept", "rejected", "date", "sha256"],
            sources,
            title=f"knowledge base {kb_dir} (deid-ds {manifest['deid_ds_version']}, built {manifest['built_at']})",
        ),
        "",
        format_table(["table", "rows"], [[name, info["rows"]] for name, info in manifest["tables"].items()]),
    ]
    rejected = [[Path(s["path"]).name, reason, n] for s in manifest["sources"] for reason, n in s["rejected"].items()]
    if rejected:
        parts += ["", format_table(["file", "rejected because", "rows"], rejected)]
    return "\n".join(parts)
