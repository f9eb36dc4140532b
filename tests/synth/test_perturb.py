"""Text perturbations that carry entity offsets (:mod:`deid_ds.synth.perturb`) and ``deid-ds synth --text-noise``:
each perturbation on its own, the boundary rules, a property test of the offset arithmetic on any text, and
a perturbed corpus whose gold reads back exactly."""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import astuple, replace

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.cli import main
from deid_ds.segmentation.html_text import html_to_text
from deid_ds.synth import SynthConfig, generate_corpus
from deid_ds.synth.perturb import (
    LEVELS,
    Edit,
    Rates,
    apply_edits,
    html_protected,
    map_offset,
    perturb,
    perturb_html,
    plan_edits,
)

TEXT = "Patient : Jean KERDRAON, vu le 12/03/2021 à l'hôpital de Plérin. Rappeler le Dr Morin."
SPANS = [
    (TEXT.index(value), TEXT.index(value) + len(value), label)
    for value, label in (("Jean KERDRAON", "PATIENT"), ("12/03/2021", "DATE"), ("Plérin", "VILLE"), ("Morin", "DOCTOR"))
]


def _entities(text, spans):
    return [text[start:end] for start, end, _ in spans]


def _only(**rates: float) -> Rates:
    """Rates with only the named perturbations on."""
    return Rates(**rates)


def test_the_example_spans_are_what_they_say():
    assert _entities(TEXT, SPANS) == ["Jean KERDRAON", "12/03/2021", "Plérin", "Morin"]


def test_level_zero_changes_nothing():
    assert perturb(TEXT, SPANS, 0, random.Random(1)) == (TEXT, SPANS)


def test_the_same_seed_gives_the_same_perturbation():
    assert perturb(TEXT, SPANS, 3, random.Random(4)) == perturb(TEXT, SPANS, 3, random.Random(4))
    assert perturb(TEXT, SPANS, 3, random.Random(4)) != perturb(TEXT, SPANS, 3, random.Random(5))


def test_look_alike_characters_change_entities_but_spans_follow():
    text, spans = perturb(TEXT, SPANS, _only(confusion=1.0), random.Random(0))
    entities = _entities(text, spans)
    assert entities[0] != "Jean KERDRAON" and len(entities[0].split()) == 2  # e.g. "Jcan KERDRAON"
    assert entities[1].count("/") == 2 and entities[1] != "12/03/2021"  # "l2/O3/2O2l"
    assert set("".join(entities)) & set("10IlOc")
    # "rn" read as "m" (two characters as one): the entity shrinks by one, its span with it
    text, spans = perturb("Dr Bernard vu", [(3, 10, "DOCTOR")], _only(confusion=1.0), random.Random(3))
    assert text[spans[0][0] : spans[0][1]] in {"Bemard", "8emard", "8cmard", "Bcmard"}


def test_accents_are_dropped_or_mangled_and_spans_follow():
    text, spans = perturb(TEXT, SPANS, _only(accent=1.0), random.Random(2))
    assert "é" not in text and "ô" not in text
    assert _entities(text, spans)[2] in {"Plerin", "Plèrin", "PlÃ©rin"}
    mangled = {perturb("é", [], _only(accent=1.0), random.Random(seed))[0] for seed in range(40)}
    assert mangled == {"e", "è", "Ã©"}  # dropped, another accent, UTF-8 read as Latin-1


def test_a_lost_space_never_touches_an_entity_edge():
    text, spans = perturb(TEXT, SPANS, _only(space_lost=1.0), random.Random(0))
    assert _entities(text, spans) == ["JeanKERDRAON", "12/03/2021", "Plérin", "Morin"]  # inside an entity: yes
    for start, end, _ in spans:  # at its edges: never
        assert start == 0 or not text[start - 1].isalnum()
        assert end == len(text) or not text[end].isalnum()
    assert "2021 à" in text and "àl'hôpital" in text and "RappelerleDr" in text  # words outside entities merge


