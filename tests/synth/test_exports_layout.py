"""The layout export styles of families 3 and 4 (``pdf``, ``cda``, ``fixed_width``): every document type each
serves, in both phrasings, writes a note whose gold reads back exactly, and the constructs the guidelines
single out get the boundaries they prescribe: a name or address broken over two PDF lines is one span, a
CDA name over ``given``/``family`` elements is one span, a name over the NOM and PRENOM columns of a
fixed-width listing is two."""

from __future__ import annotations

import html as html_module
import random
import re
from collections import Counter
from datetime import timedelta
from itertools import pairwise

import pytest

from deid_ds.segmentation.html_text import html_to_text
from deid_ds.synth import SynthConfig, generate_corpus
from deid_ds.synth.corpus import Generation
from deid_ds.synth.documents import DOCUMENT_TYPES
from deid_ds.synth.exports import STYLES, STYLES_OF_DOC_TYPE, ExportContext
from deid_ds.synth.html_builder import Encoding, HtmlDoc

LAYOUT_STYLES = ("pdf", "cda", "fixed_width")
TAG = re.compile(r"<[^>]*>")


def _served(style: str) -> list[str]:
    return sorted(d for d, weights in STYLES_OF_DOC_TYPE.items() if style in weights)


def _write(style: str, doc_type: str, variant: int, seed: int, generation: Generation, plans: list) -> dict:
    """One note of ``doc_type`` written by the style's writer, in a context built as the generator builds one."""
    rng = random.Random(f"test-{style}-{doc_type}-{variant}-{seed}")
    plan = plans[seed % len(plans)]
    patient, when = plan.patient, plan.when
    hospital = rng.choice(generation.hospitals)
    department = rng.choice(list(hospital.departments.values()))
    author = rng.choice([p for p in department.staff if p.title] or department.staff)
    dates = {
        "admission": when - timedelta(days=rng.randrange(2, 21)),
        "discharge": when,
        "prev": when - timedelta(days=rng.randrange(20, 900)),
        "next": when + timedelta(days=rng.randrange(7, 120)),
        "exam": when - timedelta(days=rng.randrange(1, 7)),
        "surgery": patient.birthdate + timedelta(days=rng.randrange(7000, 12000)),
    }
    doc = HtmlDoc(rng, Encoding(rng.choice(("raw", "named", "numeric", "mixed"))), 0.8)
    others = [p for d in hospital.departments.values() if d is not department for p in d.staff if p.title]
    extras = {"specialist": [rng.choice(others)]} if others and rng.random() < 0.5 else {}
    ctx = ExportContext(
        rng, 3 + variant, 0.8, patient, hospital, department, author, when, dates, doc, patient.address, extras
    )
    ctx.doc_type = doc_type
    STYLES[style](ctx)
    spans = [
        {"label": s.label, "html_start": s.html_start, "html_end": s.html_end, "text": s.text}
        for s in sorted(doc.spans, key=lambda s: s.html_start)
    ]
    return {"style": style, "doc_type": doc_type, "variant": variant, "html": doc.html(), "spans": spans, "ctx": ctx}


def _all_notes() -> list[dict]:
    """Every (style, document type, variant), three notes each, on one generated world."""
    generation = Generation(SynthConfig(notes=60, seed=17, distractor_professionals=0))
    plans = list(generation.plans())
    return [
        _write(style, doc_type, variant, seed, generation, plans)
        for style in LAYOUT_STYLES
        for doc_type in sorted(DOCUMENT_TYPES)  # every type: a warehouse may route any document to any style
        for variant in (0, 1)
        for seed in range(3)
    ]


@pytest.fixture(scope="module")
def notes() -> list[dict]:
    return _all_notes()


def _of(notes: list[dict], style: str, variant: int | None = None) -> list[dict]:
    return [n for n in notes if n["style"] == style and variant in (None, n["variant"])]


def test_the_layout_styles_are_registered_and_serve_document_types():
    assert set(LAYOUT_STYLES) <= set(STYLES)
    for style in LAYOUT_STYLES:
        assert _served(style), style


