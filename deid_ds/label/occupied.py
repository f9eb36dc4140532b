"""Which characters of a note the spans kept so far cover: the overlap test of every "keep the best
span that overlaps none kept before it" loop, in time linear in the note.

Those loops compared each span with every span kept before it, a quadratic cost that a note of a few
kilobytes never shows and a note of megabytes dense with dates or phones pays in minutes.
A byte per character of the note answers the same question by looking at the span's own characters
only (``bytearray.find``, a ``memchr``).
"""

from __future__ import annotations


class Occupied:
    """The characters ``[0, size)`` of a text, each free or taken; spans are ``(start, end)``, end exclusive.

    :meth:`overlaps` is exactly "shares a character with a span taken before" for non-empty spans —
    ``start < e and s < end`` for some taken ``(s, e)``, the test it replaces; an empty span overlaps nothing.
    """

    __slots__ = ("_marks",)

    def __init__(self, size: int) -> None:
        self._marks = bytearray(size)

    def overlaps(self, start: int, end: int) -> bool:
        """Whether a character of ``[start, end)`` is taken."""
        return self._marks.find(1, start, end) >= 0

    def take(self, start: int, end: int) -> None:
        """Mark ``[start, end)`` taken (it may overlap spans taken before)."""
        if end > start:
            self._marks[start:end] = b"\x01" * (end - start)