def test_a_space_inserted_inside_a_word_stays_inside_its_entity():
    text, spans = perturb(TEXT, SPANS, _only(space_added=1.0), random.Random(0))
    entities = _entities(text, spans)
    assert entities[0].count(" ") == 3  # "Jean" and "KERDRAON" each cut once
    assert entities[0].replace(" ", "") == "JeanKERDRAON" and entities[1] == "12/03/2021"  # numbers are not cut
    assert all(entity == entity.strip() for entity in entities)


def test_a_line_end_hyphen_cuts_a_long_word_inside_its_entity():
    text, spans = perturb(TEXT, SPANS, _only(hyphen_cut=1.0), random.Random(1))
    entities = _entities(text, spans)
    assert re.fullmatch(r"Jean KE[A-Z]*-\n[A-Z]*ON", entities[0]), entities[0]
    assert entities[2].replace("-\n", "") == "Plérin" and entities[3] == "Morin"  # six letters at least
    html, spans = perturb_html(
        "<p>Patient KERDRAON</p>", [(11, 19, "PATIENT")], _only(hyphen_cut=1.0), random.Random(1)
    )
    assert "-<br>" in html[spans[0][0] : spans[0][1]]


def test_a_line_in_capitals_or_lower_case():
    texts = set()
    for seed in range(10):
        text, spans = perturb(TEXT, SPANS, _only(line_case=1.0), random.Random(seed))
        texts.add(text)
        assert _entities(text, spans)[0] in {"JEAN KERDRAON", "jean kerdraon"}
    assert texts == {TEXT.upper(), TEXT.lower()}


def test_punctuation_is_dropped_outside_entities_only():
    text, spans = perturb(TEXT, SPANS, _only(punctuation=1.0), random.Random(0))
    assert _entities(text, spans) == _entities(TEXT, SPANS)  # the date keeps its slashes
    assert "," not in text and ":" not in text and not text.endswith(".")


def test_markup_and_character_references_are_never_touched():
    html = (
        '<html><head><title>Lettre</title><style>body{font-family:Arial}</style></head><body><p class="lettre">'
        "Patient : <b>Jean</b> KERDRAON, n&eacute; &agrave; Pl&eacute;rin.</p></body></html>"
    )
    start = html.index("<b>Jean") + 3
    spans = [(start, html.index(", n&"), "PATIENT")]
    for seed in range(30):
        out, moved = perturb_html(html, spans, 3, random.Random(seed))
        assert re.findall(r"<[^>]*>", out.replace("-<br>", "-")) == re.findall(r"<[^>]*>", html)
        assert re.findall(r"&\w+;", out) == ["&eacute;", "&agrave;", "&eacute;"]
        assert "Lettre" in out and "font-family:Arial" in out
        parsed = html_to_text(out)
        text_start, text_end = parsed.text_span(*moved[0][:2])
        assert parsed.text[text_start:text_end].replace(" ", "").lower().startswith(("j", "i", "l"))


def test_protected_ranges_are_tags_references_and_invisible_elements():
    html = "<head><title>T</title></head><p>a&amp;b</p><!-- x -->"
    assert [html[s:e] for s, e in html_protected(html)] == [
        "<head><title>T</title></head>",
        "<p>",
        "&amp;",
        "</p>",
        "<!-- x -->",
    ]


