"""The regression cases of ``tests/label/cases/``: each example of the guidelines, labelled exactly.

Every ``*.txt`` file there holds short notes with their entities marked inline (the format is in
``cases/README.md``). Each case runs through the weak labeller, which must return exactly the marked
spans: same offsets, same labels, nothing more. In the files of the four pattern labels (DATE, PHONE,
EMAIL, ZIP) a case without patient metadata or knowledge base is also given to that label's pattern
function alone, which must find the same spans of its label, uncertain candidates included, and to the
four pattern functions together (:func:`find_patterns` with its uncertain candidates), which must find
exactly the marked DATE, PHONE, EMAIL and ZIP spans: the rule is pinned, not only the labeller around
it. Cases under a ``# known gap`` heading are what the guidelines
ask and the labeller does not do yet: they are expected to fail (strictly, so a fix shows).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deid_ds.label.labeller import WeakLabeller
from deid_ds.label.patterns import find_dates, find_emails, find_patterns, find_phones, find_zips
from deid_ds.model import LABELS, PatientMetadata
from deid_ds.segmentation.tokens import tokenize
from tests.label.case_files import CASES, Case, CaseFileError, Span, parse_cases, parse_marked, read_kb

#: The pattern function of each pattern label's file, checked alone on the file's plain cases.
PATTERN_FUNCTIONS = {"date": find_dates, "phone": find_phones, "email": find_emails, "zip": find_zips}
PATTERN_LABELS = {"DATE", "PHONE", "EMAIL", "ZIP"}

ALL_CASES = [case for path in sorted(CASES.glob("*.txt")) if path.name != "kb.txt" for case in parse_cases(path)]


def _params(cases: list[Case]) -> list:
    return [
        pytest.param(
            case,
            id=case.id,
            marks=[pytest.mark.xfail(strict=True, reason=case.rule)] if case.known_gap else [],
        )
        for case in cases
    ]


@pytest.fixture(scope="module")
def labellers() -> dict[bool, WeakLabeller]:
    """The labeller without knowledge base, and the one over ``cases/kb.txt``."""
    return {False: WeakLabeller(), True: WeakLabeller(read_kb(CASES / "kb.txt"))}


def _show(text: str, spans) -> list[tuple[str, str, str | None]]:
    return [(s.label, text[s.start : s.end], s.source) for s in spans]


@pytest.mark.parametrize("case", _params(ALL_CASES))
def test_the_labeller_finds_exactly_the_marked_entities(case: Case, labellers: dict[bool, WeakLabeller]) -> None:
    found = labellers[case.kb].label(case.text, tokenize(case.text), case.patient)
    sources = {(s.start, s.end, s.label): s.source for s in case.spans if s.source}
    got = [Span(c.start, c.end, c.label, _source(c.source, sources.get((c.start, c.end, c.label)))) for c in found]
    assert _show(case.text, got) == _show(case.text, case.spans), case.rule
    assert got == list(case.spans), case.rule


def _source(found: str, expected: str | None) -> str | None:
    """The source found, as the case states it: not at all, in full, or as a prefix ending in ``:``."""
    if expected is None:
        return None
    return expected if expected.endswith(":") and found.startswith(expected) else found


PATTERN_CASES = [c for c in ALL_CASES if c.file in PATTERN_FUNCTIONS and c.patient is None and not c.kb]


@pytest.mark.parametrize("case", _params(PATTERN_CASES))
def test_the_pattern_functions_alone_find_the_marked_entities_of_their_labels(case: Case) -> None:
    label = case.file.upper()
    alone = [(c.start, c.end) for c in PATTERN_FUNCTIONS[case.file](case.text)]
    expected = [(s.start, s.end) for s in case.spans if s.label == label]
    assert [case.text[s:e] for s, e in alone] == [case.text[s:e] for s, e in expected], case.rule
    assert alone == expected, case.rule
    together = [(c.start, c.end, c.label) for c in find_patterns(case.text, include_uncertain=True)]
    assert together == [(s.start, s.end, s.label) for s in case.spans if s.label in PATTERN_LABELS], case.rule


# -- the case files' format ------------------------------------------------------------------------------


def test_every_label_has_its_file_of_cases() -> None:
    files = {path.stem for path in CASES.glob("*.txt")}
    assert {label.lower() for label in LABELS} <= files


def test_a_case_line_reads_as_its_text_and_spans() -> None:
    text, spans = parse_marked(
        r"Vu par le Dr [Jean Martin](DOCTOR) le [12/03](DATE pattern:date_daymonth)\n\[sic\]", "x"
    )
    assert text == "Vu par le Dr Jean Martin le 12/03\n[sic]"
    assert spans == (Span(13, 24, "DOCTOR"), Span(28, 33, "DATE", "pattern:date_daymonth"))
    assert parse_marked(r"[a \[at\] b.fr](EMAIL)\u00a0", "x") == ("a [at] b.fr\u00a0", (Span(0, 11, "EMAIL"),))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("# rule\nVu par [Jean Martin(DOCTOR).\n", "bad.txt:2: '[' never closed by ](LABEL)"),
        ("# rule\nVu par [Jean Martin](DOCTEUR).\n", "bad.txt:2: unknown label DOCTEUR"),
        ("# rule\n\nVu par Jean] Martin.\n", "bad.txt:3: ']' must close an entity"),
        ("# rule\nVu par [[Jean]](DOCTOR).\n", "bad.txt:2: '[' inside an entity"),
        ("# rule\n[](DATE)\n", "bad.txt:2: empty entity"),
        ("# rule\nle 3\\q\n", "bad.txt:2: unknown escape \\q"),
        ("# rule\n@patient prenom=Jean\nJean\n", "bad.txt:2: @patient takes field=value"),
        ("# rule\n@gazetteer\n", "bad.txt:2: unknown directive @gazetteer"),
        ("Vu par le Dr [Jean Martin](DOCTOR).\n", "bad.txt:1: a case needs a comment line"),
    ],
)
def test_a_malformed_case_file_is_refused_naming_file_and_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CaseFileError) as raised:
        parse_cases(path)
    assert str(raised.value).startswith(message)


def test_a_comment_block_opens_a_section_whose_rule_metadata_and_gap_its_cases_share(tmp_path: Path) -> None:
    path = tmp_path / "cases.txt"
    path.write_text(
        "# header\n\n# rule one\n@patient firstname=Jean lastname='LE GALL'\n@kb\nJean\nLe Gall\n"
        "# known gap: rule two,\n# on two lines\nPierre\n",
        encoding="utf-8",
    )
    jean = PatientMetadata(firstname="Jean", lastname="LE GALL")
    assert [(c.line, c.rule, c.text, c.patient, c.kb, c.known_gap) for c in parse_cases(path)] == [
        (6, "rule one", "Jean", jean, True, False),
        (7, "rule one", "Le Gall", jean, True, False),
        (10, "known gap: rule two, on two lines", "Pierre", None, False, True),
    ]


@pytest.mark.parametrize("entry", ["brest places commune", "brest | places", "plaine | places commune common_word"])
def test_a_malformed_knowledge_base_entry_is_refused_naming_file_and_line(tmp_path: Path, entry: str) -> None:
    path = tmp_path / "kb.txt"
    path.write_text(f"# the entries\n{entry}\n", encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"^kb\.txt:2: an entry is 'key \| table kind"):
        read_kb(path)
