"""Families 3 and 4 (``--phrasing exports`` / ``exports-heldout``): what real warehouses export.

Families 0 to 2 are documents written by a hospital's own software. Real clinical data warehouses also
hold renderings of documents made elsewhere, and their identifiers look different there: PDF files
converted to HTML one positioned line at a time, CDA R2 documents rendered through a style sheet,
fixed-width mainframe exports in ``<pre>``, dictated reports transcribed in lower case, nurse
transmissions, administrative letters typed in capitals, laboratory reports. Each export style is one
module of this package with one ``write(ctx)``; family 3 is each style's development phrasing and family 4
its held-out phrasing (``ctx.variant``), written with other wordings and layouts, for a test set that
measures generalisation to a style's unseen phrasing.

What is an entity and where it starts and ends follows the annotation guidelines exactly, as in the other
families. Export notes draw from their own random stream, so the notes of families 0 to 2 are byte for
byte what they were before this package existed.
"""

from __future__ import annotations

# each style's module registers its writer in STYLES when imported
from deid_ds.synth.exports.context import STYLES, ExportContext

from deid_ds.synth.exports import (  # noqa: F401  # isort: skip
    caps_letter,
    cda,
    dictation,
    fixed_width,
    lab_report,
    pdf,
    transmissions,
)

__all__ = ["STYLES_OF_DOC_TYPE", "ExportContext", "write_export_note"]

#: doc_type -> the export styles such a document reaches a warehouse in, with their weights
STYLES_OF_DOC_TYPE: dict[str, dict[str, int]] = {
    "hospitalisation_report": {"pdf": 4, "cda": 3, "dictation": 2, "transmissions": 2},
    "discharge_letter": {"pdf": 3, "caps_letter": 2, "cda": 1},
    "operative_report": {"dictation": 3, "pdf": 2},
    "consultation": {"dictation": 3, "cda": 2, "pdf": 2},
    "emergency": {"transmissions": 3, "fixed_width": 2, "pdf": 1},
    "imaging": {"fixed_width": 2, "dictation": 2, "pdf": 1},
    "prescription": {"fixed_width": 2, "pdf": 1},
    "pathology": {"cda": 2, "fixed_width": 1},
    "referral_letter": {"caps_letter": 2, "pdf": 1},
    "patient_letter": {"caps_letter": 1},
    "convocation": {"caps_letter": 2, "fixed_width": 1},
    "biology": {"lab_report": 3, "fixed_width": 1},
}


def write_export_note(ctx: ExportContext, doc_type: str) -> str:
    """Write one note of ``doc_type`` in an export style drawn for it; the style's name is returned."""
    weights = STYLES_OF_DOC_TYPE[doc_type]
    names = sorted(weights)
    chosen = ctx.rng.choices(names, [weights[n] for n in names])[0]
    ctx.doc_type = doc_type
    STYLES[chosen](ctx)
    return chosen