def test_no_edit_straddles_or_inserts_at_an_entity_edge_inside_a_word():
    """An entity may begin or end inside a word (``M.DUPONT``, ``Bern|ard`` in a table cell): a two-letter
    confusion across the edge or a space or hyphen put at the edge would move text in or out of the entity."""
    for seed in range(200):
        rng = random.Random(seed)
        edits = plan_edits("Bernard", [(3, 7)], Rates(confusion=1.0, space_added=1.0, hyphen_cut=1.0), rng)
        assert not any(e.start < 3 < e.end or e.start == e.end == 3 for e in edits), edits
    # an insertion and a two-letter confusion never overlap (Be|rnard cut inside the "rn" it would merge)
    for seed in range(200):
        edits = plan_edits("Bernard", [], Rates(confusion=1.0, space_added=1.0, hyphen_cut=1.0), random.Random(seed))
        assert all(left.end <= right.start for left, right in itertools.pairwise(edits)), edits
    # away from the edge the same pair is read as one letter
    assert any(
        Edit(2, 4, "m") in plan_edits("Bernard", [(0, 7)], Rates(confusion=1.0), random.Random(seed))
        for seed in range(20)
    )


def test_every_level_is_defined_and_a_wrong_one_is_refused():
    assert sorted(LEVELS) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="noise level"):
        perturb(TEXT, SPANS, 4, random.Random(0))


# -- the offset arithmetic on any text ---------------------------------------------------------------------


@st.composite
def texts_with_spans(draw):
    """Any text of words (letters, accents, look-alikes, digits, punctuation) between spaces, punctuation and
    line breaks (or glued), and entities over runs of words."""
    pieces = st.sampled_from([*"abcehilmnorstuvIOBSé0158èàçÉ.'/-", "rn", "cl", "vv"])
    words = draw(st.lists(st.lists(pieces, min_size=1, max_size=6).map("".join), max_size=14))
    # "": two words glued, so that an entity may begin or end inside a word
    separators = st.sampled_from([" ", " ", " ", "\n", ", ", " : ", "  ", "", ""])
    text, spans, entity = "", [], None
    for word in words:
        if text:
            text += draw(separators)
        start = len(text)
        text += word
        if entity is not None and draw(st.booleans()):  # the entity goes on over this word
            spans[-1] = (spans[-1][0], len(text), spans[-1][2])
        elif draw(st.booleans()):
            entity = draw(st.sampled_from(["PATIENT", "DATE"]))
            spans.append((start, len(text), entity))
        else:
            entity = None
    return text, spans


@settings(max_examples=400, deadline=None)
@given(texts_with_spans(), st.integers(0, 3), st.integers(0, 2**32))
def test_offsets_stay_exact_on_any_text(case, level, seed):
    text, spans = case
    # odd seeds: the level's rates; even seeds: ten times more, so that every rule is met often
    # (a line changed in case leaves no character to the other perturbations: that one is not multiplied)
    rates = LEVELS[level]
    if not seed % 2:
        rates = replace(Rates(*(min(1.0, 10 * r) for r in astuple(LEVELS[max(level, 1)]))), line_case=rates.line_case)
    edits = plan_edits(text, [(s, e) for s, e, _ in spans], rates, random.Random(seed))
    new_text, moved = perturb(text, spans, rates, random.Random(seed))
    assert new_text == apply_edits(text, edits)
    for edit, following in itertools.pairwise(edits):
        assert edit.end <= following.start and (edit.start, edit.end) != (following.start, following.end)
    for (start, end, label), (new_start, new_end, new_label) in zip(spans, moved, strict=True):
        assert new_label == label
        # no edit straddles the entity's edges nor inserts at them: the entity is its own characters with
        # its own edits applied
        assert not any(e.start < start < e.end or e.start < end < e.end for e in edits)
        assert not any(e.start == e.end and e.start in (start, end) for e in edits)
        inside = [
            Edit(e.start - start, e.end - start, e.replacement) for e in edits if start <= e.start and e.end <= end
        ]
        assert new_text[new_start:new_end] == apply_edits(text[start:end], inside)
        assert new_start == map_offset(edits, start) and new_end == map_offset(edits, end)
        assert new_end > new_start and new_text[new_start:new_end] == new_text[new_start:new_end].strip()
        # an entity never runs into its neighbour: the space that separated them is still there
        if end < len(text) and text[end].isspace():
            assert new_text[new_end].isspace()
        if start > 0 and text[start - 1].isspace():
            assert new_text[new_start - 1].isspace()


