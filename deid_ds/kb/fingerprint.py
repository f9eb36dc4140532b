"""A stable fingerprint of a built knowledge base: what a model trained on its features records.

The manifest already holds the sha256 of every table (checked by :func:`deid_ds.kb.manifest.verify_tables`),
so the fingerprint is the sha256 of those checksums alone: it changes when a table's content does, and
not with the build's date, duration or source paths (two builds of the same sources share it).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from deid_ds.kb.manifest import read_manifest


def kb_fingerprint(kb_dir: str | Path) -> str:
    """``sha256:<hex>`` of the table checksums of the knowledge base in ``kb_dir`` (its manifest)."""
    tables = read_manifest(kb_dir).get("tables", {})
    checksums = {name: info.get("sha256") for name, info in sorted(tables.items())}
    digest = hashlib.sha256(json.dumps(checksums, sort_keys=True).encode()).hexdigest()
    return f"sha256:{digest}"
