"""The official source files found in a folder, for ``deid-ds build-kb --sources DIR``.

A team that downloaded the BAN and the Annuaire Santé by hand has a folder of files under their
published names; looking them up by those names spares listing each one (and spares a shell glob,
which Windows shells do not expand).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deid_ds.errors import InputError

#: Published names of the Base Adresse Nationale files (per département, or the whole of France).
BAN_PATTERNS = ("adresses-*.csv.gz", "adresses-*.csv")
#: Published names of the Annuaire Santé extraction: the persons/activities table, or the zip that holds it.
DIRECTORY_PATTERNS = ("PS_LibreAcces_Personne_activite*.txt",)
DIRECTORY_ZIP_PATTERNS = ("PS_LibreAcces*.zip",)


@dataclass(frozen=True)
class FoundSources:
    """The files of each base found in a folder, sorted by name."""

    ban: tuple[str, ...]
    health_directory: tuple[str, ...]

    def describe(self) -> str:
        """One line for the user: how many files of each base (names only, never contents)."""
        return f"found {len(self.ban)} BAN file(s) and {len(self.health_directory)} Annuaire Santé file(s)"


def _matching(folder: Path, patterns: tuple[str, ...]) -> list[str]:
    return sorted({str(path) for pattern in patterns for path in folder.glob(pattern) if path.is_file()})


def find_sources(folder: str | Path) -> FoundSources:
    """The BAN and Annuaire Santé files of ``folder`` (not its subfolders), by their published names.

    The Annuaire Santé table is taken as a ``.txt`` when there is one, else from its published zip (both
    hold the same rows: reading both would count every professional twice). A folder with none of these
    names is an error that lists the names looked for.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"--sources {folder}: not a folder")
    ban = _matching(folder, BAN_PATTERNS)
    directory = _matching(folder, DIRECTORY_PATTERNS) or _matching(folder, DIRECTORY_ZIP_PATTERNS)
    if not ban and not directory:
        names = ", ".join(BAN_PATTERNS + DIRECTORY_PATTERNS + DIRECTORY_ZIP_PATTERNS)
        raise InputError(f"--sources {folder}: no file with an official name ({names})")
    return FoundSources(tuple(ban), tuple(directory))
