"""Flair column files (``token [FEATURES] TAG`` a line, a blank line between sentences), read as their raw lines:
what self-training and the synthetic mix rewrite tag by tag, keeping every other column as it was."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from deid_ds.errors import InputError

Block = list[str]  # the lines of one sentence of a Flair column file
_LINE = re.compile(r"^(.*\S)(\s+)(\S+)$")


def column_blocks(path: Path) -> Iterator[Block]:
    """The sentences of a Flair column file as their raw lines (without the newline)."""
    block: Block = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            line = line.rstrip("\n")
            if line.strip():
                block.append(line)
            elif block:
                yield block
                block = []
    if block:
        yield block


def split_line(line: str, path: Path) -> tuple[str, str, str]:
    """``(everything before the tag, the separator, the tag)`` of one column line."""
    match = _LINE.match(line)
    if match is None:
        raise InputError(f"{path}: a line is not 'token ... TAG'")
    return match.group(1), match.group(2), match.group(3)