def test_every_gold_span_reads_back_exactly_and_is_clean(notes):
    for note in notes:
        html, parsed = note["html"], html_to_text(note["html"])
        assert note["spans"], (note["style"], note["doc_type"])
        for span in note["spans"]:
            start, end = span["html_start"], span["html_end"]
            t0, t1 = parsed.text_span(start, end)
            assert parsed.text[t0:t1] == span["text"], span
            assert parsed.html_span(t0, t1) == (start, end), span
            # guidelines: the html slice, tags removed and references decoded, reads as the entity's text
            raw = html_module.unescape(TAG.sub("", html[start:end]))
            assert raw.split() == span["text"].split(), (raw, span)
            assert html[start] != "<" and not html.startswith("&nbsp;", start), span
            assert html[end - 1] != ">" and not html[:end].endswith("&nbsp;"), span
        for left, right in pairwise(note["spans"]):
            assert left["html_end"] <= right["html_start"], (left, right)


def test_each_note_names_its_patient_professionals_and_dates(notes):
    for note in notes:
        labels = Counter(s["label"] for s in note["spans"])
        assert labels["PATIENT"] and labels["DOCTOR"] and labels["DATE"], (note["style"], note["doc_type"], labels)
    for style in LAYOUT_STYLES:
        labels = Counter(s["label"] for n in _of(notes, style) for s in n["spans"])
        assert {"PATIENT", "DOCTOR", "DATE", "PHONE", "STR", "ZIP", "VILLE"} <= set(labels), (style, labels)


def _wording(note: dict) -> set[str]:
    """The note's text lines that hold an entity, entities and digits masked: how the phrasing writes them."""
    parsed, parts, position = html_to_text(note["html"]), [], 0
    text = parsed.text
    for span in note["spans"]:
        start, end = parsed.text_span(span["html_start"], span["html_end"])
        parts += [text[position:start], "<E>"]
        position = end
    parts.append(text[position:])
    return {re.sub(r"\d+", "0", line.strip()) for line in "".join(parts).split("\n") if "<E>" in line}


@pytest.mark.parametrize("style", LAYOUT_STYLES)
def test_the_two_phrasings_differ(notes, style):
    seen0 = set().union(*(_wording(n) for n in _of(notes, style, 0)))
    lines1 = [line for n in _of(notes, style, 1) for line in _wording(n)]
    shared = sum(line in seen0 for line in lines1) / len(lines1)
    assert shared < 0.35, shared  # what stays alike is clinical prose and bare address lines
    html0 = " ".join(n["html"] for n in _of(notes, style, 0))
    html1 = " ".join(n["html"] for n in _of(notes, style, 1))
    assert html0 != html1


def test_pdf_lines_are_positioned_and_a_name_or_address_broken_over_two_lines_is_one_span(notes):
    broken = []
    for note in _of(notes, "pdf"):
        html = note["html"]
        assert re.search(r'<(div|p) [^>]*style="position:absolute;top:\d+px;left:\d+px', html)
        for span in note["spans"]:
            raw = html[span["html_start"] : span["html_end"]]
            if re.search(r"</(div|p)>\s*<(div|p) ", raw):
                assert "\n" in span["text"], span  # the line end reads as a line break inside the span
                broken.append(span)
    assert {s["label"] for s in broken} & {"PATIENT", "DOCTOR"}, Counter(s["label"] for s in broken)
    assert {s["label"] for s in broken} & {"STR", "VILLE"}, Counter(s["label"] for s in broken)
    texts = " ".join(html_to_text(n["html"]).text for n in _of(notes, "pdf"))
    assert re.search(r"[a-zé]{3,}-\n+[a-zé]{3,}", texts), "no word hyphenated across two lines"


def test_pdf_running_header_and_footer_repeat_on_every_page_with_the_patient(notes):
    multi = 0
    for note in _of(notes, "pdf"):
        text = html_to_text(note["html"]).text
        pages = int(re.search(r"^(?:Page )?1(?:/| sur )(\d+)$", text, re.M).group(1))
        assert len(re.findall(rf"^(?:Page )?\d+(?:/| sur ){pages}$", text, re.M)) == 2 * pages  # header and footer
        header = note["spans"][:2]  # the running header opens every page: the patient's name and birth date
        assert [s["label"] for s in header] == ["PATIENT", "DATE"], header
        for span in header:
            assert sum(s["text"] == span["text"] for s in note["spans"]) >= pages, span
        multi += pages > 1
    assert multi


