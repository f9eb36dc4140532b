"""The départements of postcodes as warehouses export them, and the share a knowledge base covers."""

from __future__ import annotations

import pytest

from deid_ds.kb.coverage import LOW_COVERAGE, coverage_warning, departement, kb_coverage


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("29200", "29"),
        (29200, "29"),
        ("29200.0", "29"),
        (29200.0, "29"),
        ("29 200", "29"),
        (1000, "01"),
        ("97400", "974"),
        ("Brest", None),
        ("292", None),
        (None, None),
        (True, None),
    ],
)
def test_departement_of_a_postcode(value, expected):
    assert departement(value) == expected


def test_coverage_share_and_warning(kb_dir):
    coverage = kb_coverage(kb_dir, ["29200", "35000", 56100, "75011", "75011", "n/a"]).to_dict()
    assert coverage["postcodes"] == 5 and coverage["covered"] == 3 and coverage["share"] == 0.6 < LOW_COVERAGE
    assert coverage["missing_departements"] == {"75": 2}
    warning = coverage_warning(coverage, "weak-label")
    assert "covers 60% of the notes' postcodes (3 of 5" in warning and "mostly in 75" in warning
    assert "75011" not in warning
    assert coverage_warning(kb_coverage(kb_dir, ["29200"]).to_dict(), "weak-label") is None
