"""Sentences of clinical notes: Punkt with French abbreviations, aware of the layout."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.segmentation.html_text import html_to_text
from deid_ds.segmentation.segmenter import Segmenter, iter_blocks, segment_html
from deid_ds.segmentation.tokens import tokenize


def sentences(html: str, **kwargs) -> list[str]:
    return [s.text for s in Segmenter(**kwargs).segment(html_to_text(html)).sentences]


def test_abbreviations_and_initials_do_not_end_sentences():
    text = "<p>Vu par le Dr. Martin et Mme. Durand. Cf. compte rendu du Pr. J. Le Gall. Fin.</p>"
    assert sentences(text) == ["Vu par le Dr. Martin et Mme. Durand.", "Cf. compte rendu du Pr. J. Le Gall.", "Fin."]


def test_letterhead_lines_are_not_glued_to_the_next_paragraph():
    html = (
        "<div>CHU de Rennes</div><div>2 rue Henri Le Guilloux</div><div>35033 Rennes Cedex 9</div>"
        "<p>Le patient va bien.</p>"
    )
    assert sentences(html) == [
        "CHU de Rennes",
        "2 rue Henri Le Guilloux",
        "35033 Rennes Cedex 9",
        "Le patient va bien.",
    ]


def test_a_line_wrapped_mid_sentence_is_joined_again():
    text = "Le patient a été\nhospitalisé du 01/02 au 03/02. Il sort.\nDr KERBRAT"
    assert sentences(text) == ["Le patient a été\nhospitalisé du 01/02 au 03/02.", "Il sort.", "Dr KERBRAT"]


def test_blocks_split_on_blank_lines_even_before_lower_case():
    text = "Antécédents :\n\nhypertension artérielle"
    assert list(iter_blocks(text)) == [(0, 13), (15, 38)]


def test_long_sentences_are_cut_preferably_after_punctuation():
    words = " ".join("mot," if i % 7 == 6 else "mot" for i in range(60))  # 60 words, 8 commas
    result = Segmenter(max_tokens=20).segment(html_to_text(words)).sentences
    assert all(len(s.tokens) <= 20 for s in result)
    assert sum(len(s.tokens) for s in result) == 68
    assert result[0].tokens[-1].text == ","
    assert len(result[0].tokens) == 16  # cut after the comma, not in the middle of a clause


def test_tokens_carry_text_and_html_offsets():
    html = "<p>Mme <b>Jeanne</b> LE&nbsp;GALL, n&eacute;e le 12/08/1957.</p>"
    note = segment_html(html)
    [sentence] = note.sentences
    by_text = {t.text: t for t in sentence.tokens}
    assert html[by_text["Jeanne"].html_start : by_text["Jeanne"].html_end] == "Jeanne"
    assert html[by_text["née"].html_start : by_text["née"].html_end] == "n&eacute;e"
    assert html[by_text["12/08/1957"].html_start : by_text["12/08/1957"].html_end] == "12/08/1957"
    assert note.text[by_text["GALL"].start : by_text["GALL"].end] == "GALL"
    assert [t.ws for t in sentence.tokens[:4]] == [True, True, True, False]
    assert (sentence.html_start, sentence.html_end) == (3, html.index("</p>"))


def test_empty_and_whitespace_only_notes_have_no_sentences():
    assert segment_html("").sentences == []
    assert segment_html("<p>&nbsp;</p><br><br>").sentences == []


def _reference_blocks(text: str) -> list[tuple[int, int]]:
    """iter_blocks as first written: line by line with find, strip and a backward whitespace scan."""

    def rstrip_end(start: int, end: int) -> int:
        while end > start and text[end - 1].isspace():
            end -= 1
        return end

    blocks, block_start, line_start, n = [], None, 0, len(text)
    while line_start <= n:
        newline = text.find("\n", line_start)
        line_end = n if newline < 0 else newline
        line = text[line_start:line_end]
        stripped = line.strip()
        if stripped:
            continues = stripped[0].islower() and line_start >= 2 and text[line_start - 2] != "\n"
            if block_start is not None and not continues:
                blocks.append((block_start, rstrip_end(block_start, line_start)))
                block_start = None
            if block_start is None:
                block_start = line_start + (len(line) - len(line.lstrip()))
        elif block_start is not None:
            blocks.append((block_start, rstrip_end(block_start, line_start)))
            block_start = None
        if newline < 0:
            break
        line_start = newline + 1
    if block_start is not None:
        blocks.append((block_start, rstrip_end(block_start, n)))
    return blocks


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aB. \n\t\xa0\u2028\x1cé", max_size=60))
def test_iter_blocks_matches_the_reference(text):
    assert list(iter_blocks(text)) == _reference_blocks(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aB.' \n\t@/:w-1é\u2019)\"?\u200b", max_size=80), st.integers(min_value=1, max_value=6))
def test_token_spans_match_per_sentence_tokenize(text, max_tokens):
    """The note is tokenised in one pass when it can be: the same as tokenising sentence by sentence."""
    segmenter = Segmenter(max_tokens=max_tokens)
    compact = segmenter.token_spans(text)
    expected = [span for start, end in segmenter.sentence_spans(text) for span in tokenize(text, start, end)]
    assert list(zip(compact.starts, compact.ends)) == expected
    assert compact.bounds[-1] == len(expected)
    reference = segmenter._per_sentence(text, list(segmenter.sentence_spans(text)))  # sentence by sentence
    assert (compact.bounds, compact.starts, compact.ends) == (reference.bounds, reference.starts, reference.ends)
