"""docs/guidelines.md: every label has its examples, the examples obey the boundaries the page states, and the
pages that point to it (the sample's README, the benchmarks page, the changelog) do so with links that resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deid_ds.model import LABELS
from tests.label.case_files import parse_marked

ROOT = Path(__file__).resolve().parents[1]
GUIDELINES = ROOT / "docs" / "guidelines.md"
_BLOCK = re.compile(r"^```text\n(.*?)^```", re.MULTILINE | re.DOTALL)

#: Words the page keeps outside a span: titles, civilities and roles before a name, prepositions before a date.
_OUTSIDE_AT_START = {
    "PATIENT": {"dr", "docteur", "pr", "m.", "mme", "madame", "mlle", "monsieur", "ide", "interne"},
    "DATE": {"le", "du", "au", "en", "à"},
}
_OUTSIDE_AT_START["DOCTOR"] = _OUTSIDE_AT_START["PATIENT"]


def _examples() -> list[tuple[str, str, int, int]]:
    """(label, span text, block number, line number) of every entity marked in the page's example blocks."""
    text = GUIDELINES.read_text(encoding="utf-8")
    found = []
    for block_no, block in enumerate(_BLOCK.findall(text), 1):
        for line_no, line in enumerate(block.splitlines(), 1):
            plain, spans = parse_marked(line, f"block {block_no}, line {line_no}")
            found.extend((span.label, plain[span.start : span.end], block_no, line_no) for span in spans)
    return found


def test_every_label_has_its_section_and_examples():
    text = GUIDELINES.read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("#")]
    labels_found = {label for label, *_ in _examples()}
    for label in LABELS:
        assert any(f"`{label}`" in heading for heading in headings), f"no section names {label}"
        assert label in labels_found, f"no example marks a {label}"


def test_examples_keep_titles_prepositions_cedex_and_arrondissements_outside():
    examples = _examples()
    assert len(examples) > 80
    for label, span, block_no, line_no in examples:
        where = f"block {block_no}, line {line_no}: {span!r}"
        assert span == span.strip(), where
        assert span.split()[0].lower() not in _OUTSIDE_AT_START.get(label, ()), where
        if label == "VILLE":
            assert "cedex" not in span.lower(), where
            assert not re.search(r"\s\d+(?:e|er)?$", span), where


@pytest.mark.parametrize(
    ("page", "target"),
    [
        ("data/README.md", "../docs/guidelines.md"),
        ("docs/benchmarks.md", "../CHANGELOG.md"),
        ("CHANGELOG.md", "docs/benchmarks.md"),
        ("CHANGELOG.md", "docs/guidelines.md"),
    ],
)
def test_links_to_the_documentation_resolve(page, target):
    text = (ROOT / page).read_text(encoding="utf-8")
    assert f"]({target})" in text
    assert ((ROOT / page).parent / target).resolve().is_file()
