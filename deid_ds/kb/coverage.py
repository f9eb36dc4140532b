"""Whether a knowledge base covers the notes' places: the départements of the notes' postcodes against the
départements of the knowledge base's addresses.

A knowledge base built from the BAN files of other départements than the notes' does not fail: its
gazetteer simply finds none of the notes' streets and communes, and fewer notes come out fully redacted
(0.67 → 0.44 on the sample). Nothing in the run says so, hence this check: the postcodes of the notes'
metadata (``zip``) and those the labeller found (``ZIP`` spans), by département (the first two digits,
three overseas), against the départements of the BAN rows of ``postcodes.parquet`` (the Annuaire
Santé's practice addresses cover the whole country and say nothing of the streets). Below
:data:`LOW_COVERAGE` of them covered, the command warns with the share. Counts and département codes
only: no postcode of a note is ever printed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

#: Below this share of the notes' postcodes in the knowledge base's départements, the command warns.
LOW_COVERAGE = 0.8
_POSTCODE = re.compile(r"(\d{4,5})(?:\.0*)?")


def departement(postcode) -> str | None:
    """The département of a postcode (``29200``, ``"29 200"``, ``29200.0``, ``1000`` for ``01000``), or None."""
    if postcode is None or isinstance(postcode, bool):
        return None
    match = _POSTCODE.fullmatch(re.sub(r"\s", "", str(postcode)))
    if match is None:
        return None
    code = match.group(1).zfill(5)
    return code[:3] if code.startswith(("97", "98")) else code[:2]


def kb_departements(kb_dir: str | Path) -> frozenset[str]:
    """The départements of the knowledge base's BAN postcodes (its addresses' coverage)."""
    table = pq.read_table(Path(kb_dir) / "postcodes.parquet", columns=["code_postal", "source"])
    codes = table.filter(pc.equal(table["source"], "ban"))["code_postal"].to_pylist()
    return frozenset(d for d in map(departement, set(codes)) if d is not None)


@dataclass
class KbCoverage:
    """How many of the notes' postcodes fall in the knowledge base's départements (``report.json``)."""

    postcodes: int = 0  # the notes' postcodes read (metadata values and ZIP spans), by occurrence
    covered: int = 0
    kb_departements: list[str] = field(default_factory=list)
    #: The départements of the notes' postcodes the knowledge base lacks, with their counts (most first).
    missing_departements: dict[str, int] = field(default_factory=dict)

    @property
    def share(self) -> float:
        return self.covered / self.postcodes if self.postcodes else 1.0

    def to_dict(self) -> dict:
        return {
            "postcodes": self.postcodes,
            "covered": self.covered,
            "share": round(self.share, 4),
            "kb_departements": self.kb_departements,
            "missing_departements": self.missing_departements,
        }


def kb_coverage(kb_dir: str | Path, postcodes: Iterable) -> KbCoverage:
    """The :class:`KbCoverage` of ``postcodes`` (values that do not read as a postcode are skipped)."""
    covered = kb_departements(kb_dir)
    found = Counter(d for d in map(departement, postcodes) if d is not None)
    missing = Counter({d: n for d, n in found.items() if d not in covered})
    return KbCoverage(
        postcodes=sum(found.values()),
        covered=sum(found.values()) - sum(missing.values()),
        kb_departements=sorted(covered),
        missing_departements=dict(sorted(missing.items(), key=lambda item: (-item[1], item[0]))),
    )


def coverage_warning(coverage: Mapping | None, command: str) -> str | None:
    """One line when the knowledge base covers less than :data:`LOW_COVERAGE` of the notes' postcodes
    (``coverage``: :meth:`KbCoverage.to_dict`, as the report holds it)."""
    if not coverage or not coverage["postcodes"] or coverage["share"] >= LOW_COVERAGE:
        return None
    lacking = ", ".join(list(coverage["missing_departements"])[:5])
    covering = ", ".join(coverage["kb_departements"]) or "none"
    return (
        f"{command}: the knowledge base covers {coverage['share']:.0%} of the notes' postcodes "
        f"({coverage['covered']:,} of {coverage['postcodes']:,}; its départements: {covering}): fewer streets and "
        f"communes will be found; the notes' are mostly in {lacking} (build-kb --ban-departements adds them)"
    )


def notes_postcodes(source) -> Counter:
    """The values of the notes' ``zip`` column with their counts, read alone (no HTML), on either engine:
    ``source`` as :meth:`~deid_ds.engine.local.LocalEngine.open` or the Spark engine opened it."""
    if "zip" not in source.note_columns:
        return Counter()
    if hasattr(source, "spark"):
        from pyspark.sql import functions as F

        frame = source.notes.frame.select(F.col("zip").cast("string").alias("zip")).where(F.col("zip").isNotNull())
        return Counter({row["zip"]: row["count"] for row in frame.groupBy("zip").count().collect()})
    notes = source.source
    values: Counter = Counter()
    for file in notes.files:
        values.update(v for v in pq.read_table(file, columns=[notes.columns["zip"]]).column(0).to_pylist() if v)
    return values


def run_coverage(kb_dir: str | Path, source, spans: Path, metadata: bool = True) -> dict:
    """A run's :meth:`KbCoverage.to_dict`: the notes' metadata ``zip`` (``source``, opened by either engine;
    not without ``metadata``) and the ``ZIP`` spans of the ``spans`` file it just wrote (``weak-label``,
    ``predict --with-rules``)."""
    table = pq.read_table(spans, columns=["label", "text"])
    found = table.filter(pc.equal(table["label"], "ZIP"))["text"].to_pylist()
    postcodes = notes_postcodes(source).elements() if metadata else ()
    return kb_coverage(kb_dir, [*postcodes, *found]).to_dict()
