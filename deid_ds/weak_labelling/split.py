"""Deterministic choices, pure: which empty sentences are kept, and which split each patient lands in.

No random state: a keyed hash decides, so the result is the same whatever the batching, the worker
count or the engine.
"""

from __future__ import annotations

import hashlib
import math
from bisect import bisect_right
from collections.abc import Iterable, Sequence

from deid_ds.errors import InputError

SPLITS: tuple[str, ...] = ("train", "dev", "test")
DEFAULT_SPLIT: tuple[float, float, float] = (0.8, 0.1, 0.1)
#: Group of a note without ``id_patient``: its own document (it cannot share a split with anything).
NO_PATIENT_PREFIX = "document:"


def unit_hash(value: str, key: str = "") -> float:
    """A number in ``[0, 1)`` from a keyed BLAKE2b of ``value``: the same on every machine and engine."""
    digest = hashlib.blake2b(value.encode("utf-8"), digest_size=8, key=key.encode("utf-8")[:64]).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def keeps_empty_sentence(id_document: str, sentence_index: int, share: float) -> bool:
    """Whether a sentence without entity is kept, for a target ``share`` of them (no random state)."""
    if share <= 0.0:
        return False
    return share >= 1.0 or unit_hash(f"{id_document}\x00{sentence_index}", "keep-empty") < share


def kept_sentences(
    bounds: Sequence[int], ranges: Sequence[tuple[int, int]], id_document: str, share: float
) -> list[bool]:
    """Whether each sentence of a note is written out: every sentence holding a token of an entity, and
    those without entity that :func:`keeps_empty_sentence` keeps for ``share``.

    ``bounds`` are the note's sentence bounds (token indices: sentence ``i`` is tokens ``bounds[i]`` to
    ``bounds[i + 1]``), ``ranges`` its entities' first and last tokens.
    """
    n = max(len(bounds) - 1, 0)
    if share >= 1.0:
        return [True] * n
    keep = [False] * n
    for first, last in ranges:  # an entity cut by a sentence boundary is in both sentences
        for i in range(bisect_right(bounds, first) - 1, bisect_right(bounds, last)):
            keep[i] = True
    if share > 0.0:
        for i in range(n):
            keep[i] = keep[i] or keeps_empty_sentence(id_document, i, share)
    return keep


def patient_group(id_document: str, id_patient: str | None) -> str:
    """The unit of the split: the patient, or the document itself when the note names no patient."""
    return id_patient if id_patient is not None else NO_PATIENT_PREFIX + id_document


def assign_splits(groups: Iterable[str], shares: Sequence[float], seed: int = 0) -> dict[str, str]:
    """Split name of each group: groups ranked by a hash keyed by ``seed``, cut by cumulative share.

    Only the set of groups matters (duplicates and order are irrelevant), so the result is the same
    whatever the batching, the workers or the engine; with ``n`` groups, split ``k`` gets
    ``round(n * cumulative share)`` minus the previous boundary.
    """
    key = f"split:{seed}"
    ranked = sorted(set(groups), key=lambda group: (unit_hash(group, key), group))
    n = len(ranked)
    bounds, cumulative = [], 0.0
    for share in shares:
        cumulative += share
        bounds.append(min(n, math.floor(n * cumulative + 0.5)))
    bounds[-1] = n
    result: dict[str, str] = {}
    start = 0
    for name, end in zip(SPLITS, bounds):
        for group in ranked[start:end]:
            result[group] = name
        start = max(start, end)
    return result


def parse_split(value: str | Sequence[float]) -> tuple[float, float, float]:
    """``"0.8,0.1,0.1"`` (or a sequence) → three shares in ``[0, 1]`` summing to 1, else :class:`InputError`."""
    if isinstance(value, str):
        try:
            shares = tuple(float(part) for part in value.split(","))
        except ValueError:
            raise InputError(f"--split {value!r}: expected three numbers such as 0.8,0.1,0.1") from None
    else:
        shares = tuple(float(part) for part in value)
    if len(shares) != 3 or any(not 0.0 <= share <= 1.0 for share in shares):
        raise InputError(f"--split {value!r}: expected three shares between 0 and 1 (train,dev,test)")
    if abs(sum(shares) - 1.0) > 1e-6:
        raise InputError(f"--split {value!r}: the shares sum to {sum(shares):g}, not 1")
    return shares  # type: ignore[return-value]
