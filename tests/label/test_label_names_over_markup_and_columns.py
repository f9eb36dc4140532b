"""Names as export styles write them: over markup elements, over two PDF lines, in two columns of a table.

Guidelines: "A name written over two markup elements (``<span class="given">Jean</span> <span
class="family">DUPONT</span>``) is one span, as is a name or address broken over two lines of a PDF
export; a name split over two columns of a fixed-width table is two spans." The labeller sees the text
of the HTML (:func:`html_to_text`), so these are checked from the HTML, through the text and back to
the HTML offsets, as the weak-label pipeline does.
"""

from __future__ import annotations

import pytest

from deid_ds.label.labeller import WeakLabeller
from deid_ds.model import PatientMetadata
from deid_ds.segmentation.html_text import html_to_text
from deid_ds.segmentation.tokens import tokenize

CASES = [
    # a CDA rendering: given and family names in their own spans, one name
    (
        '<p>Auteur : Dr <span class="given">Jean</span> <span class="family">DUPONT</span></p>',
        None,
        [("DOCTOR", 'Jean</span> <span class="family">DUPONT')],  # never starting or ending on a tag
    ),
    # a PDF conversion: one positioned div a line, the surname on the next line
    (
        '<div style="top:10px">Dr Jean</div><div style="top:24px">DUPONT</div>',
        None,
        [("DOCTOR", 'Jean</div><div style="top:24px">DUPONT')],
    ),
    # a fixed-width mainframe export: surname and first name in two columns, two spans
    (
        "<pre>NOM        PRENOM\nDUPONT     JEAN\n</pre>",
        PatientMetadata(firstname="Jean", lastname="DUPONT"),
        [("PATIENT", "DUPONT"), ("PATIENT", "JEAN")],
    ),
    ("<pre>MEDECIN    Dr KERBRAT     YANN\n</pre>", None, [("DOCTOR", "KERBRAT"), ("DOCTOR", "YANN")]),
]


@pytest.mark.parametrize(("html", "patient", "expected"), CASES)
def test_names_over_markup_lines_and_columns(html: str, patient: PatientMetadata | None, expected) -> None:
    parsed = html_to_text(html)
    found = WeakLabeller().label(parsed.text, tokenize(parsed.text), patient)
    spans = [(c.label, html.__getitem__(slice(*parsed.html_span(c.start, c.end)))) for c in found]
    assert spans == expected
