"""HTML to text: exact offsets, layout, hidden content and malformed input."""

from __future__ import annotations

import html as htmllib
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_ds.segmentation.html_text import decode_reference, html_to_text


def source_of(parsed, start: int, end: int) -> str:
    hs, he = parsed.html_span(start, end)
    return parsed.html[hs:he]


def visible(fragment: str) -> str:
    """What a reader sees of an HTML fragment: tags and comments removed, references decoded."""
    return htmllib.unescape(re.sub(r"<!--.*?-->|<[^>]*>", "", fragment, flags=re.S))


def find(parsed, needle: str) -> tuple[int, int]:
    start = parsed.text.index(needle)
    return start, start + len(needle)


def test_character_references_become_one_character_mapped_to_the_whole_reference():
    parsed = html_to_text("n&eacute;e &#233; &#xE9; LE&nbsp;GALL")
    assert parsed.text == "née é é LE\xa0GALL"
    assert [parsed.offsets.char_range(i) for i in (1, 4, 6)] == [(1, 9), (11, 17), (18, 24)]
    assert parsed.html[slice(*parsed.offsets.char_range(10))] == "&nbsp;"


def test_an_entity_split_by_tags_maps_back_to_its_first_and_last_character():
    parsed = html_to_text("<p>Mme <b>Jean</b> DUPONT est venue</p>")
    span = find(parsed, "Jean DUPONT")
    assert source_of(parsed, *span) == "Jean</b> DUPONT"
    assert visible(source_of(parsed, *span)) == "Jean DUPONT"


def test_reverse_lookup_projects_an_html_range_onto_the_text():
    html = "<td>Dr <i>Yann</i>&nbsp;KERBRAT</td>"
    parsed = html_to_text(html)
    start = html.index("Yann")
    end = html.index("KERBRAT") + len("KERBRAT")
    ts, te = parsed.text_span(start, end)
    assert parsed.text[ts:te] == "Yann\xa0KERBRAT"
    assert parsed.html_span(ts, te) == (start, end)


def test_block_elements_never_glue_words_together():
    parsed = html_to_text("<div>RENNES</div><div>Cedex</div><p>Un</p><p>Deux</p><li>a</li><li>b</li>")
    assert parsed.text == "RENNES\nCedex\n\nUn\n\nDeux\n\na\nb"


def test_table_cells_are_separated_by_a_tab_and_rows_by_a_line_break():
    parsed = html_to_text("<table><tr><td>CHU</td><td>Rennes</td></tr><tr><th>Tél</th><td>02 99</td></tr></table>")
    assert parsed.text == "CHU\tRennes\nTél\t02 99"


def test_inserted_layout_characters_have_no_source_and_never_enter_a_span():
    parsed = html_to_text("<p>Jean</p><p>DUPONT</p>")
    newlines = [i for i, c in enumerate(parsed.text) if c == "\n"]
    assert newlines and all(parsed.offsets.is_inserted(i) for i in newlines)
    # a span that starts or ends on inserted characters is trimmed to real ones
    assert parsed.html_span(0, len(parsed.text)) == (3, parsed.html.index("DUPONT") + 6)


def test_br_storms_are_capped_at_one_blank_line():
    parsed = html_to_text("a" + "<br>" * 12 + "b<br/>c</br>d")
    assert parsed.text == "a\n\nb\nc\nd"


def test_whitespace_collapses_like_a_browser_but_pre_keeps_it():
    parsed = html_to_text("<p>  Le   patient\n\t est  </p><pre>a  b\r\n  c</pre>")
    assert parsed.text == "Le patient est\n\na  b\n  c"
    space = parsed.text.index(" ")
    assert parsed.html[slice(*parsed.offsets.char_range(space))] == "   "


def test_plain_text_notes_keep_their_lines():
    parsed = html_to_text("Compte rendu\r\nPatient : Jean DUPONT\n\nConclusion")
    assert parsed.text == "Compte rendu\nPatient : Jean DUPONT\n\nConclusion"
    assert parsed.html[slice(*parsed.offsets.char_range(12))] == "\r\n"


