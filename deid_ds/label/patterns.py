"""The pattern-based labelling functions: DATE, PHONE, EMAIL and ZIP from regexes and local context.

These four entity types are found without gazetteers. Each function takes the note's extracted text
and returns :class:`Candidate` spans in *text* offsets (the labeller maps them to HTML with
:meth:`deid_ds.segmentation.html_text.ParsedHtml.html_span`), aligned to the tokens of
:mod:`deid_ds.segmentation.tokens`.
Candidates flagged ``needs_context`` are left for the labeller to confirm (patient metadata, the BAN,
a neighbouring address entity); :func:`find_patterns` can drop them.
"""

from __future__ import annotations

from deid_ds.label.candidate import Candidate
from deid_ds.label.dates import find_dates
from deid_ds.label.emails import find_emails
from deid_ds.label.occupied import Occupied
from deid_ds.label.phones import find_phones
from deid_ds.label.zips import find_zips, valid_postcode

__all__ = ["Candidate", "find_dates", "find_emails", "find_patterns", "find_phones", "find_zips", "valid_postcode"]


def find_patterns(text: str, *, include_uncertain: bool = False) -> list[Candidate]:
    """All four pattern functions' candidates, sorted by start, overlaps between labels resolved.

    An e-mail or a phone number beats a date or a postcode it overlaps (``0235051990`` holds no
    year; ``29200`` inside an address is not a phone): the longer, more specific pattern wins, by span
    length then confidence, never by call order. ``needs_context`` candidates are kept only with
    ``include_uncertain``.
    """
    found = find_emails(text) + find_phones(text) + find_dates(text) + find_zips(text)
    if not include_uncertain:
        found = [c for c in found if not c.needs_context]
    found.sort(key=lambda c: (-(c.end - c.start), -c.confidence, c.start, c.label))
    kept: list[Candidate] = []
    taken = Occupied(len(text))
    for c in found:
        if not taken.overlaps(c.start, c.end):
            taken.take(c.start, c.end)
            kept.append(c)
    kept.sort(key=lambda c: (c.start, c.end))
    return kept
