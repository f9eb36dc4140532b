"""Text rendering of the sentences: each one's Prodigy JSONL line and Flair column block.

Rendering is vectorised over a batch's columns with Arrow compute kernels: no Python object per
sentence or per token. Only the rare strings that need escaping (JSON) or rewriting (Flair) go through
Python, one by one, with the very functions that define their form (``orjson.dumps``,
:func:`flair_token`), so the text is byte for byte what rendering row by row gives.
"""

from __future__ import annotations

import json
import re

import orjson
import pyarrow as pa
import pyarrow.compute as pc

#: Characters ``orjson`` escapes in a string (checked at test time against ``orjson.dumps`` itself);
#: every other character is written as is, so a string without them is rendered ``"…"`` directly.
_JSON_ESCAPED = r'[\x00-\x1f"\\]'


def render_lines(sentences, jsonl: bool = True, features=None):
    """Each sentence's JSONL line (without its split) and Flair block, rendered by the worker.

    The JSONL line is what ``orjson.dumps`` gives for the row as a dictionary (compact, keys in schema
    order, non-ASCII as is); the Flair block is one ``token TAG`` line per token and a blank line.
    Text rendering is most of the cost of writing the outputs; done per batch in the workers, it leaves
    the single-process assembly only the split to append (:func:`jsonl_line`) and files to route to.
    Without ``jsonl`` (``sentences.jsonl`` not asked for) the JSONL column is null: rendering it would
    cost the workers time and the work directory's batch parts nearly half their size (measured on
    2,000 generated notes: 13.8 MB of parts instead of 25.4 MB), for nothing.
    ``features`` (a string array, one knowledge-feature column per token of the sentences, in order:
    :mod:`deid_ds.label.features`) makes the Flair lines ``token FEATURES TAG``.
    """
    rows = pa.StructArray.from_arrays(
        [_one_chunk(column) for column in sentences.columns], fields=list(sentences.schema)
    )
    lines = _json(rows) if jsonl else pa.nulls(len(rows), pa.string())
    return pa.table({"jsonl": lines, "flair": _flair_blocks(rows.field("tokens"), rows.field("tags"), features)})


def jsonl_line(body: str, split: str) -> str:
    """A sentence's JSON object (as rendered by :func:`render_lines`) with its split as last key."""
    return f'{body[:-1]},"split":{json.dumps(split)}}}\n'


_WHITESPACE = re.compile(r"\s")


def flair_token(text: str) -> str:
    """A token as one Flair column: whitespace inside it becomes ``_``, and it is never empty."""
    if not text:
        return "_"
    return _WHITESPACE.sub("_", text) if _WHITESPACE.search(text) else text


#: The characters Python's ``\s`` matches (``str.isspace``, Unicode ones too; checked at test time against every
#: code point), written out: finding them among the 1.1 million code points cost 45 ms of every process's start-up.
_PYTHON_SPACES = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)
#: :data:`_PYTHON_SPACES` as an RE2 character class: Arrow's ``\s`` is ASCII only, and a token it missed would
#: keep a space in its Flair column.
PYTHON_WHITESPACE_CLASS = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in _PYTHON_SPACES) + "]"


def _one_chunk(column):
    """A table column as one array (an empty one for a table without rows)."""
    return column.combine_chunks() if column.num_chunks else pa.array([], column.type)


def _join(*parts):
    """Element-wise concatenation of string arrays and literals (null where an input is null); adjacent
    literals are merged first, since the kernel's cost grows with its number of arguments."""
    merged: list = []
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    return pc.binary_join_element_wise(*merged, "")


def _per_row(list_array, values, separator: str):
    """``values`` (one string per element of ``list_array``, in order) joined per row with ``separator``."""
    offsets = list_array.offsets
    offsets = pc.subtract(offsets, offsets[0])
    return pc.binary_join(pa.ListArray.from_arrays(offsets, values), separator)


def _fix(strings, pattern: str, rewrite):
    """``strings`` with those matching ``pattern`` (an RE2 search) replaced by ``rewrite(string)``."""
    mask = pc.fill_null(pc.match_substring_regex(strings, pattern), False)
    if not pc.any(mask).as_py():
        return strings
    fixed = [rewrite(value) for value in pc.filter(strings, mask).to_pylist()]
    return pc.replace_with_mask(strings, mask, pa.array(fixed, type=pa.string()))


def _json_string_contents(strings):
    """Each string as ``orjson.dumps`` writes it between its quotes (escapes only where needed)."""
    return _fix(strings, _JSON_ESCAPED, lambda value: orjson.dumps(value).decode()[1:-1])


def _json(array):
    """Each value of ``array`` as compact JSON text (:func:`_json_parts` joined)."""
    return _join(*_json_parts(array))


def _json_parts(array) -> list:
    """The JSON text of each value of ``array`` as parts to concatenate (literals and string arrays), as
    ``orjson.dumps`` writes the value ``to_pylist`` gives: objects with keys in field order, ``null``
    for a null (the types of the sentences' schema). A nested struct's parts are inlined in its
    parent's, so that a whole object is one concatenation."""
    kind = array.type
    if pa.types.is_struct(kind):
        parts: list = []
        for index, field in enumerate(kind):
            parts += ["," if index else "{", json.dumps(field.name) + ":", *_json_parts(array.field(index))]
        parts.append("}")
    elif pa.types.is_list(kind):
        parts = ["[", _per_row(array, _json(array.flatten()), ","), "]"]
    elif pa.types.is_string(kind):
        parts = ['"', _json_string_contents(array), '"']
    elif pa.types.is_integer(kind) or pa.types.is_boolean(kind):
        parts = [pc.cast(array, pa.string())]  # integers in decimal, booleans as true / false, like JSON
    else:  # pragma: no cover - the schemas hold none
        raise TypeError(f"no JSON rendering for Arrow type {kind}")
    if array.null_count:
        return [pc.if_else(pc.is_valid(array), _join(*parts), "null")]
    return parts


def _flair_blocks(tokens, tags, features=None):
    """Each sentence's Flair block: ``token TAG`` per line (:func:`flair_token`), or ``token FEATURES TAG``
    with ``features``, then a blank line."""
    texts = tokens.flatten().field("text")
    columns = _fix(texts, PYTHON_WHITESPACE_CLASS + "|^$", flair_token)
    middle = [" ", features] if features is not None else []
    lines = _join(columns, *middle, " ", tags.flatten(), "\n")
    return _join(_per_row(tags, lines, ""), "\n")
