"""Shared fixtures: paths to the shared format samples and a writer of small notes tables."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

#: Tests on the verbatim official sample rows of ``../shared/formats`` (kept beside the checkout, not
#: copied into it). CI has them; a checkout elsewhere skips these tests with this reason, visibly.
requires_shared_formats = pytest.mark.skipif(
    not (SHARED / "formats").is_dir(), reason="official format samples not found at ../shared/formats beside this checkout"
)


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
