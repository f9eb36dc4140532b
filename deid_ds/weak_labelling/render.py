"""Text rendering of the sentences: each one's Prodigy JSONL line and Flair column block."""

from __future__ import annotations

import json
import re


def render_lines(sentences):
    """Each sentence's JSONL line (without its split) and Flair block, rendered by the worker.

    Text rendering is most of the cost of writing the outputs; done per batch in the workers, it leaves
    the single-process assembly only the split to append (:func:`jsonl_line`) and files to route to.
    """
    import orjson
    import pyarrow as pa

    bodies, blocks = [], []
    dumps = orjson.dumps  # several times faster than json.dumps: this runs once per sentence
    for row in sentences.to_pylist():
        bodies.append(dumps(row).decode())
        blocks.append("".join([f"{flair_token(token['text'])} {tag}\n" for token, tag in zip(row["tokens"], row["tags"])]) + "\n")
    return pa.table({"jsonl": pa.array(bodies, type=pa.string()), "flair": pa.array(blocks, type=pa.string())})


def jsonl_line(body: str, split: str) -> str:
    """A sentence's JSON object (as rendered by :func:`render_lines`) with its split as last key."""
    return f'{body[:-1]},"split":{json.dumps(split)}}}\n'


_WHITESPACE = re.compile(r"\s")


def flair_token(text: str) -> str:
    """A token as one Flair column: whitespace inside it becomes ``_``, and it is never empty."""
    if not text:
        return "_"
    return _WHITESPACE.sub("_", text) if _WHITESPACE.search(text) else text
