"""Replacing entities inside the HTML (``deid_ds.deidentification.html_replace``): offsets, structure, escaping."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification.html_replace import Edit, SpanError, apply_edits, locate, split_replacement
from deid_ds.segmentation.html_text import html_to_text


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.tags: list[tuple] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(("start", tag, tuple(attrs)))

    def handle_endtag(self, tag):
        self.tags.append(("end", tag))

    def handle_comment(self, data):
        self.tags.append(("comment", data))


def tag_sequence(html: str) -> list[tuple]:
    parser = _Tags()
    parser.feed(html)
    parser.close()
    return parser.tags


def replace(html: str, spans: list[tuple[int, int, str]]) -> tuple[str, list[tuple[int, int]]]:
    parsed = html_to_text(html)
    return apply_edits(parsed, [Edit(locate(parsed, s, e), text) for s, e, text in spans])


def test_entity_split_by_tags_keeps_the_tags():
    html = "<p>Vu <b>Jean</b> DUPONT hier</p>"
    start, end = html.index("Jean"), html.index(" hier")
    out, ranges = replace(html, [(start, end, "Marc DURAND")])
    assert out == "<p>Vu <b>Marc</b> DURAND hier</p>"
    assert out[ranges[0][0] : ranges[0][1]] == "Marc</b> DURAND"
    assert html_to_text(out).text == "Vu Marc DURAND hier"


def test_replacement_of_another_shape_goes_to_the_nearest_word_start():
    html = "<p><b>Jean</b> DUPONT</p>"
    out, _ = replace(html, [(html.index("Jean"), html.index("</p>"), "[PATIENT]")])
    assert tag_sequence(out) == tag_sequence(html)
    assert html_to_text(out).text == "[PATIENT]"
    assert out in ("<p><b>[PATIENT]</b></p>", "<p><b></b>[PATIENT]</p>")


def test_character_references_are_replaced_whole_and_output_escaped():
    html = "<p>Mme LE&nbsp;GALL &amp; fils</p>"
    start, end = html.index("LE"), html.index(" &amp;")
    out, _ = replace(html, [(start, end, "A&B <C>")])
    assert out == "<p>Mme A&amp;B &lt;C&gt; &amp; fils</p>"
    assert html_to_text(out).text == "Mme A&B <C> & fils"


def test_a_cut_inside_a_word_falls_at_the_same_relative_place():
    html = "<p>Jea<i>n</i> X</p>"
    out, _ = replace(html, [(html.index("Jea"), html.index("</i>"), "Marc")])
    assert out == "<p>Mar<i>c</i> X</p>"


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (-1, 4, "outside"),
        (3, 999, "outside"),
        (5, 5, "outside"),
        (0, 7, "does not start and end on text"),  # starts on the <p> tag
        (3, 9, "does not start and end on text"),  # ends inside &nbsp;
    ],
)
def test_invalid_spans_are_refused_without_content(start, end, message):
    html = "<p>Jean&nbsp;DUPONT</p>"
    with pytest.raises(SpanError, match=message) as error:
        locate(html_to_text(html), start, end)
    assert "Jean" not in str(error.value) and "DUPONT" not in str(error.value)


def test_overlapping_spans_are_refused():
    html = "<p>Jean DUPONT</p>"
    with pytest.raises(SpanError, match="overlapping"):
        replace(html, [(3, 7, "A"), (5, 14, "B")])


def test_layout_characters_inside_a_span_are_not_text_segments():
    html = "<td>12 rue X<br>35000</td>"
    parsed = html_to_text(html)
    located = locate(parsed, html.index("12"), html.index("</td>"))
    assert [html[s:e] for s, e in located.segments] == ["12 rue X", "35000"]


# -------------------------------------------------------------------------------------------- properties

_words = st.text(alphabet="abcXYZé&<>", min_size=1, max_size=6)


@given(
    original=st.lists(_words, min_size=1, max_size=5).map(" ".join),
    replacement=st.text(alphabet="ab cD&<", max_size=20),
    data=st.data(),
)
@settings(max_examples=300, deadline=None)
def test_split_replacement_pieces_spell_the_replacement(original, replacement, data):
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(original) - 1)), max_size=4))))
    cuts = [c for c in cuts if 0 < c < len(original)]
    pieces = split_replacement(original, cuts, replacement)
    assert len(pieces) == len(cuts) + 1
    assert "".join(pieces) == replacement


_TAGS = [
    "<b>",
    "</b>",
    "<i>",
    "</i>",
    "<br>",
    '<span class="x">',
    "</span>",
    "&nbsp;",
    "&eacute;",
    "&amp;",
    "<!-- c -->",
]
_fragment = st.one_of(st.sampled_from(_TAGS), st.text(alphabet="abcDEF 12", min_size=1, max_size=8))


@given(parts=st.lists(_fragment, min_size=1, max_size=14), data=st.data())
@settings(max_examples=300, deadline=None)
def test_replacing_keeps_structure_and_every_byte_outside_the_spans(parts, data):
    html = "<p>" + "".join(parts) + "</p>"
    parsed = html_to_text(html)
    n = len(parsed.text)
    if n == 0:
        return
    # random non-overlapping text ranges, mapped to HTML spans as the labeller does
    bounds = sorted(set(data.draw(st.lists(st.integers(0, n), min_size=2, max_size=6))))
    spans = []
    for a, b in zip(bounds[::2], bounds[1::2]):
        start, end = parsed.html_span(a, b)
        if start < end and (not spans or start >= spans[-1][1]):
            spans.append((start, end, data.draw(st.text(alphabet="xy Z&<", min_size=0, max_size=9))))
    if not spans:
        return
    out, ranges = replace(html, spans)
    assert tag_sequence(out) == tag_sequence(html)
    # outside the spans, byte for byte: the pieces between consecutive output ranges are the input's
    cursor_in, cursor_out = 0, 0
    for (start, end, _), (out_start, out_end) in zip(spans, ranges):
        assert out[cursor_out:out_start] == html[cursor_in:start]
        cursor_in, cursor_out = end, out_end
    assert out[cursor_out:] == html[cursor_in:]
    # the rendered text reads the replacements where the entities were
    text = html_to_text(out).text
    for _, _, replacement in spans:
        assert " ".join(replacement.split()) in " ".join(text.split())