def test_script_style_comments_and_head_produce_no_text_but_are_reported():
    html = (
        "<html><head><title>CR DUPONT Jean</title><meta charset=utf-8><style>p {color: red}</style></head>"
        "<body><!-- dicté par KERBRAT --><script>var x = '<b>';</script><p>Texte</p></body></html>"
    )
    parsed = html_to_text(html)
    assert parsed.text == "Texte"
    hidden = {h.reason: html[h.html_start : h.html_end] for h in parsed.hidden}
    assert hidden["title"] == "CR DUPONT Jean"
    assert "KERBRAT" in hidden["comment"]
    assert hidden["script"] == "var x = '<b>';"


def test_text_in_an_unclosed_head_is_not_lost():
    parsed = html_to_text("<head><title>t</title>Le patient va bien")
    assert parsed.text == "Le patient va bien"


@pytest.mark.parametrize(
    "html, expected",
    [
        ("a < b et c<3 jours", "a < b et c<3 jours"),
        ("AT&T et &unknown; et & seul", "AT&T et &unknown; et & seul"),
        ("fin sur un esperluette &", "fin sur un esperluette &"),
        ("fin sur une référence incomplète &#", "fin sur une référence incomplète &#"),
        ("<p>balise non fermée <b>gras", "balise non fermée gras"),
        ("</div>fermeture orpheline</span>", "fermeture orpheline"),
        ("tag tronqué <div", "tag tronqué <div"),
        ("<![if !supportLists]>- <![endif]>item", "- item"),
        ("<![weird]>texte", "texte"),
        ("<![CDATA[Jean <DUPONT>]]>", "Jean <DUPONT>"),
        ("<style>jamais fermé, le reste de la note", "jamais fermé, le reste de la note"),
        ("<title>jamais fermé non plus", "jamais fermé non plus"),
        ("", ""),
    ],
)
def test_malformed_input_never_crashes_and_never_loses_text(html, expected):
    assert html_to_text(html).text == expected


def test_a_closing_tag_hidden_in_a_comment_does_not_hide_the_rest_of_the_note():
    parsed = html_to_text("<title>Nom<!-- </title> --> suite du texte")
    assert "suite du texte" in parsed.text
    assert parsed.warnings == {"unclosed_hidden_element": 1}


def test_unclosed_hidden_elements_are_counted():
    assert html_to_text("<style>reste").warnings == {"unclosed_hidden_element": 1}


def test_nul_bytes_and_control_characters_separate_words_and_are_counted():
    parsed = html_to_text("<p>Jean\x00DUPONT\x01né</p>")
    assert parsed.text == "Jean DUPONT né"
    assert parsed.warnings == {"control_chars": 2}


def test_bytes_that_are_not_utf8_fall_back_per_byte_to_windows_1252():
    data = "<p>Hôpital ".encode() + b"n\xe9e le 3 f\xe9vrier \x80</p>"
    parsed = html_to_text(data)
    assert parsed.text == "Hôpital née le 3 février €"
    assert parsed.warnings == {"fallback_decoded_bytes": 3}
    assert parsed.html.startswith("<p>Hôpital")


def test_utf8_bytes_with_a_bom_decode_cleanly():
    parsed = html_to_text(b"\xef\xbb\xbf<p>\xc3\xa9t\xc3\xa9</p>")
    assert parsed.text == "été" and parsed.warnings == {}


@pytest.mark.parametrize(
    "ref, expected",
    [
        ("&eacute;", ("é", 8)),
        ("&eacute", ("é", 7)),
        ("&eacutex", ("é", 7)),
        ("&#233;", ("é", 6)),
        ("&#xe9", ("é", 5)),
        ("&#128;", ("€", 6)),  # Windows-1252 remapping of C1 code points, as browsers do
        ("&nosuchname;", ("", 0)),
        ("&NotEqualTilde;", ("\u2242\u0338", 15)),
    ],
)
def test_references_decode_as_in_html5(ref, expected):
    assert decode_reference(ref) == expected


