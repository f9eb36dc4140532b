"""Property tests: for any generated HTML, offsets are exact, monotonic, and no text is lost.

The generator assembles notes from pieces whose visible text is known: words (with accents, digits,
punctuation, stray ``<`` and ``&``), character references, inline and block tags (possibly splitting a
word), comments, scripts and whitespace. Whatever the mix:

* every extracted character reads back from its source range (literally, as a decoded reference, or
  as collapsed whitespace), and inserted layout characters have an empty range;
* source ranges are non-decreasing and never overlap;
* the non-whitespace characters of the text are exactly those of the visible pieces, in order;
* every token's HTML span, with tags removed and references decoded, reads as the token.
"""

from __future__ import annotations

import html as htmllib
import re
from html.entities import codepoint2name

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_ds.segmentation.html_text import html_to_text
from deid_ds.segmentation.segmenter import Segmenter

WORD_CHARS = "abcdeéèàçôïœABCDÉÈÀÇ0123456789.,;:-'/@()+%°«»’"
HTML_WHITESPACE = " \t\n\r\f"


def _named(char: str) -> str:
    return f"&{codepoint2name[ord(char)]};"


@st.composite
def pieces(draw):
    """A list of (html, visible_text) pieces."""
    kind = draw(
        st.sampled_from(
            [
                "word",
                "word",
                "word",
                "ref",
                "inline",
                "block",
                "split_word",
                "space",
                "comment",
                "script",
                "stray",
                "br",
                "cell",
            ]
        )
    )
    if kind == "word":
        word = draw(st.text(alphabet=WORD_CHARS, min_size=1, max_size=8))
        return word, word
    if kind == "ref":
        char = draw(st.sampled_from("éèàçôÉ\xa0€©<>&\"'"))
        style = draw(st.sampled_from(["named", "dec", "hex"]))
        if style == "named" and ord(char) in codepoint2name:
            return _named(char), char
        if style == "hex":
            return f"&#x{ord(char):X};", char
        return f"&#{ord(char)};", char
    if kind == "inline":
        tag = draw(st.sampled_from(["b", "i", "span", "font", "u"]))
        word = draw(st.text(alphabet=WORD_CHARS, min_size=1, max_size=6))
        return f"<{tag} class=x>{word}</{tag}>", word
    if kind == "split_word":
        left = draw(st.text(alphabet="abcXYZ", min_size=1, max_size=4))
        right = draw(st.text(alphabet="abcXYZ", min_size=1, max_size=4))
        return f"<b>{left}</b>{right}", left + right
    if kind == "block":
        tag = draw(st.sampled_from(["p", "div", "li", "h1", "tr", "table"]))
        return draw(st.sampled_from([f"<{tag}>", f"</{tag}>"])), ""
    if kind == "br":
        return draw(st.sampled_from(["<br>", "<br/>", "<BR />"])), ""
    if kind == "cell":
        return draw(st.sampled_from(["<td>", "</td>", "<th>"])), ""
    if kind == "space":
        return draw(st.text(alphabet=HTML_WHITESPACE, min_size=1, max_size=3)), ""
    if kind == "comment":
        return "<!-- " + draw(st.text(alphabet="abc DUPONT", max_size=8)) + " -->", ""
    if kind == "script":
        return "<script>var a = '" + draw(st.text(alphabet="ab<>", max_size=5)) + "';</script>", ""
    # stray characters that look like markup but are text
    return draw(st.sampled_from([("a < b", "a < b"), ("AT&T", "AT&T"), ("&", "&")]))


documents = st.lists(pieces(), min_size=0, max_size=40)


def _strip_markup(fragment: str) -> str:
    fragment = re.sub(r"<!--.*?-->|<script>.*?</script>", "", fragment, flags=re.S)
    return htmllib.unescape(re.sub(r"</?[A-Za-z][^<>]*>", "", fragment))


def _non_ws(text: str) -> str:
    return "".join(c for c in text if not c.isspace())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_every_character_reads_back_from_its_source(parts):
    html = "<html><body>" + "".join(h for h, _ in parts) + "</body></html>"
    parsed = html_to_text(html)
    starts, ends = parsed.offsets.starts, parsed.offsets.ends
    assert len(starts) == len(ends) == len(parsed.text)
    for i, char in enumerate(parsed.text):
        s, e = starts[i], ends[i]
        assert 0 <= s <= e <= len(html)
        source = html[s:e]
        if s == e:
            assert char in "\n\t"  # inserted layout character
        elif source.startswith("&") and len(source) > 1:
            assert htmllib.unescape(source) == char or char == " "
        elif char == " ":
            assert source.strip(HTML_WHITESPACE) == ""
        else:
            assert source == char
    for i in range(1, len(starts)):
        assert starts[i - 1] <= starts[i] and ends[i - 1] <= ends[i]
        assert ends[i - 1] <= starts[i] or (starts[i - 1], ends[i - 1]) == (starts[i], ends[i])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_no_visible_character_is_lost_or_invented(parts):
    html = "".join(h for h, _ in parts)
    parsed = html_to_text(html)
    expected = "".join(v for _, v in parts)
    if not re.search(r"<[A-Za-z!/?]", html):
        # no markup at all: plain text mode, references still decoded
        expected = htmllib.unescape(html)
    assert _non_ws(parsed.text) == _non_ws(expected)


SEGMENTER = Segmenter()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_token_html_spans_read_as_the_token(parts):
    html = "<body>" + "".join(h for h, _ in parts) + "</body>"
    segmented = SEGMENTER.segment(html_to_text(html))
    previous_end = 0
    for sentence in segmented.sentences:
        assert sentence.tokens
        assert sentence.html_start == sentence.tokens[0].html_start
        assert sentence.html_end == sentence.tokens[-1].html_end
        for token in sentence.tokens:
            assert segmented.text[token.start : token.end] == token.text
            assert token.html_start >= previous_end  # monotonic, no overlap
            previous_end = token.html_end
            source = html[token.html_start : token.html_end]
            assert not source.startswith("<") or token.text.startswith("<")
            assert _strip_markup(source) == token.text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_strings_never_crash_and_keep_their_non_markup_text(text):
    parsed = html_to_text(text)
    assert len(parsed.offsets) == len(parsed.text)
    if not re.search(r"<[A-Za-z!/?]", text):
        assert _non_ws(parsed.text) == _non_ws(
            "".join(" " if (c < " " and c not in "\t\n\r\f") or c == "\x7f" else c for c in htmllib.unescape(text))
        )
