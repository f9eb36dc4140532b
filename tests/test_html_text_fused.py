"""The fused scanner of ``html_to_text`` gives exactly what the HTMLParser-driven extractor gives.

The reference is ``_html_to_text(..., fused=False)``: every document through ``_Extractor``. The fused
scanner must reproduce its text, offset map, hidden ranges and warnings on every document, either by
computing them itself or by giving up (``_fused_extract`` returns None) so that the reference path runs.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import deid_ds.html_text as html_text
from deid_ds.html_text import _fused_extract, _fused_scanner, _html_to_text, html_to_text

REPO = Path(__file__).resolve().parents[1]

needs_fused = pytest.mark.skipif(
    _fused_scanner() is None, reason="this Python's html.parser is not the one the fused scanner mirrors: it never runs"
)


def result(parsed):
    return parsed.text, parsed.offsets, parsed.hidden, parsed.warnings


def assert_same(html: str, preformatted: bool | None = None) -> bool:
    """Fused and reference results are equal; returns whether the fused scanner handled ``html``."""
    reference = _html_to_text(html, preformatted, fused=False)
    fused = _html_to_text(html, preformatted, fused=True)
    assert result(fused) == result(reference)
    # called directly, the scanner must not raise either (html_to_text would hide it by falling back)
    return _fused_extract(html, 1 if preformatted else 0) is not None


#: Tokens the scanner models, alone or among others.
MODELED = [
    "<p>", "</p>", "<P>", "<br>", "<BR>", "<Br>", "<br >", "<br\n>", "</br>", "<b>", "</b>", "<B>", "<span>", "</span>",
    "<font face='Arial' size=2>", "</font>", "<td>", "</td>", "<td class=\"x\" colspan=2>", "<th>", "</th>", "<tr>", "</tr>",
    "<table width=\"100%\">", "</table>", "<div>", "</DIV>", "<li>", "<ul>", "</ul>", "<h1>", "</h1>", "<hr>", "<em>",
    "<pre>", "</pre>", "<PRE>", "<textarea>", "</textarea>", "<xmp>", "</xmp>", "<listing>", "</listing>", "<plaintext>",
    "<head>", "</head>", "<HEAD>", "<body>", "</body>", "<html>", "<title>", "</title>", "</TITLE>", "<title lang=fr>",
    "<template>", "</template>", "<script>", "</script>", "</SCRIPT >", "</script\n>", "</\u017fcript>",
    "<Script type=\"x\">", "<style>", "</style>", "</Style\t>", "<style type=\"text/css\">", "<meta charset=\"utf-8\">",
    "<link rel=x>", "<base>", "<noscript>", "</noscript>", "<img src=\"a.png\" alt=\"Jean\">", "<scripts>", "<stylex>",
    "<titlex>", "</titlex>", "<a href=http://x/y>", "</a>", "<p style='a:b'>", "<div\nclass=\"c\"\n>",
    "<span lang=FR style=\"x\" >", "<p a=>", "<p a = \"b\">", "<b data-x=\"'\">", "<h1x>", "<o>", "<center>", "</center>",
    "<option>", "<frame>", "<noframes>", "<o:p>", "</o:p>", "<w:Sdt x=1>", "</w:Sdt>", "<a.b>", "</a_b>", "<b-c>",
    "</b-c>", "<title.x>", "</title.x>", "<script-x>", "</script-x>", "<TITLE-x>", "<st1:place>", "</st1:place>",
    "<!-- c -->", "<!---->", "<!-- a -- >", "<!--x--\n>", "<!--<p>-->", "<!-- </title> -->", "<!-- </script> -->",
    "<!DOCTYPE html>", "<!doctype>", "<!DocType x>", "<?xml version=\"1.0\"?>", "<?>", "<?php x ?>",
    "Jean", "DUPONT", "a b", "a  b", " x ", "x", "é", "Né le 08.10.75", " ", "  ", "\n", "\n  ", "\t", "\r\n", "\r",
    "\f", "\x0b", "\x01", "\x00", "\x7f", " \x01", "\x01 ", "\xa0", "\u3000", "\u2028",
    "&nbsp;", "&nbsp", "&eacute;", "&eacute", "&eacutex", "&amp;", "&amp", "&AMP;", "&lt;", "&#32;", "&#10;", "&#13;",
    "&#x9;", "&#xD;", "&#1;", "&#0;", "&#233;", "&#x110000;", "&NewLine;", "&Tab;", "&foo;", "&foo", "&", "& ", "&#",
    "&#;", "&#x;", "a&b", "<", "< ", "a < b", "<3", ">", "\"", "'", "=", "/",
]
#: Shapes it gives up on (the reference path runs).
UNMODELED = [
    "<br/>", "<br />", "<p/>", "<script/>", "<title/>", "<p class=\"a\"/>", "<a href=x/>", "</p >", "</ p>", "</p x>",
    "</>", "</", "<!", "<!-", "<!--", "-->", "<!x>", "<![CDATA[x<y]]>", "<![if !supportLists]>", "<![endif]>", "<?pi",
    "<p", "<p a=\"b", "<td\xa0class=x>", "</b c>", "<a href=\"x>y\">", "<!DOCTYPE", "<P CLASS=\"X\">",
]
_ODD = {"</SCRIPT >", "</script\n>", "</\u017fcript>", "</Style\t>", "<a href=http://x/y>", "<p a=>", "<", "< ", "<3"}
#: Tokens the scanner models wherever they appear.
SAFE = [token for token in MODELED if token not in _ODD]
#: Elements drawn as pairs around other tokens (hidden, raw-text, preformatted content).
PAIRS = [
    ("<title>", "</title>"), ("<TITLE lang=fr>", "</Title>"), ("<template>", "</template>"), ("<script>", "</script>"),
    ("<Script type=\"x\">", "</SCRIPT >"), ("<style>", "</style\n>"), ("<style>", "</\u017ftyle></style>"),
    ("<head>", "</head>"), ("<pre>", "</pre>"), ("<textarea>", "</textarea>"),
]


def soup(rng: random.Random, alphabet: list[str], size: int, pairs: bool = True) -> str:
    parts = []
    for _ in range(size):
        if pairs and rng.random() < 0.15:
            open_tag, close_tag = rng.choice(PAIRS)
            parts.append(open_tag + soup(rng, alphabet, rng.randint(0, 6), pairs=False) + close_tag)
        else:
            parts.append(rng.choice(alphabet))
    return "".join(parts)


SHAPES = [
    "<p>Jean</p><P>DUPONT</P><br><BR></br><b>x</b><td>1</td><td>2</td></tr>",
    "<title>Jean</title><p>x</p>",
    "<head><title>t</title><style>p{}</style></head><body><p>x</p></body>",
    "<head>\n <meta charset=\"utf-8\">\n</head>\n<p>x</p>",
    "<head> Jean <p>x</p>",
    "<script>var a = '<p>x</p>';</script><p>y</p>",
    "<style>b{}</style><textarea><b>kept</b></textarea><xmp><p>raw</p></xmp>z",
    "<pre>\n  a\n</pre><h1x>b</h1x><b-c>c</b-c><p >d</p >",
    "<template><p>x</p></template><noscript><p>y</p></noscript><iframe><p>z</p></iframe>",
    "<title>a<style>b</style><script>c</script>d</title>e",
    "<script>a</\u017fcript>b</script>c",
    "<script>never closed",
    "<title>never closed",
    "<title>closed in a comment <!-- </title> --> only",
    "<p>a &#; b</p><p>e <b>x</b> &#</p><i>y</i>",
    "<p>Tel. 02&nbsp;29&nbsp;11 &amp; fax  02\t29 &eacutex &foo; &#10;&#32;x &NewLine;y</p>",
    "<p>a \x01 b\x7f c  \x0b d</p><br>\n\x01x",
    "<td>a </td> <td> b</td><tr><td>\t</td></tr>",
    "<pre>a &#10; b\r\n c\rd\x01e</pre> f <textarea> g  </textarea>",
    "<p>x</p><o:p></o:p><st1:place>Brest</st1:place>",
    "<!DOCTYPE html><?xml version=\"1.0\"?><!-- c --><p>x</p>",
    "a < b and c <",
    "<p>unterminated <b",
    "<br/><p class=\"a\"/>x<![if !supportLists]>y<![endif]>",
    "text with a trailing &amp",
    "",
    "plain text only\n  kept as is",
]


@pytest.mark.parametrize("html", SHAPES)
@pytest.mark.parametrize("preformatted", [None, True, False])
def test_the_fused_scanner_changes_nothing(html, preformatted):
    assert_same(html, preformatted)


@needs_fused
def test_the_fused_scanner_handles_the_common_shapes():
    assert _fused_extract(SHAPES[2]) is not None
    assert _fused_extract(SHAPES[15]) is not None  # references and whitespace
    assert _fused_extract(SHAPES[19]) is not None  # namespaced Word tags
    assert _fused_extract(SHAPES[10]) is not None  # "</ſcript>" is content
    assert _fused_extract(SHAPES[11]) is None  # never closed: the extractor keeps the rest as text
    assert _fused_extract(SHAPES[13]) is None  # the closing tag is in a comment: the same
    assert _fused_extract(SHAPES[23]) is None  # self-closing tags, marked sections


@needs_fused
def test_the_fused_scanner_reads_every_sample_note_as_the_reference_does():
    from deid_ds.notes_io import open_notes

    notes = [n.html for n in open_notes(REPO / "data" / "notes.parquet").iter_notes() if isinstance(n.html, str)]
    assert notes
    for html in notes:
        assert assert_same(html), "the fused scanner gave up on a sample note"


@needs_fused
@pytest.mark.parametrize("phrasing", ["all", "unseen"])
def test_the_fused_scanner_reads_synthetic_notes_as_the_reference_does(phrasing):
    from deid_ds.synth import SynthConfig, generate_corpus

    corpus = generate_corpus(SynthConfig(notes=60, seed=11, noise=0.8, phrasing=phrasing))
    for note in corpus.notes:
        assert assert_same(note["html"]), "the fused scanner gave up on a synthetic note"


def test_tag_soup_offline_sample():
    """Deterministic random soups, most of which the scanner handles (the rest fall back)."""
    rng = random.Random(20261123)
    handled = 0
    for i in range(600):
        html = soup(rng, SAFE if i % 2 else MODELED + UNMODELED, rng.randint(0, 40))
        handled += assert_same(html, True if i % 7 == 0 else None)
    if _fused_scanner() is not None:
        assert handled > 150


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(MODELED + UNMODELED), max_size=40), st.sampled_from([None, True]))
def test_the_fused_scanner_changes_nothing_on_tag_soup(parts, preformatted):
    assert_same("".join(parts), preformatted)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(SAFE), st.tuples(st.sampled_from(PAIRS), st.lists(st.sampled_from(SAFE), max_size=6))), max_size=30))
def test_the_fused_scanner_changes_nothing_on_nested_soup(parts):
    html = "".join(p if isinstance(p, str) else p[0][0] + "".join(p[1]) + p[0][1] for p in parts)
    assert_same(html)


#: Characters and fragments that build odd shapes (truncated tags and comments, stray "&", "<" and "/").
CHARACTERS = list("<>/!?-&#;xpbrtiles a\n\t\r\x01\x0b\xa0\u017f:=\"'") + [
    "<p>", "<br>", "</p>", "<title>", "</title>", "<script>", "</script>", "<!--", "-->", "&nbsp;", "<pre>", "</pre>", "<head>",
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(CHARACTERS), max_size=60))
def test_the_fused_scanner_changes_nothing_on_random_characters(parts):
    assert_same("".join(parts))


def test_the_reference_path_runs_where_the_stdlib_differs(monkeypatch):
    html = SHAPES[2]
    expected = result(_html_to_text(html, None, fused=False))
    monkeypatch.setattr(html_text, "_fused_scanner", lambda: None)
    assert _fused_extract(html) is None
    assert result(html_to_text(html)) == expected


def test_an_error_in_the_fused_scanner_falls_back_to_the_reference(monkeypatch):
    html = SHAPES[0]
    expected = result(_html_to_text(html, None, fused=False))

    def broken(*args, **kwargs):
        raise IndexError("bug")

    monkeypatch.setattr(html_text, "_fused_extract", broken)
    assert result(html_to_text(html)) == expected