WORD_EXPORT = """<html xmlns:o="urn:schemas-microsoft-com:office:office">
<head><meta http-equiv=Content-Type content="text/html; charset=utf-8">
<!--[if gte mso 9]><xml><o:OfficeDocumentSettings></o:OfficeDocumentSettings></xml><![endif]-->
<style><!-- p.MsoNormal {margin:0cm;} --></style></head>
<body lang=FR style='tab-interval:35.4pt'>
<div class=WordSection1>
<p class=MsoNormal><b><span style='font-size:14.0pt'>COMPTE RENDU D&#8217;HOSPITALISATION<o:p></o:p></span></b></p>
<p class=MsoNormal><o:p>&nbsp;</o:p></p>
<p class=MsoNormal><span style='mso-bidi-font-weight:bold'>Patient&nbsp;: M. <span
style='text-transform:uppercase'>Durand</span> Pierre, n&eacute; le 04/05/1950<o:p></o:p></span></p>
<p class=MsoListParagraph style='text-indent:-18.0pt;mso-list:l0 level1 lfo1'><![if !supportLists]><span
style='font-family:Symbol'>·<span style='font:7.0pt "Times New Roman"'>&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;
</span></span><![endif]>HTA<o:p></o:p></p>
</div></body></html>"""


def test_word_exported_html():
    parsed = html_to_text(WORD_EXPORT)
    lines = [line.strip() for line in parsed.text.split("\n") if line.strip()]
    assert lines[0] == "COMPTE RENDU D\u2019HOSPITALISATION"
    assert lines[-2] == "Patient\xa0: M. Durand Pierre, né le 04/05/1950"
    assert lines[-1].startswith("·") and lines[-1].endswith("HTA")
    span = find(parsed, "Durand Pierre")
    assert visible(source_of(parsed, *span)).split() == ["Durand", "Pierre"]


def test_nested_tables_keep_cells_apart():
    html = (
        "<table><tr><td><table><tr><td>CHU de Rennes</td><td>Pôle cardio</td></tr>"
        "<tr><td>2 rue Henri Le Guilloux</td></tr></table></td><td>Dr KERBRAT<br>Dr MORVAN</td></tr></table>"
    )
    parsed = html_to_text(html)
    assert "CHU de Rennes\tPôle cardio\n2 rue Henri Le Guilloux" in parsed.text
    assert "Dr KERBRAT\nDr MORVAN" in parsed.text
    assert not re.search(r"[a-z][A-Z]", parsed.text.replace("KERBRAT", "").replace("MORVAN", ""))


def test_a_bogus_numeric_reference_does_not_stop_markup_parsing():
    # "&#" not followed by digits, with a ";" further on, used to make HTMLParser (convert_charrefs=False)
    # stop recognising markup: the rest of the note, tags included, came out as text.
    parsed = html_to_text("<p>a &#; b</p><p>c &#x; d</p><p>e <b>x</b> &#</p><i>y</i>")
    assert parsed.text == "a &#; b\n\nc &#x; d\n\ne x &#\n\ny"
    assert "<" not in parsed.text


def _general_rules_only(html: str):
    """html_to_text with the scanner's fast alternatives off: every construct read by ``markup_at`` (the
    general rules of the specification), only text runs matched by the pattern."""
    import deid_ds.segmentation.html_text as html_text
    from deid_ds.segmentation import html_scanner

    alternatives = tuple(
        (kind, pattern if kind in ("run", "text", "other") else "(?!)" + pattern)
        for kind, pattern in html_scanner.ALTERNATIVES
    )
    saved = html_text.SCANNER
    html_text.SCANNER = html_scanner._compile(alternatives)
    try:
        return html_to_text(html)
    finally:
        html_text.SCANNER = saved


def assert_same_without_fast_paths(html: str) -> None:
    fast, slow = html_to_text(html), _general_rules_only(html)
    assert (fast.text, fast.offsets, fast.hidden, fast.warnings) == (
        slow.text,
        slow.offsets,
        slow.hidden,
        slow.warnings,
    )


