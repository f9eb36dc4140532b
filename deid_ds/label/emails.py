"""EMAIL labelling function: e-mail addresses, with exactly the characters the tokenizer keeps.

The address pattern mirrors :mod:`deid_ds.segmentation.tokens` (an address is one token there), so a candidate
always starts and ends on a token boundary; a final period belongs to the sentence, not the domain.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from deid_ds.label.candidate import Candidate
from deid_ds.label.occupied import Occupied

LABEL = "EMAIL"

_EMAIL = re.compile(r"(?<![\w.+\-])[\w.+\-]*\w@[\w\-]+(?:\.[\w\-]+)*\.[^\W\d_]{2,}(?![\w@]|-\w)")
_LOCAL_CHAR = re.compile(r"[\w.+\-]")  # what _EMAIL's lookbehind refuses and its local part is made of
# "jean.dupont [at] chu-rennes [dot] fr" and "jean.dupont(at)chu-rennes.fr": obfuscated forms seen in
# mailing lists; rare in notes but trivially identifying. Dictated, the signs are said: "jean point dupont
# arobase chu-rennes point fr" ("arobase" bare, "point" bare only with it).
_AT = r"(?:\s?[\[({](?:at|arobase)[\])}]\s?|[ \t\u00a0]+arobase[ \t\u00a0]+)"
_DOT = r"(?:\.|\s?[\[({](?:dot|point)[\])}]\s?|[ \t\u00a0]+point[ \t\u00a0]+(?=[\w\-]))"
_OBFUSCATED = re.compile(
    rf"(?<![\w.+\-])[\w.+\-]*\w(?:[ \t\u00a0]+point[ \t\u00a0]+[\w\-]*\w)*{_AT}[\w\-]+(?:{_DOT}[\w\-]+)+",
    re.IGNORECASE,
)
_OBFUSCATION_HINT = re.compile(r"[\[({](?:at|arobase)[\])}]", re.IGNORECASE)
# An address broken over two lines of a PDF export, beside its "@" or after a hyphen ("secretariat@" /
# "ch-exemple.fr", "secretariat@ch-" / "exemple.fr", "accueil.onco-" / "logie@ch-exemple.fr"), or typed with a
# blank on each side of its "@": one span (never broken after a dot, which ends a sentence as often).
_BREAK = r"[ \t\u00a0]*(?:\n[ \t\u00a0]*)?"
_LOOSE_EMAIL = re.compile(
    rf"[\w.+\-]*\w(?:-\n[ \t\u00a0]*[\w.+\-]*\w){{0,2}}{_BREAK}@{_BREAK}"
    rf"[\w\-]*\w(?:(?:\.|-\n?[ \t\u00a0]*)[\w\-]*\w)*\.[^\W\d_]{{2,}}(?![\w@]|-\w)"
)
_HYPHEN_BREAK_BEFORE = re.compile(r"-\n[ \t\u00a0]*$")
_LOOSE_START = re.compile(r"[\w.+\-]*\w(?:-\n[ \t\u00a0]*[\w.+\-]*\w){0,2}[ \t\u00a0]*\n?[ \t\u00a0]*$")


def find_emails(text: str) -> list[Candidate]:
    """Every e-mail address of ``text``: ``pattern:email`` (broken over two lines too) and
    ``pattern:email_obfuscated`` (``[at]``, ``(arobase)``, dictated ``arobase`` and ``point``)."""
    # Cheap pre-checks: the address patterns backtrack over every word, and most notes hold no address.
    found = []
    if "@" in text:
        found = [Candidate(m.start(), m.end(), LABEL, "pattern:email", 0.99) for m in _addresses(text)]
        found = _loose_addresses(text, found)
    if not (_OBFUSCATION_HINT.search(text) or "arobase" in text or "AROBASE" in text or "Arobase" in text):
        found.sort(key=lambda c: c.start)
        return found
    taken = Occupied(len(text))
    for c in found:
        taken.take(c.start, c.end)
    for m in _OBFUSCATED.finditer(text):
        if not taken.overlaps(m.start(), m.end()):
            taken.take(m.start(), m.end())
            found.append(Candidate(m.start(), m.end(), LABEL, "pattern:email_obfuscated", 0.9))
    found.sort(key=lambda c: c.start)
    return found


def _addresses(text: str) -> Iterator[re.Match[str]]:
    """``_EMAIL.finditer(text)``, the same matches, with the regex tried only where one can start.

    A match holds one "@" and starts where the run of local-part characters before it starts (the
    lookbehind refuses any other start), so it is matched there only: searched for, the pattern was
    tried at every word of the note and backtracked over each.
    """
    end = 0
    at = text.find("@")
    while at >= 0:
        start = at
        while start > 0 and _LOCAL_CHAR.match(text, start - 1):
            start -= 1
        if start >= end and (m := _EMAIL.match(text, start)) is not None:
            yield m
            end = m.end()
        at = text.find("@", at + 1)


def _loose_addresses(text: str, found: list[Candidate]) -> list[Candidate]:
    """``found`` with the addresses broken over two lines or with blanks around their "@"
    (:data:`_LOOSE_EMAIL`), tried at each "@" from the local part before it, over the line break: such an
    address replaces the part of it found on one line (``onco-`` / ``[logie@ch-exemple.fr]``)."""
    kept = list(found)
    at = text.find("@")
    while at >= 0:
        held = [c for c in kept if c.start <= at < c.end]
        m = head = None
        # (an address found whole on its line is tried further only when a hyphen's line break opens it)
        if not held or _HYPHEN_BREAK_BEFORE.search(text, max(0, held[0].start - 8), held[0].start):
            head = _LOOSE_START.search(text, max(0, at - 80), at)
        if head is not None:
            start = head.start()
            while start > 0 and _LOCAL_CHAR.match(text, start - 1):
                start -= 1  # the window cut a long local part
            m = _LOOSE_EMAIL.match(text, start)
        if m is not None and ("\n" in m.group() or " @" in m.group() or "@ " in m.group()):
            if all(m.start() <= c.start and c.end <= m.end() for c in held):
                kept = [c for c in kept if c not in held]
                kept.append(Candidate(m.start(), m.end(), LABEL, "pattern:email", 0.95))
        at = text.find("@", at + 1)
    return kept
