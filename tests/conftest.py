"""Shared fixtures: the path to the official format samples, a writer of small notes tables, and the
generated name-like notes of the labeller's property tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]

#: Verbatim official sample rows of the BAN and of the Annuaire Santé, shipped with the tests
#: (``tests/data/formats/README.md`` says where they come from and under which licence).
FORMATS = Path(__file__).resolve().parent / "data" / "formats"


#: Words and separators of :func:`name_notes`: names in every casing, particles, initials, titles,
#: words that stop a name run, digits and punctuation, joined by blanks, line breaks and tabs.
NAME_WORDS = [
    "Jeanne",
    "LE",
    "GALL",
    "Le",
    "Gall",
    "de",
    "d'",
    "J.",
    "J.-P.",
    "M.",
    "Dr",
    "Mme",
    "Saint-Brieuc",
    "janvier",
    "Janvier",
    "CEDEX",
    "le",
    "la",
    "12",
    "35000",
    ",",
    ":",
    "-",
    "Morvan",
    "MORVAN",
    "Kerbrat",
    "von",
    "A",
    "Ø",
]
NAME_SEPARATORS = [" ", " ", " ", "  ", "", "\n", "\t", " \n ", "\u00a0", "\r"]


@st.composite
def name_notes(draw, extra_words: tuple[str, ...] = ()) -> str:
    """A short text of :data:`NAME_WORDS` (and ``extra_words``), each followed by a separator."""
    words = draw(st.lists(st.sampled_from(NAME_WORDS + list(extra_words)), min_size=0, max_size=40))
    seps = draw(st.lists(st.sampled_from(NAME_SEPARATORS), min_size=len(words), max_size=len(words)))
    return "".join(w + s for w, s in zip(words, seps))


class NetworkUsed(AssertionError):
    """Raised by :func:`cut_network` when code under test tries to reach the network."""


def _refuse(*args, **kwargs):
    raise NetworkUsed("the code under test tried to reach the network")


@pytest.fixture
def cut_network(monkeypatch):
    """Sockets, urllib, requests and Flair's downloader all raise :class:`NetworkUsed`: the model
    commands must run on what was trained or shipped locally, never on a hub download."""
    import socket
    import urllib.request

    import flair.embeddings.token
    import flair.file_utils
    import requests

    monkeypatch.setattr(socket.socket, "connect", _refuse)
    monkeypatch.setattr(urllib.request, "urlopen", _refuse)
    monkeypatch.setattr(requests.Session, "request", _refuse)
    monkeypatch.setattr(flair.file_utils, "cached_path", _refuse)
    monkeypatch.setattr(flair.embeddings.token, "cached_path", _refuse)


@pytest.fixture
def write_notes(tmp_path):
    """Write a list of dict rows as a Parquet notes table and return its path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(rows: list[dict], name: str = "notes.parquet", schema=None) -> Path:
        path = tmp_path / name
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
        return path

    return write


@pytest.fixture(scope="session")
def kb_dir(tmp_path_factory) -> Path:
    """A knowledge base built once per test session from the sample sources in ``kb/sources``."""
    from deid_ds.kb.build import build_kb

    sources = REPO / "kb" / "sources"
    out = tmp_path_factory.mktemp("kb")
    build_kb(
        out,
        ban=sorted(str(p) for p in sources.glob("adresses-*.csv.gz")),
        health_directory=sorted(str(p) for p in sources.glob("PS_LibreAcces_Personne_activite_*.txt")),
        progress=False,
    )
    return out