SIMPLE_TAG_SHAPES = [
    "<p>Jean</p><P>DUPONT</P><br><BR></br><b>x</b><td>1</td><td>2</td></tr>",
    "<title>Jean</title><p>x</p>",
    "<head><title>t</title><style>p{}</style></head><body><p>x</p></body>",
    "<script>var a = '<p>x</p>';</script><p>y</p>",
    "<style>b{}</style><textarea><b>kept</b></textarea><xmp><p>raw</p></xmp>z",
    "<pre>\n  a\n</pre><h1x>b</h1x><b-c>c</b-c></b c><p >d</p ><br/><br />",
    "<template><p>x</p></template><noscript><p>y</p></noscript><iframe><p>z</p></iframe>",
    "<script>unclosed <p>Jean</p>",
    "<p>a<p>b</div></td></br><plaintext><p>c</p>",
    '<td class="x" colspan=2>a</td><p style=\'a:b\'>b</p><font size=2 face="Arial">c</font>',
    '<div\nclass="c"\n>d</div><title lang=fr>t</title><style type="text/css">p{}</style><p>e</p>',
    '<p class="a"/>f<a href=http://x/y>g</a><p a=>h<p a = "b">i<td\xa0class=x>j',
]


#: Unterminated and odd constructs (read by markup_at whatever the fast alternatives).
NASTY_LOOP_SHAPES = [
    "text with a trailing &amp",
    "a < b and c <",
    "<p>unterminated <b",
    "<script>never closed",
    "<!-- never closed <p>x</p>",
    "<p>x</p><",
    "<?pi never closed",
    "<!DOCTYPE never closed",
    "</",
    "<p>a &#; b</p><p>e <b>x</b> &#</p><i>y</i>",
    "<textarea>&eacute;<p></textarea>&eacute;",
    "<title>a</title  ><style>x</ style><p>y</p>",
]


@pytest.mark.parametrize("html", SIMPLE_TAG_SHAPES + NASTY_LOOP_SHAPES)
def test_the_scanners_fast_alternatives_change_nothing(html):
    """The pattern's alternatives for the common shapes give what the general rules give."""
    assert_same_without_fast_paths(html)


_SOUP = [
    "<p>",
    "</p>",
    "<br>",
    "<BR>",
    "<br/>",
    "</br>",
    "<b>",
    "</b>",
    "<td>",
    "</td>",
    "<td class=x>",
    "<div>",
    "</DIV>",
    "<pre>",
    "</pre>",
    "<textarea>",
    "</textarea>",
    "<title>",
    "</title>",
    "<head>",
    "</head>",
    "<script>",
    "</script>",
    "<style>",
    "</style>",
    "<xmp>",
    "</xmp>",
    "<template>",
    "</template>",
    "<!-- c -->",
    "<!--",
    "-->",
    "<!DOCTYPE html>",
    "<![CDATA[x<y]]>",
    "<?pi?>",
    "<",
    ">",
    "</",
    "</>",
    "<p",
    "&amp;",
    "&#",
    "&#;",
    "&",
    "\n",
    "  ",
    "Jean",
    "é",
    "<h1x>",
    "<b-c>",
    "</b c>",
    "<br\n>",
    '<a href="x>y">',
    "</a>",
    '<td class="x" colspan=2>',
    "<p style='a:b'>",
    '<font size=2 face="Arial">',
    '<div\nclass="c"\n>',
    "<p id=a id='b'>",
    '<img src="a.png" alt="Jean">',
    '<p class="a"/>',
    '<span lang=FR style="x" >',
    "<a href=http://x/y>",
    "<p a=>",
    '<p a = "b">',
    "<title lang=fr>",
    '<style type="text/css">',
    '<P CLASS="X">',
    "<td\xa0class=x>",
    '<b data-x="\'">',
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_SOUP), max_size=40))
def test_the_scanners_fast_alternatives_change_nothing_on_tag_soup(parts):
    assert_same_without_fast_paths("".join(parts))
