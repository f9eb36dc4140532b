"""Places in the HTML of real exports: spans run over markup from their first to their last character.

guidelines: an address broken over two lines of a PDF export is one span, and offsets run from the
entity's first to its last character in the source (never starting or ending on a tag). The PDF-to-HTML
conversions put one absolutely positioned ``<div>`` per line; the labeller reads the extracted text and
its spans are mapped back to the HTML, as ``weak-label`` does.
"""

from __future__ import annotations

import pytest

from deid_ds.label.labeller import WeakLabeller
from deid_ds.segmentation.html_text import html_to_text
from deid_ds.segmentation.tokens import tokenize


def html_entities(html: str) -> list[tuple[str, str]]:
    parsed = html_to_text(html)
    found = WeakLabeller().label(parsed.text, tokenize(parsed.text))
    spans = [(c.label, parsed.html_span(c.start, c.end)) for c in found]
    return [(label, html[start:end]) for label, (start, end) in spans]


PDF_LINE = '<div style="position:absolute;top:{}px;left:72px">{}</div>\n'
BREAK = '</div>\n<div style="position:absolute;top:24px;left:72px">'  # between the first and second lines


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            ["12 rue du G&eacute;n&eacute;ral", "de Gaulle", "35000 RENNES"],
            [
                (
                    "STR",
                    f"12 rue du G&eacute;n&eacute;ral{BREAK}de Gaulle",
                ),
                ("ZIP", "35000"),
                ("VILLE", "RENNES"),
            ],
        ),
        (
            ["Domicile : 47 boulevard", "Pasteur, Paris 15e"],
            [
                ("STR", f"47 boulevard{BREAK}Pasteur"),
                ("VILLE", "Paris"),
            ],
        ),
        (
            ["B&acirc;timent C, Escalier 2", "12-14 rue de la Paix", "97400 Saint-Denis"],
            [
                ("STR", "B&acirc;timent C"),
                ("STR", "Escalier 2"),
                ("STR", "12-14 rue de la Paix"),
                ("ZIP", "97400"),
                ("VILLE", "Saint-Denis"),
            ],
        ),
    ],
)
def test_an_address_over_pdf_lines_is_found_as_written_in_the_html(lines: list[str], expected) -> None:
    html = "".join(PDF_LINE.format(12 + 12 * k, line) for k, line in enumerate(lines))
    assert html_entities(html) == expected


def test_an_arrondissement_in_a_table_cell_leaves_its_number_outside() -> None:
    html = "<table><tr><td>Ville</td><td>PARIS 13</td></tr><tr><td>Adresse</td><td>TSA 40031</td></tr></table>"
    assert html_entities(html) == [("VILLE", "PARIS"), ("STR", "TSA 40031")]
