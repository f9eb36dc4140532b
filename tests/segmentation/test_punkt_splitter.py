"""The project's Punkt splitter gives NLTK's sentences, without importing NLTK.

NLTK's ``PunktSentenceTokenizer``, with the project's French settings (the classes training uses), is
the reference: same spans on the sample, on generated corpora of every phrasing, and on random texts
with random parameters, so that segmentation (and everything written from it) stays byte-identical.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nltk.tokenize.punkt import PunktParameters as NltkParameters
from nltk.tokenize.punkt import PunktSentenceTokenizer

from deid_ds.segmentation.html_text import html_to_text
from deid_ds.segmentation.punkt import default_parameters
from deid_ds.segmentation.punkt_splitter import PunktParameters, PunktSplitter, word_tokens
from deid_ds.segmentation.punkt_training import FastPunktToken, FrenchLanguageVars, train_parameters
from deid_ds.segmentation.segmenter import Segmenter
from tests.conftest import REPO


def nltk_splitter(parameters: PunktParameters) -> PunktSentenceTokenizer:
    reference = NltkParameters()
    reference.abbrev_types = set(parameters.abbrev_types)
    reference.collocations = set(parameters.collocations)
    reference.sent_starters = set(parameters.sent_starters)
    reference.ortho_context.update(parameters.ortho_context)
    return PunktSentenceTokenizer(reference, lang_vars=FrenchLanguageVars(), token_cls=FastPunktToken)


def assert_same_spans(parameters: PunktParameters, texts: list[str]) -> None:
    ours, reference = PunktSplitter(parameters), nltk_splitter(parameters)
    for index, text in enumerate(texts):
        assert list(ours.span_tokenize(text)) == list(reference.span_tokenize(text)), f"text {index}"


def note_texts(htmls) -> list[str]:
    return [html_to_text(html).text for html in htmls if isinstance(html, str)]


@pytest.fixture(scope="module")
def sample_texts() -> list[str]:
    from deid_ds.io.notes import open_notes

    return note_texts(note.html for note in open_notes(REPO / "data" / "notes.parquet").iter_notes())


@pytest.fixture(scope="module")
def trained(sample_texts) -> PunktParameters:
    """Parameters with every table filled (the shipped ones have abbreviations only)."""
    parameters = train_parameters(sample_texts, include_all_collocations=True)
    assert parameters.collocations and parameters.sent_starters and parameters.ortho_context
    return parameters


def test_same_sentences_as_nltk_on_the_sample(sample_texts, trained):
    assert_same_spans(default_parameters(), sample_texts)
    assert_same_spans(trained, sample_texts)


@pytest.mark.parametrize("phrasing,text_noise", [("all", 0), ("exports-all", 3), ("unseen", 1)])
def test_same_sentences_as_nltk_on_a_generated_corpus(trained, phrasing, text_noise):
    from deid_ds.synth import SynthConfig, generate_corpus

    config = SynthConfig(notes=80, seed=13, phrasing=phrasing, text_noise=text_noise, distractor_professionals=0)
    texts = note_texts(note["html"] for note in generate_corpus(config).notes)
    assert_same_spans(default_parameters(), texts)
    assert_same_spans(trained, texts)


def test_segmentation_of_the_sample_is_unchanged(sample_texts, trained):
    """The segmenter, whose sentences every stage writes, cuts the same tokens with either splitter."""
    for parameters in (default_parameters(), trained):
        ours = Segmenter(parameters)
        reference = Segmenter(parameters)
        reference._splitter = nltk_splitter(parameters)
        for text in sample_texts:
            assert ours.token_spans(text) == reference.token_spans(text)


# Pieces that exercise every rule: abbreviations (known, hyphenated, unknown), initials, numbers and
# ordinals, ellipses, closing quotes and brackets after a period, line and paragraph breaks, and the
# whitespace NLTK reads as a word's start (ASCII only) or not (no-break spaces).
WORDS = ["Dr", "dr", "Mme", "cf", "env", "mg", "Le", "le", "Il", "il", "J", "J.-P", "A.-M", "Bach", "S", "12", "3e"]
WORDS += ["1,5", "-2", "RENNES", "etc", "Ch", "des", "Patient", "x", "É", "é", "ß", "ǅ", "٣", "anti-Dr", "Saint-cf"]
MARKS = [".", ". ", "? ", "! ", "\u2026 ", "...", ". . .", "..", "--", "-", ",", ";", ":", "(", ")", '"', "'"]
MARKS += ["\u00ab", "\u00bb", "\u2019", "\u201d", "]", "}", "*", "@", "&", "#", "`", "!!", "?!"]
SPACES = [" ", " ", "  ", "\n", "\n\n", "\n \n", "\t", "\u00a0", "\r", "\x0b", "\x0c", "\u2009"]
PIECES = WORDS + MARKS + SPACES
TYPES = sorted({word.lower() for word in WORDS} | {"##number##", "..", "."})


def subset(items: list) -> st.SearchStrategy[set]:
    """Each item in or out with even odds (hypothesis' own lists would mostly be short)."""
    return st.lists(st.booleans(), min_size=len(items), max_size=len(items)).map(
        lambda keep: {item for item, kept in zip(items, keep) if kept}
    )


@st.composite
def parameters(draw) -> PunktParameters:
    pairs = [(first, second) for first in TYPES for second in TYPES]
    return PunktParameters(
        abbrev_types=draw(subset(TYPES + ["j.-p", "p", "m", "dr"])),
        collocations=set(draw(st.lists(st.sampled_from(pairs), max_size=40))),
        sent_starters=draw(subset(TYPES)),
        ortho_context={word: draw(st.sampled_from(range(128))) for word in TYPES},
    )


def random_parameters(rng: random.Random) -> PunktParameters:
    return PunktParameters(
        abbrev_types={word for word in TYPES + ["j.-p", "p", "m", "dr"] if rng.random() < 0.5},
        collocations={(rng.choice(TYPES), rng.choice(TYPES)) for _ in range(rng.randrange(40))},
        sent_starters={word for word in TYPES if rng.random() < 0.5},
        ortho_context={word: rng.randrange(128) for word in TYPES},
    )


AFTER_WORD = ["", ".", ".", ". ", "?", "\u2026"] + MARKS


def random_text(rng: random.Random) -> str:
    pieces = []
    for _ in range(rng.randrange(1, 30)):
        if rng.random() < 0.8:
            pieces += [rng.choice(WORDS), rng.choice(AFTER_WORD), rng.choice(SPACES)]
        else:
            pieces.append(rng.choice(PIECES))
    return "".join(pieces)


def test_same_sentences_as_nltk_on_many_seeded_random_texts_and_parameters():
    """Uniform draws, many of them: every rule meets its rare cases (hypothesis below shrinks a failure)."""
    rng = random.Random(30)
    for _ in range(300):
        assert_same_spans(random_parameters(rng), [random_text(rng) for _ in range(10)])


# A word, maybe a mark, a space: most candidate ends then have a word on each side, as in notes.
word_mark_space = st.tuples(st.sampled_from(WORDS), st.sampled_from(AFTER_WORD), st.sampled_from(SPACES)).map("".join)
texts = st.lists(st.one_of(word_mark_space, word_mark_space, st.sampled_from(PIECES)), min_size=4, max_size=40).map(
    "".join
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parameters=parameters(), text=texts)
def test_same_sentences_as_nltk_on_random_texts_and_parameters(parameters, text):
    assert list(PunktSplitter(parameters).span_tokenize(text)) == list(nltk_splitter(parameters).span_tokenize(text))


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("aA1.?!\u2026-,;:()\"'\u00bb \n\t\u00a0")), max_size=40))
def test_same_sentences_as_nltk_on_random_characters(text):
    assert_same_spans(default_parameters(), [text])


@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_same_word_tokens_as_nltk(text):
    reference = nltk_splitter(PunktParameters())
    assert word_tokens(text) == [token.tok for token in reference._tokenize_words(text)]


def test_splitting_does_not_import_nltk():
    code = (
        "import sys\n"
        "from deid_ds.segmentation.segmenter import segment_html\n"
        "assert len(segment_html('<p>Vu par le Dr. Martin. Il va bien.</p>').sentences) == 2\n"
        "print(sorted(m for m in ('nltk', 'scipy', 'regex') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert out.strip() == "[]"