# -- deid-ds synth --text-noise -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def noisy():
    return generate_corpus(
        SynthConfig(notes=60, seed=11, noise=0.8, phrasing="all", text_noise=3, distractor_professionals=0)
    )


def test_a_noisy_corpus_gold_reads_back_exactly(noisy):
    by_doc: dict[str, list[dict]] = {}
    for row in noisy.gold:
        by_doc.setdefault(row["id_document"], []).append(row)
    checked = 0
    for note in noisy.notes:
        parsed = html_to_text(note["html"])
        for span in by_doc.get(note["id_document"], []):
            start, end = parsed.text_span(span["html_start"], span["html_end"])
            assert parsed.text[start:end] == span["text"] and span["text"] == span["text"].strip(), span
            assert parsed.html_span(start, end) == (span["html_start"], span["html_end"]), span
            checked += 1
    assert checked == len(noisy.gold) > 500


def test_a_noisy_corpus_is_the_clean_one_perturbed(noisy):
    clean = generate_corpus(SynthConfig(notes=60, seed=11, noise=0.8, phrasing="all", distractor_professionals=0))
    assert [n["id_document"] for n in clean.notes] == [n["id_document"] for n in noisy.notes]
    assert [g["label"] for g in clean.gold] == [g["label"] for g in noisy.gold]
    changed = sum(a["text"] != b["text"] for a, b in zip(clean.gold, noisy.gold, strict=True))
    assert 0.1 < changed / len(clean.gold) < 0.6  # level 3: many entities perturbed, most still readable
    tags = lambda html: re.findall(r"<[^>]*>", html.replace("-<br>", ""))  # noqa: E731
    assert all(tags(a["html"]) == tags(b["html"]) for a, b in zip(clean.notes, noisy.notes, strict=True))
    assert {k: v for k, v in clean.notes[0].items() if k != "html"} == {
        k: v for k, v in noisy.notes[0].items() if k != "html"
    }


def test_synth_text_noise_through_the_cli(tmp_path):
    runner = CliRunner()
    base = ["synth", "--notes", "12", "--seed", "3", "--distractor-professionals", "0", "--quiet"]
    for name, extra in (("clean", []), ("zero", ["--text-noise", "0"]), ("noisy", ["--text-noise", "2"])):
        result = runner.invoke(main, [*base, *extra, "--out", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    for file in ("notes.parquet", "gold.parquet", "gold.jsonl"):  # level 0 is today's sample, byte for byte
        assert (tmp_path / "clean" / file).read_bytes() == (tmp_path / "zero" / file).read_bytes()
    notes = pq.read_table(tmp_path / "noisy" / "notes.parquet").to_pylist()
    clean_notes = pq.read_table(tmp_path / "clean" / "notes.parquet").to_pylist()
    assert [n["html"] for n in notes] != [n["html"] for n in clean_notes]
    html_of = {n["id_document"]: n["html"] for n in notes}
    for span in pq.read_table(tmp_path / "noisy" / "gold.parquet").to_pylist():
        parsed = html_to_text(html_of[span["id_document"]])
        start, end = parsed.text_span(span["html_start"], span["html_end"])
        assert parsed.text[start:end] == span["text"]
        stripped = re.sub(r"<[^>]*>", "", html_of[span["id_document"]][span["html_start"] : span["html_end"]])
        assert "&" in stripped or stripped.replace("\n      ", " ") == span["text"].replace("\n", "")
    assert "--text-noise 2" in (tmp_path / "noisy" / "README.md").read_text(encoding="utf-8")
    result = runner.invoke(main, [*base, "--text-noise", "4", "--out", str(tmp_path / "bad")])
    assert result.exit_code == 2 and "--text-noise" in result.output and "Traceback" not in result.output
