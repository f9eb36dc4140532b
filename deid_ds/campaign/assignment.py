"""Who corrects which document: a primary annotator for each, and an overlap for agreement.

**Primary share.** Within each document type, the documents are put in a seeded pseudo-random order
and dealt round-robin to the annotators; the dealing goes on from one type to the next (the next type
starts with the annotator after the last one served). So every annotator gets, per type and in total,
the same number of documents give or take one: a primary share of ``1/k`` of the sample with ``k``
annotators (the paper: 5 annotators, 20% each).

**Overlap** (``overlap``, the paper's 20%). For each annotator ``a``, a share ``overlap`` of ``a``'s
primary documents — ``round(overlap × |primary(a)|)``, rounded half up and at least one when
``overlap > 0`` and ``a`` has documents — is *also* given to *every* other annotator. The chosen
documents are taken in a stratified order (:func:`~deid_ds.campaign.sampling.stratified_order`), so the
overlap is balanced across document types too. Consequences:

* every overlap document is annotated by all ``k`` annotators (≥ 2 as soon as ``k ≥ 2``), which gives
  Fleiss' kappa items with the full set of raters and every annotator pair the same overlap documents;
* each annotator corrects ``|primary(a)| + Σ_{b≠a} overlap × |primary(b)|`` documents, about
  ``(1 + (k - 1) × overlap) / k`` of the sample (the paper: 200 + 4 × 40 = 360 of 1000);
* ``overlap = 0`` gives no overlap (no agreement can be measured), ``overlap = 1`` full overlap.

Everything depends only on the set of (document, type) pairs, the annotators' order and the seed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from deid_ds.campaign.sampling import rank_key, stratified_order

#: Longest annotator name (UTF-8 bytes): ``tasks-NAME.jsonl`` must fit a file name (255 bytes).
MAX_ANNOTATOR_BYTES = 200
PRIMARY = "primary"
OVERLAP = "overlap"


@dataclass(frozen=True)
class Assignment:
    """One annotator's assignment of one document, as ``assignments.csv`` lists it."""

    id_document: str
    doc_type: str
    annotator: str
    role: str  # PRIMARY or OVERLAP


def parse_annotators(value: str | Sequence[str]) -> list[str]:
    """Annotator names from ``alice,bob,carol`` (or a list): non-empty, distinct, usable in session URLs
    and file names (letters, digits, ``_``, ``.``, ``-``)."""
    names = [name.strip() for name in (value.split(",") if isinstance(value, str) else value)]
    names = [name for name in names if name]
    if not names:
        raise ValueError("no annotator given (expected names such as alice,bob,carol)")
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"annotator names given twice: {', '.join(duplicates)}")
    bad = [name for name in names if not all(c.isalnum() or c in "_.-" for c in name) or name.startswith((".", "-"))]
    if bad:
        raise ValueError(f"annotator names must be letters, digits, '_', '.' or '-': {', '.join(bad)}")
    long = [name for name in names if len(name.encode("utf-8")) > MAX_ANNOTATOR_BYTES]
    if long:
        shown = ", ".join(f"{name[:20]}... ({len(name.encode('utf-8'))} bytes)" for name in long)
        raise ValueError(f"annotator names must be at most {MAX_ANNOTATOR_BYTES} bytes (they name files): {shown}")
    return names


def overlap_size(n_primary: int, overlap: float) -> int:
    """How many of an annotator's ``n_primary`` documents go to every other annotator too."""
    if not 0.0 <= overlap <= 1.0:
        raise ValueError("overlap must be a share between 0 and 1")
    if n_primary == 0 or overlap == 0.0:
        return 0
    return min(n_primary, max(1, math.floor(overlap * n_primary + 0.5)))


def assign_documents(
    documents: Mapping[str, str], annotators: Sequence[str], overlap: float = 0.2, seed: int = 0
) -> list[Assignment]:
    """Assign every document (id -> doc type) to a primary annotator, and the overlap to all others.

    Returns one :class:`Assignment` per (document, annotator), ordered by document id, then primary
    before overlap, then in the annotators' order.
    """
    annotators = parse_annotators(annotators)
    by_type: dict[str, list[str]] = {}
    for document, doc_type in documents.items():
        by_type.setdefault(doc_type, []).append(document)
    primary: dict[str, str] = {}
    turn = 0
    for doc_type in sorted(by_type):
        for document in sorted(by_type[doc_type], key=lambda d: rank_key(d, seed, f"assign:{doc_type}")):
            primary[document] = annotators[turn % len(annotators)]
            turn += 1
    shared: set[str] = set()
    if len(annotators) > 1:
        for annotator in annotators:
            owned = [(d, documents[d]) for d in primary if primary[d] == annotator]
            order = stratified_order(owned, seed, f"overlap:{annotator}")
            shared.update(order[: overlap_size(len(owned), overlap)])
    rank = {name: i for i, name in enumerate(annotators)}
    result = []
    for document in sorted(primary):
        owner = primary[document]
        result.append(Assignment(document, documents[document], owner, PRIMARY))
        if document in shared:
            result.extend(
                Assignment(document, documents[document], other, OVERLAP)
                for other in sorted(annotators, key=rank.get)
                if other != owner
            )
    return result


def annotators_of(assignments: Sequence[Assignment]) -> dict[str, tuple[str, list[str]]]:
    """Document id -> (primary annotator, the other annotators in assignment order)."""
    primary: dict[str, str] = {}
    others: dict[str, list[str]] = {}
    for item in assignments:
        if item.role == PRIMARY:
            primary[item.id_document] = item.annotator
        else:
            others.setdefault(item.id_document, []).append(item.annotator)
    return {document: (owner, others.get(document, [])) for document, owner in primary.items()}
