"""The map from extracted text back to the HTML source it came from.

Each character ``text[i]`` has a source range ``[starts[i], ends[i])`` in the HTML string:

* a plain character maps to its own single position (``ends[i] == starts[i] + 1``);
* a character reference (``&eacute;``, ``&#233;``, ``&nbsp;``) maps to the whole reference;
* a run of collapsed whitespace maps to the whole run;
* a character the extractor *inserted* for layout (the line break of a ``<p>``, the separator between
  table cells) maps to an empty range ``starts[i] == ends[i]`` at the tag that caused it.

Both arrays are non-decreasing, which is what makes the reverse lookup (HTML range to text range) a
binary search. Entity offsets into the HTML are then derived, never stored twice: the HTML span of a
text span is the start of its first source-backed character and the end of its last one, so a span
never starts or ends on a tag or on an inserted character.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass


@dataclass(frozen=True)
class OffsetMap:
    """Per-character source ranges of an extracted text (see the module docstring)."""

    starts: array
    ends: array

    def __len__(self) -> int:
        return len(self.starts)

    def char_range(self, i: int) -> tuple[int, int]:
        """The HTML range of text character ``i``."""
        return self.starts[i], self.ends[i]

    def is_inserted(self, i: int) -> bool:
        """True when text character ``i`` was inserted for layout and has no source characters."""
        return self.starts[i] == self.ends[i]

    def html_span(self, start: int, end: int) -> tuple[int, int]:
        """HTML ``[start, end)`` covering text ``[start, end)``, trimmed of inserted characters.

        An empty or all-inserted text range maps to an empty HTML range at its position.
        """
        if not 0 <= start <= end <= len(self.starts):
            raise IndexError(f"text span [{start}, {end}) outside text of length {len(self.starts)}")
        starts, ends = self.starts, self.ends
        first, last = start, end - 1
        while first <= last and starts[first] == ends[first]:
            first += 1
        while last >= first and starts[last] == ends[last]:
            last -= 1
        if first > last:
            position = starts[start] if start < len(starts) else (ends[-1] if len(ends) else 0)
            return position, position
        return starts[first], ends[last]

    def text_span(self, html_start: int, html_end: int) -> tuple[int, int]:
        """Text ``[start, end)`` of the characters whose source lies inside HTML ``[html_start, html_end)``.

        A character counts when its whole source range is inside; inserted characters strictly inside
        count too. Used to project gold spans annotated on the HTML onto the text and its tokens.
        """
        starts, ends = self.starts, self.ends
        first = bisect_left(starts, html_start)
        last = bisect_right(ends, html_end)
        while first < last and starts[first] == ends[first]:
            first += 1
        while last > first and starts[last - 1] == ends[last - 1]:
            last -= 1
        if last < first:
            return first, first
        return first, last
