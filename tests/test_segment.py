"""Sentences of clinical notes: Punkt with French abbreviations, aware of the layout."""

from __future__ import annotations

from deid_ds.html_text import html_to_text
from deid_ds.segment import Segmenter, iter_blocks, segment_html


def sentences(html: str, **kwargs) -> list[str]:
    return [s.text for s in Segmenter(**kwargs).segment(html_to_text(html)).sentences]


def test_abbreviations_and_initials_do_not_end_sentences():
    text = "<p>Vu par le Dr. Martin et Mme. Durand. Cf. compte rendu du Pr. J. Le Gall. Fin.</p>"
    assert sentences(text) == ["Vu par le Dr. Martin et Mme. Durand.", "Cf. compte rendu du Pr. J. Le Gall.", "Fin."]


def test_letterhead_lines_are_not_glued_to_the_next_paragraph():
    html = "<div>CHU de Rennes</div><div>2 rue Henri Le Guilloux</div><div>35033 Rennes Cedex 9</div><p>Le patient va bien.</p>"
    assert sentences(html) == ["CHU de Rennes", "2 rue Henri Le Guilloux", "35033 Rennes Cedex 9", "Le patient va bien."]


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
