"""deid-ds's HTML scanner: its specification (the docstring of deid_ds.segmentation.html_scanner) as examples."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deid_ds.segmentation.html_scanner import GROUP, SCANNER, construct_of_match, markup_at, scan
from deid_ds.segmentation.html_text import html_to_text


def constructs(html: str) -> list[tuple]:
    """(kind, source text[, name]) of each construct; ``/`` after the name for a self-closing tag."""
    out = []
    for c in scan(html):
        if c.kind in ("start", "end", "raw"):
            out.append((c.kind, html[c.start : c.end], c.name + ("/" if c.self_closing else "")))
        else:
            out.append((c.kind, html[c.start : c.end]))
    return out


# -- what is markup ------------------------------------------------------------------------------------
def test_markup_starts_only_at_a_lt_followed_by_a_letter_bang_slash_or_question_mark():
    assert constructs("a < b, c<3, <é> et <") == [("text", "a < b, c<3, <é> et <")]
    assert [c[0] for c in constructs("<p><!x></p><?y>")] == ["start", "comment", "end", "pi"]


def test_text_is_everything_between_markup_verbatim():
    assert constructs("a &amp; b<br>\n  c") == [("text", "a &amp; b"), ("start", "<br>", "br"), ("text", "\n  c")]


# -- start tags ----------------------------------------------------------------------------------------
def test_a_tag_name_is_compared_in_lower_case_and_may_hold_word_namespaces():
    assert constructs("<BR><O:P></o:p>") == [
        ("start", "<BR>", "br"),
        ("start", "<O:P>", "o:p"),
        ("end", "</o:p>", "o:p"),
    ]


def test_quoted_attribute_values_may_hold_gt_and_line_breaks():
    assert constructs("<p title=\"a>b\nc\" class='x>'>t") == [
        ("start", "<p title=\"a>b\nc\" class='x>'>", "p"),
        ("text", "t"),
    ]


def test_odd_attributes_are_part_of_the_tag():
    assert constructs("<a b=\"x\"c><p a'b'><td\xa0class=x>") == [
        ("start", '<a b="x"c>', "a"),
        ("start", "<p a'b'>", "p"),
        ("start", "<td\xa0class=x>", "td\xa0class=x"),  # (a no-break space is no blank: part of the name)
    ]


def test_slash_gt_makes_a_tag_self_closing_but_an_unquoted_value_keeps_its_slash():
    assert constructs("<br/><p /><img src='x'/>") == [
        ("start", "<br/>", "br/"),
        ("start", "<p />", "p/"),
        ("start", "<img src='x'/>", "img/"),
    ]
    assert constructs("<a href=x/><br/ >") == [("start", "<a href=x/>", "a"), ("start", "<br/ >", "br")]


def test_a_tag_that_ends_otherwise_is_text_up_to_where_its_attributes_stop():
    assert constructs("<a\x00>x") == [("text", "<a\x00>x")]


# -- end tags ------------------------------------------------------------------------------------------
def test_end_tags_allow_blanks_and_ignore_what_follows_the_name():
    assert constructs("</ p ></td class=x>") == [("end", "</ p >", "p"), ("end", "</td class=x>", "td")]


def test_an_empty_end_tag_is_text_and_a_slash_before_a_non_letter_opens_a_comment():
    assert constructs("a</>b</3>c") == [("text", "a</>b"), ("comment", "</3>"), ("text", "c")]


# -- comments, declarations, processing instructions ---------------------------------------------------
def test_a_comment_ends_at_the_first_double_dash_gt_blanks_allowed():
    assert constructs("<!-- a <p> -- >b") == [("comment", "<!-- a <p> -- >"), ("text", "b")]
    assert constructs("<!---->x") == [("comment", "<!---->"), ("text", "x")]


def test_lt_bang_dash_dash_gt_is_not_a_complete_comment():
    assert constructs("<!-->x") == [("text", "<!-->x")]


def test_other_lt_bang_constructs_are_comments_up_to_the_next_gt():
    assert constructs("<!x y>z<!->") == [("comment", "<!x y>"), ("text", "z"), ("comment", "<!->")]


def test_a_doctype_is_a_declaration_in_any_case():
    assert constructs("<!DocType html>x") == [("declaration", "<!DocType html>"), ("text", "x")]


def test_words_conditional_sections_are_declarations():
    html = "<![if !supportLists]>- <![endif]>item<![else ]\n>"
    assert [c[0] for c in constructs(html)] == ["declaration", "text", "declaration", "text", "declaration"]


def test_a_cdata_section_is_text_and_other_marked_sections_declarations():
    (cdata,) = scan("<![CDATA[Jean <DUPONT>]]>")
    assert (cdata.kind, cdata.content_start, cdata.content_end) == ("cdata", 9, 22)
    assert constructs("<![cdata[x]]><![ignore[y]]>") == [
        ("declaration", "<![cdata[x]]>"),
        ("declaration", "<![ignore[y]]>"),
    ]


def test_a_marked_section_of_an_unknown_name_or_none_is_a_recovered_comment():
    for html in ("<![foo]>x", "<![]>x", "<![ if]>x"):
        first = next(scan(html))
        assert (first.kind, first.end, first.recovered) == ("comment", len(html) - 1, True)


def test_an_unterminated_marked_section_of_an_unknown_name_is_recovered_text_seen_once_each():
    # "ifa" is not Word's "if" but an unknown name; with no ">" after it, it is text up to the next "<"
    # (the "<" alone at the end of the note), and each recovery stays a construct of its own
    html = "a<![ifa b<![x y"
    assert [(html[c.start : c.end], c.recovered) for c in scan(html)] == [
        ("a", False),
        ("<![ifa b", True),
        ("<", True),
        ("![x y", False),
    ]
    assert html_to_text(html).warnings == {"parser_recovered": 2}


def test_a_processing_instruction_ends_at_the_next_gt():
    assert constructs('<?xml version="1.0"?>x') == [("pi", '<?xml version="1.0"?>'), ("text", "x")]


# -- raw text ------------------------------------------------------------------------------------------
def test_script_and_style_content_is_raw_text_up_to_the_closing_tag():
    html = "<script>if (a<b) x = '<p>';</SCRIPT >y<style type=x>p{}</style\n>"
    script, text, style = scan(html)
    assert (script.kind, script.name, html[script.content_start : script.content_end]) == (
        "raw",
        "script",
        "if (a<b) x = '<p>';",
    )
    assert html[text.start : text.end] == "y"
    assert (style.kind, html[style.content_start : style.content_end]) == ("raw", "p{}")


def test_the_closing_tag_of_raw_text_is_written_in_ascii_letters():
    html = "<script>a</\u017fcript>b</script>"
    (script,) = scan(html)
    assert html[script.content_start : script.content_end] == "a</\u017fcript>b"


def test_a_script_without_closing_tag_is_an_ordinary_start_tag():
    assert constructs("<script>x<p>y") == [
        ("start", "<script>", "script"),
        ("text", "x"),
        ("start", "<p>", "p"),
        ("text", "y"),
    ]
    assert constructs("<script/>x</script>") == [
        ("start", "<script/>", "script/"),
        ("text", "x"),
        ("end", "</script>", "script"),
    ]


def test_other_elements_have_no_raw_text():
    assert [c[0] for c in constructs("<title>a<b>c</b></title><textarea><p></textarea>")] == [
        "start",
        "text",
        "start",
        "text",
        "end",
        "end",
        "start",
        "start",
        "end",
    ]


# -- unterminated constructs ---------------------------------------------------------------------------
def test_an_unterminated_construct_is_text_up_to_the_next_gt():
    assert constructs('<p class="x> y <b>z') == [("text", '<p class="x> y '), ("start", "<b>", "b"), ("text", "z")]
    assert constructs("<!-- x <p>y") == [("text", "<!-- x <p>y")]  # (the <p> inside is text)


@pytest.mark.parametrize("html", ["</td <p", "<p", "<?x", "<![if x", "<!DOCTYPE", "<b a='x", "</", "<!--"])
def test_an_unterminated_construct_without_gt_is_text(html):
    assert constructs(html) == [("text", html)]


def test_without_gt_it_is_text_up_to_the_next_lt_or_the_lt_alone():
    html = '<p a="x <b c'
    first = markup_at(html, 0)
    assert (first.kind, html[first.start : first.end]) == ("text", '<p a="x ')
    second = markup_at(html, first.end)
    assert (second.kind, html[second.start : second.end]) == ("text", "<")


# -- the pattern and the general rules -----------------------------------------------------------------
@pytest.mark.parametrize(
    "html",
    ["<p>", "<BR/>", '<td class="x" colspan=2>', "</o:p>", "<!-- c -->", "<!DOCTYPE html>", "<![endif]>", "<?x?>"],
)
def test_the_patterns_alternatives_give_what_the_general_rules_give(html):
    match = SCANNER.match(html)
    assert match.lastindex != GROUP["other"] and match.end() == len(html)
    assert construct_of_match(match) == markup_at(html, 0)


def test_raw_text_matched_by_the_pattern_is_the_general_rules_raw_text():
    html = "<script type=x>a<b</script>"
    assert construct_of_match(SCANNER.match(html)) == markup_at(html, 0)


# -- properties ----------------------------------------------------------------------------------------
PIECES = [
    "<p>",
    "</p>",
    "<br/>",
    "<b class=x>",
    '<a href="x>y">',
    "<script>",
    "</script>",
    "<style>",
    "</style >",
    "<title>",
    "</title>",
    "<head>",
    "<pre>",
    "</pre>",
    "<!--",
    "-->",
    "<!x>",
    "<![if x]>",
    "<![CDATA[",
    "]]>",
    "<![foo]>",
    "<?",
    "</",
    "<",
    ">",
    "&amp;",
    "&#",
    "Jean",
    " ",
    "\n",
    "\t",
    "\x01",
    "é",
    '"',
    "'",
    "=",
    "/",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_constructs_partition_the_source(parts):
    html = "".join(parts)
    position = 0
    for construct in scan(html):
        assert construct.start == position < construct.end
        if construct.kind in ("raw", "cdata"):
            assert construct.start < construct.content_start <= construct.content_end < construct.end
        position = construct.end
    assert position == len(html)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_text_maps_back_into_the_text_of_the_source(parts):
    """Every character of the text comes from the source's text (or a CDATA section), never from markup;
    inserted layout characters map to an empty range. (An element left open reads the rest of the note as
    text, tags dropped: not checked here.)"""
    html = "<p>" + "".join(parts)
    parsed = html_to_text(html)
    text_ranges = [
        (c.content_start, c.content_end) if c.kind == "cdata" else (c.start, c.end)
        for c in scan(html)
        if c.kind in ("text", "cdata")
    ]
    previous = 0
    for i in range(len(parsed.text)):
        start, end = parsed.offsets.char_range(i)
        assert 0 <= previous <= start <= end <= len(html)
        previous = start
        if start < end and not parsed.warnings.get("unclosed_hidden_element"):
            assert any(a <= start and end <= b for a, b in text_ranges)


# -- the same on every Python --------------------------------------------------------------------------
def _older_pythons_pattern():
    """The pattern as compiled on Pythons without possessive quantifiers (3.10), compiled here."""
    import re

    from deid_ds.segmentation.html_scanner import ALTERNATIVES, _without_possessive_quantifiers

    return re.compile(_without_possessive_quantifiers("|".join(f"(?P<{k}>{a})" for k, a in ALTERNATIVES)))


def _matches(pattern, html: str) -> list[tuple]:
    names = ("lead", "core", "trail", "start_name", "slash", "end_name")
    return [(m.lastgroup, m.span(), *(m.group(name) for name in names)) for m in pattern.finditer(html)]


def test_the_pattern_for_older_pythons_has_no_possessive_quantifier_and_the_same_groups():
    older = _older_pythons_pattern()
    assert "*+" not in older.pattern and "++" not in older.pattern
    assert {name for name in older.groupindex if not name.startswith("_p")} == set(GROUP)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(PIECES + ["<td class=x>", "<a b='c' d=e/>", "</o:p>", "  x  y ", "&eacute;"]), max_size=40)
)
def test_the_pattern_for_older_pythons_matches_the_same(parts):
    html = "".join(parts)
    assert _matches(_older_pythons_pattern(), html) == _matches(SCANNER, html)
