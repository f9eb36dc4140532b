"""The review page: for each note, its original text and its de-identified text side by side.

Built on :mod:`deid_ds.io.html_page` (self-contained, nothing fetched, every text escaped), with the
entities of both sides highlighted in the colour of their label, a legend, and a banner: the left
column is the original note, identifiers included.
"""

from __future__ import annotations

from collections.abc import Sequence

from deid_ds.io.html_page import esc, highlighted, label_class, legend, page
from deid_ds.model import LABELS

TITLE = "deid-ds review"
BANNER = (
    "<strong>This page holds identifiers.</strong> The left column shows the original notes: if they are real, so "
    "are the patients' names, dates, addresses and phone numbers. Review it where the notes themselves may be read, "
    "then delete it; do not send or publish it."
)


def _note(item) -> str:
    head = f'<h2 id="{esc("note-" + item.id_document)}">{esc(item.id_document)}</h2>'
    meta = [
        f"type {item.doc_type}" if item.doc_type else "no document type",  # escaped once, below
        f"{len(item.original_spans)} entit{'y' if len(item.original_spans) == 1 else 'ies'} in the text",
    ]
    if item.other_views:
        meta.append(f"{item.other_views} change(s) outside the visible text (title, comments, attributes, scripts)")
    original = highlighted(item.original, item.original_spans)
    if item.deidentified is None:
        right = (
            f'<div class="info">Not de-identified: {esc(item.error)}. <code>deidentify</code> would not write it.</div>'
        )
    else:
        right = f'<div class="note deidentified">{highlighted(item.deidentified, item.deidentified_spans)}</div>'
    return (
        f'<section class="reviewed">{head}<p class="meta">{esc("; ".join(meta))}</p>'
        '<div class="pair">'
        f'<div><h3>Original</h3><div class="note original">{original}</div></div>'
        f"<div><h3>De-identified</h3>{right}</div>"
        f"</div>{_other_changes(item.other_changes)}</section>"
    )


#: An original longer than this (a script emptied) is cut on the page: the list says what changed, not all of it.
SHOWN_ORIGINAL = 120


def _other_changes(changes) -> str:
    """The changes outside the visible text, one line each: view, label, what was there → what is now."""
    if not changes:
        return ""
    items = []
    for view, label, original, replacement in changes:
        shown = original if len(original) <= SHOWN_ORIGINAL else original[:SHOWN_ORIGINAL] + "…"
        what = f'<mark class="{label_class(label)}">{esc(label)}</mark>' if label else "emptied"
        now = f"<ins>{esc(replacement)}</ins>" if replacement else "<i>(nothing)</i>"
        items.append(f"<li>{esc(view)} · {what}: <del>{esc(shown)}</del> → {now}</li>")
    return f'<div class="other-views"><h3>Outside the visible text</h3><ul class="meta">{"".join(items)}</ul></div>'


def review_page(notes: Sequence, *, mode: str, key_origin: str, spans: str) -> str:
    """The whole page for ``notes`` (:class:`deid_ds.review.ReviewedNote`)."""
    labels = list(LABELS) + sorted(
        {label for n in notes for *_, label in (*n.original_spans, *n.deidentified_spans)} - set(LABELS)
    )
    failed = sum(n.deidentified is None for n in notes)
    how = "masked" if mode == "mask" else f"replaced by surrogates (key: {key_origin})"
    intro = (
        f"<p>{len(notes)} note(s); entities from {esc(spans)}, {esc(how)}. "
        + (f"<b>{failed} could not be de-identified safely</b> (shown as such). " if failed else "")
        + "Both sides are the notes' text as the labeller and the model read it (not their HTML layout): the "
        "highlights are the spans on the left and what replaced them on the right.</p>"
    )
    index = " · ".join(f'<a href="#{esc("note-" + n.id_document)}">{esc(n.id_document)}</a>' for n in notes)
    body = "\n".join([intro, legend(labels), f'<p class="meta">{index}</p>', *(_note(n) for n in notes)])
    return page(TITLE, body, banner=BANNER, labels=labels)
