"""Where deid-ds's HTML scanner and the standard library's ``html.parser`` read markup differently: a report.

deid-ds's scanner has its own specification (deid_ds.segmentation.html_scanner) and does not depend on
``html.parser``; the standard library's parser changes from one Python release to the next. These tests
compare the markup each one finds (tags with their names, comments, declarations, processing
instructions, each at its position) through ``HTMLParser``'s public handlers only:

* on the sample notes, the two must agree: deid-ds reads real notes as the reference parser does;
* on tag soup, the differences are counted by kind and printed (``pytest -s``): a report, true on the
  Python that runs it, not a requirement. On CPython 3.11.7, the kinds are the deliberate choices of the
  specification: a ``<script>``/``<style>`` with no closing tag is an ordinary start tag (the
  standard library reads the rest of the note as its raw text); a marked section of an unknown name
  (``<![foo]>``) is a comment (the standard library raises ``AssertionError``); a raw-text element
  closed by a tag in non-ASCII look-alike letters (``</ſcript>``) is not closed.
"""

from __future__ import annotations

import random
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

from deid_ds.segmentation.html_scanner import scan

from .test_html_text_equals_a_plain_reading_of_the_scanner import MODELED, PAIRS, SAFE, UNMODELED, soup

REPO = Path(__file__).resolve().parents[2]


class _Recorder(HTMLParser):
    """The markup events of the standard library's parser, with their positions (public API only)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.line_starts = [0] + [i + 1 for i, char in enumerate(html) if char == "\n"]
        self.events: list[tuple] = []

    def _position(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def handle_starttag(self, tag, attrs):
        self.events.append(("start", self._position(), tag))

    def handle_startendtag(self, tag, attrs):
        self.events.append(("start/", self._position(), tag))

    def handle_endtag(self, tag):
        self.events.append(("end", self._position(), tag))

    def handle_comment(self, data):
        self.events.append(("comment", self._position()))

    def handle_decl(self, decl):
        self.events.append(("declaration", self._position()))

    def unknown_decl(self, data):
        self.events.append(("declaration", self._position()))

    def handle_pi(self, data):
        self.events.append(("pi", self._position()))


def stdlib_events(html: str) -> list[tuple]:
    recorder = _Recorder(html)
    try:
        recorder.feed(html)
        recorder.close()
    except Exception as error:  # (a report: the standard library's own failures are one of its findings)
        recorder.events.append(("error", type(error).__name__))
    return recorder.events


def scanner_events(html: str) -> list[tuple]:
    events: list[tuple] = []
    for c in scan(html):
        if c.kind == "start":
            events.append(("start/" if c.self_closing else "start", c.start, c.name))
        elif c.kind == "end":
            events.append(("end", c.start, c.name))
        elif c.kind == "raw":
            events += [("start", c.start, c.name), ("end", c.content_end, c.name)]
        elif c.kind in ("comment", "declaration", "pi"):
            events.append((c.kind, c.start))
        elif c.kind == "cdata":
            events.append(("declaration", c.start))
    return events


UNCLOSED_RAW_TEXT = "a <script>/<style> never closed: deid-ds reads on, html.parser takes the rest as raw text"
UNKNOWN_SECTION = "a marked section of an unknown name (<![foo]>): a comment for deid-ds, html.parser raises"


def difference(html: str) -> str | None:
    """None where both find the same markup, else the kind of the first difference."""
    ours, theirs = scanner_events(html), stdlib_events(html)
    if ours == theirs:
        return None
    first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    mine = ours[first] if first < len(ours) else ("nothing", len(html))
    stdlib = theirs[first] if first < len(theirs) else ("nothing", len(html))
    if stdlib[0] == "error":
        return UNKNOWN_SECTION
    at = min(mine[1], stdlib[1]) if stdlib[0] != "nothing" else mine[1]
    unclosed = [
        c.start
        for c in scan(html)
        if c.kind == "start" and c.name in ("script", "style") and not c.self_closing and c.start <= at
    ]
    if unclosed:
        return UNCLOSED_RAW_TEXT
    return f"deid-ds {mine[0]} {mine[2:]}, html.parser {stdlib[0]} {stdlib[2:]} at {html[at : at + 12]!r}"


def test_the_sample_notes_markup_is_read_as_the_standard_library_reads_it():
    from deid_ds.io.notes import open_notes

    notes = [n.html for n in open_notes(REPO / "data" / "notes.parquet").iter_notes() if isinstance(n.html, str)]
    assert notes
    assert [d for d in map(difference, notes) if d] == []


def test_common_shapes_are_read_as_the_standard_library_reads_them():
    for token in SAFE:
        if token.lower().startswith(("<script", "<style")) and not token.endswith("/>"):
            continue  # (alone, never closed: see the module docstring)
        assert difference(f"a{token}b") is None, token


def test_report_of_the_differences_on_tag_soup(capsys):
    rng = random.Random(18)
    kinds: Counter[str] = Counter()
    documents = 1000
    for i in range(documents):
        alphabet = SAFE if i % 2 else MODELED + UNMODELED
        found = difference(soup(rng, alphabet, rng.randint(0, 30)))
        if found:
            kinds[found.split(" at ")[0]] += 1
    with capsys.disabled():
        print(f"\ndeid-ds's scanner vs html.parser: {sum(kinds.values())} of {documents} tag soups differ")
        for kind, n in kinds.most_common(15):
            print(f"  {n:5d}  {kind}")
    assert sum(kinds.values()) < documents
    assert len(PAIRS) > 0
