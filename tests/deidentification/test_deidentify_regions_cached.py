"""A note's regions cut with the stretches of markup cached (each stretch cut once, then shifted to where it
stands) are those cut in place (docs/benchmarks.md, *deidentify*)."""

from __future__ import annotations

import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_ds.deidentification import regions as R
from deid_ds.segmentation.html_text import html_to_text

SAMPLE = "data/notes.parquet"


def _in_place(parsed) -> list[R.Region]:
    """:func:`regions` without the cache: every stretch of markup cut where it stands in the file."""
    html = parsed.html
    found = [R._hidden_region(html, h.html_start, h.html_end, h.reason) for h in parsed.hidden]
    for start, end in R._gaps(parsed):
        found += R._markup_regions(html, start, end)
    return sorted(found, key=lambda r: (r.start, r.end))


_PIECES = [
    *("<p>", "</p>", "<br>", "<br/>", "<td class='c'>", '<td class="a b" data-ipp=80092945>', "</td >", "</p junk>"),
    *("<a href=\"mailto:jean@x.fr\" title='Jean'>", "<img alt=Dupont src=x.png/>", "<!DOCTYPE html>", "<?xml v?>"),
    *("<!-- Dupont -->", "<title>Kerdraon</title>", "<script>var a = '<p>';</script>", "<style>p{}</style>"),
    *("Jean", " ", "\n", "&amp;", "&eacute;", "Du&shy;pont", "<", ">", "=", '"', "'", "<b", "<!", "</", "x"),
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_the_regions_of_a_note_are_those_cut_in_place(html):
    parsed = html_to_text(html)
    assert R.regions(parsed) == _in_place(parsed)


def test_a_long_stretch_of_markup_is_cut_in_place_as_well():
    parsed = html_to_text('<p title="' + "x" * (R._CACHED_UP_TO + 10) + '">Jean</p><p class=a>Dupont</p>')
    assert R.regions(parsed) == _in_place(parsed)


def test_the_sample_notes_regions_are_those_cut_in_place():
    notes = [html_to_text(html) for html in pq.read_table(SAMPLE, columns=["html"]).column("html").to_pylist()]
    found = [R.regions(parsed) for parsed in notes]
    assert found == [_in_place(parsed) for parsed in notes]
    assert {r.view for regions in found for r in regions} >= {"markup", "attribute"}