def test_cda_given_and_family_elements_are_one_span(notes):
    joined = 0
    for note in _of(notes, "cda"):
        html = note["html"]
        assert "LOINC" in html and re.search(r"<th>[^<]{2,}</th>", html) and not re.search(r"<th>[^<]</th>", html)
        for span in note["spans"]:
            raw = html[span["html_start"] : span["html_end"]]
            if 'class="family"' in raw or 'class="given"' in raw:
                assert span["label"] in ("PATIENT", "DOCTOR") and " " in span["text"], span
                joined += 1
        p = note["ctx"].patient
        names = [s["text"] for s in note["spans"] if s["label"] == "PATIENT"]
        assert any(p.usual_first in t and p.usual_last.upper() in t.upper() for t in names), names
    assert joined > 20


def test_cda_identifiers_and_codes_are_not_entities(notes):
    for note in _of(notes, "cda"):
        text = html_to_text(note["html"]).text
        numbers = re.findall(r"(\d{13,15}) \(INS-NIR|(\d{8}) \(IPP|LOINC :? ?(\d+-\d)", text)
        assert numbers
        spans = " ".join(s["text"] for s in note["spans"])
        for found in numbers:
            for number in filter(None, found):
                assert number not in spans, number


def test_fixed_width_nom_and_prenom_columns_are_two_spans(notes):
    for note in _of(notes, "fixed_width"):
        html, p = note["html"], note["ctx"].patient
        assert "<pre" in html and re.search(r"^(-{80}|={96})$", html, re.M)
        text = html_to_text(html).text
        assert text == text.upper()
        spans = note["spans"]
        for left, right in pairwise(spans):
            if left["label"] == right["label"] == "PATIENT" and text_line_of(html, left) == text_line_of(html, right):
                between = html[left["html_end"] : right["html_start"]]
                if re.fullmatch(r" {2,}(\| )?", between):
                    assert left["text"] not in right["text"] and right["text"] not in left["text"]
                    break
        else:
            raise AssertionError(f"no NOM / PRENOM pair in {p.usual_last}")
        doctors = [s for s in spans if s["label"] == "DOCTOR"]
        assert len(doctors) >= 4  # the staff table: NOM and PRENOM columns, two spans per professional


def text_line_of(html: str, span: dict) -> int:
    return html.count("\n", 0, span["html_start"])


def test_numbers_that_look_like_identifiers_and_eponyms_stay_unannotated(notes):
    for note in notes:
        text = html_to_text(note["html"]).text
        spans = [s["text"] for s in note["spans"]]
        for match in re.finditer(r"(?:IPP|FINESS|RPPS|N\.DOSSIER|NIR|N\.SS|UF)\s*:?\s*(\d[\d ]{3,})", text, re.I):
            assert not any(match.group(1).strip() in s for s in spans), match.group(0)
        for word in ("Babinski", "BABINSKI", "Murphy", "MURPHY", "Glasgow", "GLASGOW", "Homans", "HOMANS"):
            assert not any(word in s for s in spans)


def test_extensions_are_phone_digits_only(notes):
    seen = 0
    for note in notes:
        html = note["html"]
        for span in note["spans"]:
            before = html_module.unescape(TAG.sub("", html[max(0, span["html_start"] - 12) : span["html_start"]]))
            if re.search(r"(poste|DECT|bip|p\.)\s$", before, re.I):
                assert span["label"] == "PHONE" and span["text"].isdigit(), span
                seen += 1
    assert seen


def test_writing_is_deterministic(notes):
    again = _all_notes()
    assert [n["html"] for n in again] == [n["html"] for n in notes]
    assert [n["spans"] for n in again] == [n["spans"] for n in notes]


def test_a_corpus_of_the_export_families_writes_the_layout_styles(monkeypatch):
    """Through the generator: ``write_export_note`` tells the style which document it writes."""
    for doc_type, weights in list(STYLES_OF_DOC_TYPE.items()):
        mine = {s: w for s, w in weights.items() if s in LAYOUT_STYLES}
        monkeypatch.setitem(STYLES_OF_DOC_TYPE, doc_type, mine or {"pdf": 1})
    corpus = generate_corpus(SynthConfig(notes=24, seed=19, phrasing="exports-all", distractor_professionals=0))
    assert set(corpus.families.values()) == {3, 4}
    by_doc: dict[str, list[dict]] = {}
    for row in corpus.gold:
        by_doc.setdefault(row["id_document"], []).append(row)
    for note in corpus.notes:
        parsed = html_to_text(note["html"])
        for span in by_doc[note["id_document"]]:
            start, end = parsed.text_span(span["html_start"], span["html_end"])
            assert parsed.text[start:end] == span["text"]
