"""``deid-ds build-kb`` and ``deid-ds kb-info``: thin wrappers over :mod:`deid_ds.kb.build`."""

from __future__ import annotations

import click

from deid_ds.cli_common import handle_errors, quiet_option


def _split_codes(values: tuple[str, ...]) -> list[str]:
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


@click.command("build-kb")
@click.option(
    "--ban",
    multiple=True,
    metavar="PATH_OR_URL",
    help="A BAN file adresses-XX.csv.gz (or adresses-france.csv.gz), local or by URL. Repeatable.",
)
@click.option(
    "--ban-departements",
    multiple=True,
    metavar="CODES",
    help="Département codes to download from the official BAN URL pattern, e.g. 35,29,22,56 (or 'france').",
)
@click.option(
    "--health-directory",
    multiple=True,
    metavar="PATH_OR_URL",
    help="The Annuaire Santé PS_LibreAcces zip or PS_LibreAcces_Personne_activite_*.txt, local or by URL.",
)
@click.option(
    "--ca-bundle",
    type=click.Path(exists=True, dir_okay=False),
    help="PEM bundle to verify HTTPS with (the Annuaire Santé server's chain is IGC-Santé).",
)
@click.option(
    "--out",
    "-o",
    default="kb",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Gazetteer directory (downloads are kept in OUT/downloads).",
)
@click.option(
    "--offline", is_flag=True, help="Never use the network: URLs must already be downloaded in OUT/downloads."
)
@click.option("--refresh", is_flag=True, help="Ask the servers whether downloaded files changed (conditional GET).")
@click.option("--no-matcher", is_flag=True, help="Do not compile the matcher now (it is compiled on first use).")
@quiet_option
@handle_errors
def build_kb_command(ban, ban_departements, health_directory, ca_bundle, out, offline, refresh, no_matcher, quiet):
    """Build gazetteers from the BAN and the Annuaire Santé, and compile the matcher.

    \b
    Offline, from local files:
      deid-ds build-kb --ban kb/sources/adresses-35.csv.gz --health-directory kb/sources/PS_LibreAcces_Personne_activite_202401150830.txt
    Downloading:
      deid-ds build-kb --ban-departements 35,29,22,56 --health-directory https://service.annuaire.sante.fr/annuaire-sante-webservices/V300/services/extraction/PS_LibreAcces --ca-bundle igc-sante.pem
    """  # noqa: E501 -- --help prints the \b example lines verbatim (one carries the Annuaire Santé URL): not wrappable
    from deid_ds.kb.build import build_kb
    from deid_ds.kb.matcher import load_matcher

    report = build_kb(
        out,
        ban=ban,
        ban_departements=_split_codes(ban_departements),
        health_directory=health_directory,
        ca_bundle=ca_bundle,
        offline=offline,
        refresh=refresh,
        progress=not quiet,
    )
    if not no_matcher:
        load_matcher(out)
    click.echo(kb_tables(out))
    click.echo(f"written to {out} in {report.seconds:.1f} s")


@click.command("kb-info")
@click.argument("kb_dir", default="kb", type=click.Path(file_okay=False))
@handle_errors
def kb_info_command(kb_dir):
    """Print the manifest of a built knowledge base: sources, rows read/kept/rejected, tables."""
    click.echo(kb_tables(kb_dir))


def kb_tables(kb_dir) -> str:
    """The manifest as two tables (sources, gazetteers)."""
    from pathlib import Path

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
