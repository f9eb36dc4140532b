"""The other views read with less work give what they gave read in full (docs/benchmarks.md, *deidentify*): the
regions ``view_edits`` searches are the note's regions without the tag names, and the leak check's views are those
read from every region decoded where it stands."""

from __future__ import annotations

import importlib.util
import sys

import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification import regions as R
from deid_ds.segmentation.html_text import html_to_text
from tests.conftest import REPO

SAMPLE = "data/notes.parquet"

#: The plain reading (every region object, each decoded where it stands) is the benchmark's, which times it.
_SPEC = importlib.util.spec_from_file_location("deidentify_scans", REPO / "benchmarks" / "deidentify_scans.py")
_SCANS = sys.modules["deidentify_scans"] = importlib.util.module_from_spec(_SPEC)  # its dataclasses need it
_SPEC.loader.exec_module(_SCANS)
_view_texts_in_place = _SCANS.view_texts_plainly

_PIECES = [
    *("<p>", "</p>", "<br>", "<br/>", "<td class='c'>", '<td class="a b" data-ipp=80092945>', "</td >", "</p junk>"),
    *("<a href=\"mailto:jean@x.fr\" title='Jean'>", "<img alt=Dupont src=x.png/>", "<!DOCTYPE html>", "<?xml v?>"),
    *("<!-- Dupont -->", "<title>Kerdraon</title>", "<script>var a = '<p>';</script>", "<style>p{}</style>"),
    *("<p title='Du&shy;pont &eacute;'>", '<i data-x="a&#8203;b">', "<!---->", "<td title=&amp;>", "<b\u00ad>"),
    *("Jean", " ", "\n", "&amp;", "&eacute;", "Du&shy;pont", "<", ">", "=", '"', "'", "<b", "<!", "</", "x"),
]
_HTML = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)


def _untagged(parsed) -> list[R.Region]:
    return [r for r in R.regions(parsed) if r.kind != "tag"]


@settings(max_examples=400, deadline=None)
@given(_HTML)
def test_the_regions_without_tags_and_the_leak_checks_views_are_those_read_in_full(html):
    parsed = html_to_text(html)
    assert R.regions(parsed, tags=False) == _untagged(parsed)
    assert R.view_texts(parsed) == _view_texts_in_place(parsed)


def test_a_long_stretch_of_markup_reads_the_same_as_well():
    parsed = html_to_text('<p title="Du&shy;' + "x" * (R._CACHED_UP_TO + 10) + '">Jean</p><p class=a>Dupont</p>')
    assert R.regions(parsed, tags=False) == _untagged(parsed)
    assert R.view_texts(parsed) == _view_texts_in_place(parsed)
    assert any(r.kind == "tag" for r in R.regions(parsed)) and R.regions(parsed, tags=False)


def test_the_sample_notes_read_the_same():
    notes = [html_to_text(html) for html in pq.read_table(SAMPLE, columns=["html"]).column("html").to_pylist()]
    assert [R.regions(p, tags=False) for p in notes] == [_untagged(p) for p in notes]
    assert [R.view_texts(p) for p in notes] == [_view_texts_in_place(p) for p in notes]


def test_view_edits_rewrites_no_tag_region_whatever_the_policy():
    """Why ``view_edits`` may read the regions without the tag names: it blanks or searches none of them."""
    from deid_ds.deidentification.other_views import BLANKED, BLANKED_TOO, SEARCHED

    assert "tag" not in BLANKED | BLANKED_TOO | SEARCHED


@settings(max_examples=300, deadline=None)
@given(_HTML)
def test_a_region_read_before_its_source_ranges_reads_as_read_with_them(html):
    """A region's decoded text (read first, its source ranges worked out only when asked for) is the one read with
    its ranges, and so are the ranges."""
    parsed = html_to_text(html)
    for region in R.regions(parsed):
        text, starts, ends = R._decoded(parsed.html, region.start, region.end)
        decoded = R.decode(parsed.html, region.start, region.end)
        assert decoded.text == text == R.decode_text(parsed.html, region.start, region.end)
        assert (decoded.starts, decoded.ends) == (starts, ends) and len(starts) == len(text)
        if text:
            assert decoded.source(0, len(text)) == (starts[0], ends[-1])
