"""JSON Lines input: one JSON object per line, read lazily, errors naming the file and line only.

Campaign tasks, Prodigy answers, doccano exports and the weak labeller's sentences are all JSONL; one
reader gives them the same behaviour (blank lines skipped, malformed JSON or a non-object refused with
``FILE:LINE``, never with the line's content, which may quote a note).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from deid_ds.errors import InputError


def iter_json_objects(path: str | Path) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` of a JSONL file; errors name the file and line."""
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    with handle:
        number = 0
        while True:
            try:
                line = handle.readline()
            except UnicodeDecodeError:
                raise InputError(f"{path}:{number + 1}: not UTF-8 text") from None
            if not line:
                return
            number += 1
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"{path}:{number}: malformed JSON ({error.msg}, column {error.colno})") from None
            if not isinstance(record, dict):
                raise InputError(f"{path}:{number}: expected a JSON object, found {type(record).__name__}")
            yield number, record
