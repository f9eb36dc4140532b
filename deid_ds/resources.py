"""Access to the data files shipped inside the package (abbreviations, Punkt parameters...).

Loaded once and cached: these lists are read by every worker process, and re-reading them per note
would dominate the cost of segmenting short notes.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path


def resource_path(name: str) -> Path:
    """Filesystem path of a shipped resource file."""
    return Path(str(resources.files("deid_ds") / "resources" / name))


def read_word_list(name: str) -> list[str]:
    """Lines of a shipped word list, without comments and blank lines, in file order."""
    words = []
    for line in resource_path(name).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            words.append(line)
    return words


@cache
def french_abbreviations() -> frozenset[str]:
    """Lower-case abbreviations (without their final period) that do not end a sentence."""
    return frozenset(read_word_list("abbreviations_fr.txt"))
