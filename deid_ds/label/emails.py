"""EMAIL labelling function: e-mail addresses, with exactly the characters the tokenizer keeps.

The address pattern mirrors :mod:`deid_ds.tokens` (an address is one token there), so a candidate
always starts and ends on a token boundary; a final period belongs to the sentence, not the domain.
"""

from __future__ import annotations

import re

from deid_ds.label.candidate import Candidate

LABEL = "EMAIL"

_EMAIL = re.compile(r"(?<![\w.+\-])[\w.+\-]*\w@[\w\-]+(?:\.[\w\-]+)*\.[^\W\d_]{2,}(?![\w@]|-\w)")
# "jean.dupont [at] chu-rennes [dot] fr" and "jean.dupont(at)chu-rennes.fr": obfuscated forms seen in
# mailing lists; rare in notes but trivially identifying.
_OBFUSCATED = re.compile(
    r"(?<![\w.+\-])[\w.+\-]*\w\s?[\[(](?:at|arobase)[\])]\s?[\w\-]+(?:(?:\.|\s?[\[(](?:dot|point)[\])]\s?)[\w\-]+)+",
    re.IGNORECASE,
)
_OBFUSCATION_HINT = re.compile(r"[\[(](?:at|arobase)[\])]", re.IGNORECASE)


def find_emails(text: str) -> list[Candidate]:
    """Every e-mail address of ``text``: ``pattern:email`` and ``pattern:email_obfuscated``."""
    # Cheap pre-checks: the address patterns backtrack over every word, and most notes hold no address.
    found = []
    if "@" in text:
        found = [Candidate(m.start(), m.end(), LABEL, "pattern:email", 0.99) for m in _EMAIL.finditer(text)]
    if not _OBFUSCATION_HINT.search(text):
        found.sort(key=lambda c: c.start)
        return found
    for m in _OBFUSCATED.finditer(text):
        if not any(m.start() < c.end and c.start < m.end() for c in found):
            found.append(Candidate(m.start(), m.end(), LABEL, "pattern:email_obfuscated", 0.9))
    found.sort(key=lambda c: c.start)
    return found
