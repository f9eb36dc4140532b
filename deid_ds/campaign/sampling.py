"""Stratified choice of the campaign's documents: ``per_type`` documents of each document type.

The paper drew 250 documents at random in each source format. Here the stratum is ``doc_type`` (the
column a warehouse export has; a source format can be mapped to it). Within a stratum, documents are
ranked by a keyed hash of their id (:func:`rank_key`) and the first ``per_type`` are taken, so that:

* the choice depends only on the set of documents and the seed — not on the order of the input;
* it is nested: asking for more documents later keeps the ones already chosen (a campaign can grow);
* a stratum with fewer documents than asked is taken whole, and the shortfall is reported.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

_MAX_KEY = 64  # bytes: BLAKE2b's longest key (a longer one is hashed first; a shorter one kept, as before)
#: Stratum of a document without a type.
NO_TYPE = "(none)"


def rank_key(identifier: str, seed: int, purpose: str) -> tuple[int, str]:
    """A deterministic pseudo-random rank for ``identifier``: a BLAKE2b hash keyed by seed and purpose.

    The same on every machine and Python version (unlike ``random`` seeded from a string across
    implementations, or ``hash``), and independent of the other identifiers; ties (never in practice)
    fall back on the identifier itself.
    """
    key = f"{purpose}:{seed}".encode()
    if len(key) > _MAX_KEY:  # a long annotator name or document type: BLAKE2b takes at most 64 bytes of key
        key = hashlib.sha256(key).digest()
    digest = hashlib.blake2b(identifier.encode("utf-8"), digest_size=8, key=key).digest()
    return int.from_bytes(digest, "big"), identifier


@dataclass
class Sample:
    """The chosen documents, per document type, with what was available and what was asked."""

    chosen: dict[str, list[str]] = field(default_factory=dict)
    available: dict[str, int] = field(default_factory=dict)
    per_type: int | None = None

    @property
    def documents(self) -> dict[str, str]:
        """Chosen document id -> its document type."""
        return {document: doc_type for doc_type, documents in self.chosen.items() for document in documents}

    @property
    def short_types(self) -> dict[str, int]:
        """Document types with fewer documents than asked, and how many they had (all taken)."""
        if self.per_type is None:
            return {}
        return {doc_type: n for doc_type, n in self.available.items() if n < self.per_type}


def sample_documents(
    documents: Mapping[str, str | None],
    per_type: int | None,
    seed: int = 0,
    priority: Mapping[str, float] | None = None,
) -> Sample:
    """Choose ``per_type`` documents of each type from ``documents`` (id -> doc type); ``None``: all.

    ``priority`` (id -> score, :mod:`~deid_ds.campaign.selection`): within each type, the documents of
    highest score come first, the hash rank breaking ties; ``None`` is the random draw.

    Types are returned sorted; within a type, documents in their hash rank (the order the assignment
    then deals them in is its own).
    """
    if per_type is not None and per_type < 1:
        raise ValueError("per_type must be at least 1")
    strata: dict[str, list[str]] = {}
    for document, doc_type in documents.items():
        strata.setdefault(doc_type if doc_type else NO_TYPE, []).append(document)
    sample = Sample(per_type=per_type)
    for doc_type in sorted(strata):
        ranked = sorted(strata[doc_type], key=lambda d: rank_key(d, seed, f"sample:{doc_type}"))
        if priority is not None:  # stable: equal scores keep their random order
            ranked.sort(key=lambda d: -priority.get(d, 0.0))
        sample.available[doc_type] = len(ranked)
        sample.chosen[doc_type] = ranked if per_type is None else ranked[:per_type]
    return sample


def stratified_order(documents: Iterable[tuple[str, str]], seed: int, purpose: str) -> list[str]:
    """Documents (id, type) in an order where every prefix holds each type in proportion.

    Each type's documents are ranked by hash; the ``i``-th of ``n`` documents of a type gets the
    position ``(i + 0.5) / n``, and all are sorted by it (ties by a hash of the type). Taking the first
    ``k`` documents of this order gives each type ``k * n_type / n`` documents, rounded, so a share
    taken from it (the overlap) is balanced across document types.
    """
    by_type: dict[str, list[str]] = {}
    for document, doc_type in documents:
        by_type.setdefault(doc_type, []).append(document)
    keyed = []
    for doc_type, members in by_type.items():
        ranked = sorted(members, key=lambda d: rank_key(d, seed, f"{purpose}:{doc_type}"))
        type_key = rank_key(doc_type, seed, f"{purpose}:types")
        for i, document in enumerate(ranked):
            keyed.append(((i + 0.5) / len(ranked), type_key, document))
    keyed.sort()
    return [document for _, _, document in keyed]
