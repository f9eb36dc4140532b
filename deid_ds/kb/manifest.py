"""Reading a built knowledge base: its manifest, the checksums of its files, its tables.

The manifest (``manifest.json``, written last by ``build-kb``) lists every file of the knowledge base
with its sha256: the gazetteer tables and, when ``build-kb`` compiled it, the matcher
(:mod:`deid_ds.kb.matcher`). A file that does not match is not used: a table is refused (an interrupted
or mixed build), the matcher is compiled again from the tables. Kept apart from :mod:`deid_ds.kb.build`
so that the matcher can read a knowledge base that the build module compiles a matcher for.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from deid_ds.errors import InputError

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "deid-ds/kb/1"
TABLES = ("streets", "places", "postcodes", "professionals", "names", "contacts", "communes")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_entry(path: Path) -> dict:
    """What the manifest records of a file: its size and sha256."""
    return {"size": path.stat().st_size, "sha256": sha256_of(path)}


def matches_entry(path: Path, entry: dict) -> bool:
    """Whether ``path`` is the file ``entry`` (:func:`file_entry`) describes: the size (no read), then the hash."""
    try:
        return path.stat().st_size == entry.get("size") and sha256_of(path) == entry.get("sha256")
    except OSError:
        return False


def is_knowledge_base(directory: Path) -> bool:
    """Whether ``directory`` holds a knowledge base's manifest (what ``build-kb`` of any version wrote)."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == MANIFEST_FORMAT


def read_manifest(kb_dir: str | Path) -> dict:
    """The manifest of a built knowledge base (one-line :class:`InputError` when there is none)."""
    kb_dir = Path(kb_dir)
    path = kb_dir / MANIFEST
    if not path.is_file():
        raise InputError(f"{kb_dir}: not a built knowledge base (no {MANIFEST}; run deid-ds build-kb --out {kb_dir})")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(f"{path}: not valid JSON (line {error.lineno})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: unreadable ({type(error).__name__})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise InputError(f"{path}: unknown format {found!r} (expected {MANIFEST_FORMAT!r})")
    return manifest


def verify_tables(kb_dir: str | Path) -> dict:
    """Check every table against the manifest's sha256 (an interrupted build is refused, not half-used)."""
    kb_dir = Path(kb_dir)
    manifest = read_manifest(kb_dir)
    for name, info in manifest["tables"].items():
        path = kb_dir / f"{name}.parquet"
        if not path.is_file():
            raise InputError(f"{path}: missing (the knowledge base is incomplete; rebuild it)")
        if sha256_of(path) != info["sha256"]:
            raise InputError(f"{path}: does not match {MANIFEST} (an interrupted or mixed build; rebuild it)")
    return manifest


def read_table(kb_dir: str | Path, name: str) -> pa.Table:
    """One gazetteer table of a built knowledge base."""
    if name not in TABLES:
        raise ValueError(f"unknown table {name!r} (one of {', '.join(TABLES)})")
    return pq.read_table(Path(kb_dir) / f"{name}.parquet")
