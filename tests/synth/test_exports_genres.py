"""The export styles ``dictation``, ``transmissions``, ``caps_letter`` and ``lab_report`` (families 3 and 4):
each writes every document type it serves in both phrasings, with gold that reads back exactly and
boundaries that follow the guidelines (a timestamp's time outside its date, ``poste [4567]``, lower-case
names annotated as written, one DATE per end of a range or of a spoken correction)."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from datetime import date
from types import SimpleNamespace

import pytest

from deid_ds.segmentation.html_text import html_to_text
from deid_ds.synth import SynthConfig, generate_corpus
from deid_ds.synth.exports import STYLES_OF_DOC_TYPE
from deid_ds.synth.exports.context import STYLES
from deid_ds.synth.exports.words import date_words, number_words, phone_words, year_words
from tests.synth import test_synth as base

GENRES = ("caps_letter", "dictation", "lab_report", "transmissions")
PHRASING = {0: "exports", 1: "exports-heldout"}


def _corpus(genre: str, variant: int, seed: int):
    """A corpus whose every note is written in ``genre``: the other styles are out of the draw while it is made."""
    with pytest.MonkeyPatch.context() as patch:
        for doc_type in STYLES_OF_DOC_TYPE:
            patch.setitem(STYLES_OF_DOC_TYPE, doc_type, {genre: 1})
        return generate_corpus(
            SynthConfig(
                notes=120,
                seed=seed,
                noise=0.8,
                phrasing=PHRASING[variant],
                distractor_professionals=0,
                distractor_streets=0,
            )
        )


@pytest.fixture(scope="module")
def corpora():
    """(genre, variant) -> a 120-note corpus written in that style and phrasing (seed 21 and 22: other documents)."""
    return {(genre, variant): _corpus(genre, variant, 21 + variant) for genre in GENRES for variant in (0, 1)}


def _served(genre: str) -> set[str]:
    return {doc_type for doc_type, weights in STYLES_OF_DOC_TYPE.items() if genre in weights}


_SPANS: dict[int, tuple[object, list]] = {}  # id -> (the corpus, kept alive so that its id stays its own; spans)


def _spans(corpus, genre_docs: set[str] | None = None):
    """(text, span, start, end) of every gold span, in the extracted text; only notes of ``genre_docs`` if given."""
    if id(corpus) not in _SPANS:  # each note is parsed once for all the tests of the module
        _SPANS[id(corpus)] = (corpus, list(base._spans_in_text(corpus)))
    doc_type = {n["id_document"]: n["doc_type"] for n in corpus.notes}
    return [row for row in _SPANS[id(corpus)][1] if genre_docs is None or doc_type[row[1]["id_document"]] in genre_docs]


# -- every style, every document type it serves, both phrasings ----------------------------------------------


def test_the_four_styles_are_registered():
    assert set(GENRES) <= set(STYLES)


@pytest.mark.parametrize("genre", GENRES)
def test_each_style_writes_every_document_type_it_serves_in_both_phrasings(corpora, genre):
    for variant in (0, 1):
        corpus = corpora[genre, variant]
        assert set(corpus.families.values()) == {3 + variant}
        written = Counter(n["doc_type"] for n in corpus.notes)
        assert _served(genre) <= set(written), (genre, variant, written)
        spans = Counter(s["id_document"] for s in corpus.gold)
        served_notes = [n for n in corpus.notes if n["doc_type"] in _served(genre)]
        assert all(spans[n["id_document"]] >= 5 for n in served_notes), genre  # every note names people and dates


@pytest.mark.parametrize("genre", GENRES)
def test_gold_reads_back_exactly_and_spans_are_clean(corpora, genre):
    both = SimpleNamespace(  # the two phrasings together (their documents have other ids: other seeds)
        notes=corpora[genre, 0].notes + corpora[genre, 1].notes, gold=corpora[genre, 0].gold + corpora[genre, 1].gold
    )
    base._assert_gold_reads_back(both)
    base.test_spans_never_start_or_end_on_a_tag_a_space_or_nbsp(both)
    base.test_spans_never_overlap(both)


def _left_contexts(corpus) -> Counter:
    """The two words before each entity, digits as 0: the cue wording a phrasing surrounds identifiers with."""
    contexts = Counter()
    for text, span, start, _ in _spans(corpus):
        words = re.sub(r"\d", "0", text[max(0, start - 40) : start]).split()[-2:]
        contexts[" ".join(words).lower() + " <" + span["label"] + ">"] += 1
    return contexts


def _seen_share(reference: Counter, other: Counter) -> float:
    return sum(n for key, n in other.items() if key in reference) / sum(other.values())


@pytest.mark.parametrize("genre", GENRES)
def test_the_held_out_phrasing_surrounds_entities_with_other_words(corpora, genre):
    development, held_out = _left_contexts(corpora[genre, 0]), _left_contexts(corpora[genre, 1])
    html0 = " ".join(n["html"] for n in corpora[genre, 0].notes)
    html1 = " ".join(n["html"] for n in corpora[genre, 1].notes)
    assert html0 != html1
    # another corpus of the development phrasing reuses its cue words far more than the held-out phrasing does
    again = _left_contexts(_corpus(genre, 0, 23))
    assert _seen_share(development, again) - _seen_share(development, held_out) > 0.25, genre


# -- boundaries ---------------------------------------------------------------------------------------------


def test_a_timestamp_keeps_its_time_outside_the_date(corpora):
    followed_by_time = 0
    for variant in (0, 1):
        for text, span, _, end in _spans(corpora["lab_report", variant]):
            if span["label"] != "DATE":
                continue
            assert not re.search(r"\d[:h]\d\d", span["text"]), span
            followed_by_time += bool(re.match(r" (à )?\d\d[:h]\d\d", text[end:]))
    assert followed_by_time > 100


def test_lab_results_reference_ranges_and_request_numbers_stay_unannotated(corpora):
    for variant in (0, 1):
        corpus = corpora["lab_report", variant]
        for _, span, _, _ in _spans(corpus):
            assert not re.search(r"mmol|g/dL|G/L|UI/L|FINESS|COFRAC", span["text"]), span
        texts = " ".join(html_to_text(n["html"]).text for n in corpus.notes)
        assert "Créatinine" in texts or "Sodium" in texts
    lab0 = corpora["lab_report", 0]
    # sampling, reception, validation and edition: a lab report is full of dates
    assert lab0.label_counts()["DATE"] > 5 * len(lab0.notes)
    iso = [s["text"] for s in corpora["lab_report", 1].gold if re.fullmatch(r"\d{4}-\d\d-\d\d", s["text"])]
    month = [s["text"] for s in corpora["lab_report", 1].gold if re.fullmatch(r"\d\d [A-Z]{3} \d{4}", s["text"])]
    assert iso and month


@pytest.mark.parametrize("genre", ("transmissions", "caps_letter"))
def test_an_extension_is_a_phone_of_digits_only_with_its_cue_word_outside(corpora, genre):
    found = 0
    for variant in (0, 1):
        for text, span, start, _ in _spans(corpora[genre, variant]):
            if span["label"] == "PHONE" and re.fullmatch(r"\d{3,4}", span["text"]):
                assert re.search(r"(poste|POSTE|bip|DECT|DECT n°|tél\.) $", text[:start]), text[start - 20 : start]
                found += 1
    assert found > 10


def test_a_lower_case_name_in_a_dictation_is_annotated_after_its_cue(corpora):
    cues = Counter()
    for variant in (0, 1):
        for text, span, start, _ in _spans(corpora["dictation", variant]):
            if span["label"] in ("PATIENT", "DOCTOR") and span["text"].islower() and len(span["text"]) > 3:
                before = text[max(0, start - 20) : start]
                cue = re.search(
                    r"(docteur|professeur|madame|monsieur|interne|infirmière|infirmier|sa \w+|son \w+) $", before
                )
                if cue:
                    cues[cue.group(1).split()[0]] += 1
    assert cues["docteur"] > 20 and cues["madame"] + cues["monsieur"] > 20, cues


def test_dictated_dates_and_phones_in_words_and_corrections_are_entities(corpora):
    words = re.compile(r"^(lundi |mardi |mercredi |jeudi |vendredi |samedi |dimanche )?[a-zé-]+( et un)? \w+")
    dates, phones, corrections = 0, 0, 0
    for variant in (0, 1):
        spans = list(_spans(corpora["dictation", variant]))
        for (text, span, _, end), (_, after, start2, _) in itertools.pairwise(spans):
            if span["label"] == after["label"] == "DATE" and re.fullmatch(
                r" (non pardon|pardon|non non|plutôt|euh non|je corrige|enfin|je reprends) le ", text[end:start2]
            ):
                corrections += 1
        for _, span, _, _ in spans:
            if span["label"] == "DATE" and words.match(span["text"]) and not re.search(r"\d", span["text"]):
                dates += 1
            if span["label"] == "PHONE" and span["text"].startswith("zéro"):
                phones += 1
    assert dates > 50 and phones > 5 and corrections > 10, (dates, phones, corrections)


def test_a_range_gives_one_date_per_end_and_staff_by_first_name_are_doctors(corpora):
    ranges, first_names = 0, 0
    for variant in (0, 1):
        spans = list(_spans(corpora["transmissions", variant]))
        for (text, span, _, end), (_, after, start2, _) in itertools.pairwise(spans):
            if span["label"] == after["label"] == "DATE" and text[end:start2] == " au ":
                assert text[: end - len(span["text"])].endswith("du ")
                ranges += 1
        for _, span, _, _ in spans:
            if span["label"] == "DOCTOR" and re.fullmatch(
                r"[A-ZÉ][a-zéèëïî]+(-[A-ZÉ][a-zéèëïî]+)?( [A-Z]\.)?", span["text"]
            ):
                first_names += 1
                assert not re.search(r"(IDE|AS|Inf\.|à) $", span["text"])
    assert ranges > 50 and first_names > 200, (ranges, first_names)


def test_capital_letters_keep_titles_and_cedex_outside_and_spell_dates_out(corpora):
    spelled = 0
    for variant in (0, 1):
        for _, span, _, _ in _spans(corpora["caps_letter", variant], _served("caps_letter")):
            assert span["text"] == span["text"].upper(), span
            assert not re.match(r"(DR|PR|DOCTEUR|MONSIEUR|MADAME|MME) ", span["text"]), span
            assert "CEDEX" not in span["text"], span
            spelled += span["label"] == "DATE" and " MILLE " in span["text"]
        accents = "".join(s["text"] for s in corpora["caps_letter", variant].gold)
        assert bool(re.search(r"[ÉÈÊÀÂÎÔÛÇ]", accents)) == (variant == 0)  # the held-out printer drops accents
    assert spelled > 20


# -- numbers in words ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "words"),
    [
        (0, "zéro"),
        (17, "dix-sept"),
        (21, "vingt et un"),
        (71, "soixante et onze"),
        (80, "quatre-vingts"),
        (81, "quatre-vingt-un"),
        (99, "quatre-vingt-dix-neuf"),
        (200, "deux cents"),
        (201, "deux cent un"),
        (1957, "mille neuf cent cinquante-sept"),
        (2020, "deux mille vingt"),
    ],
)
def test_numbers_are_written_in_french_words(number, words):
    assert number_words(number) == words


def test_dates_and_phones_are_spelt_as_they_are_dictated():
    assert date_words(date(2020, 3, 12)) == "douze mars deux mille vingt"
    assert date_words(date(2021, 6, 1), year=False) == "premier juin"
    assert date_words(date(2021, 6, 1), weekday=True) == "mardi premier juin deux mille vingt et un"
    assert year_words(1957, spoken=True) == "dix-neuf cent cinquante-sept"
    assert phone_words("0299284321") == "zéro deux quatre-vingt-dix-neuf vingt-huit quarante-trois vingt et un"
    assert phone_words("0612", by_digit=True) == "zéro six un deux"
    with pytest.raises(ValueError):
        number_words(10000)
