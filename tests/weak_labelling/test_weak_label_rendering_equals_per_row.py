"""The vectorised rendering of sentences (JSONL bodies, Flair blocks, assembled lines) is byte for byte
what rendering each row in Python gives: ``orjson.dumps`` of the row, :func:`flair_token` per token."""

from __future__ import annotations

import re

import orjson
import pyarrow as pa

from deid_ds.weak_labelling.assemble import _jsonl_lines, _utf8
from deid_ds.weak_labelling.render import _JSON_ESCAPED, PYTHON_WHITESPACE_CLASS, flair_token, jsonl_line, render_lines
from deid_ds.weak_labelling.schemas import sentences_schema

WEIRD = [
    'a"b',
    "c\\d",
    "e\nf",
    "\x00",
    "\x1f",
    "\x7f",
    "é",
    "\u2028",
    " ",
    "\xa0x",
    "\u3000",
    "",
    "a b",
    "\x1c",
    "日本",
    "😀",
]


def _rows() -> list[dict]:
    rows = []
    for i, word in enumerate(WEIRD):
        rows.append(
            {
                "text": word + " z",
                "tokens": [
                    {"text": word, "start": 0, "end": len(word), "html_start": 5, "html_end": 9, "id": 0, "ws": True},
                    {"text": "z", "start": 1, "end": 2, "html_start": 10, "html_end": 11, "id": 1, "ws": False},
                ],
                "tokens_parser": [{"start": 5, "end": 9}, {"start": 10, "end": 11}],
                "tags": ["B-PER", "I-PER"] if i % 2 else ["O", "O"],
                "spans": []
                if i % 3
                else [{"start": 0, "end": 2, "token_start": 0, "token_end": 1, "label": "PER", "source": word}],
                "meta": {
                    "id_document": word,
                    "id_patient": None if i % 2 else "p" + word,
                    "doc_type": None if i % 3 else word,
                    "sentence_index": i,
                },
            }
        )
    return rows


def test_render_lines_is_orjson_and_flair_token_per_row():
    rows = _rows()
    table = pa.Table.from_pylist(rows, schema=sentences_schema(with_split=False))
    for sentences in (table, table.slice(3, 7), table.slice(0, 0)):
        lines = render_lines(sentences).to_pylist()
        expected = sentences.to_pylist()
        assert [line["jsonl"] for line in lines] == [orjson.dumps(row).decode() for row in expected]
        blocks = [
            "".join(f"{flair_token(t['text'])} {tag}\n" for t, tag in zip(row["tokens"], row["tags"])) + "\n"
            for row in expected
        ]
        assert [line["flair"] for line in lines] == blocks


def test_assembled_lines_and_their_bytes():
    bodies = render_lines(pa.Table.from_pylist(_rows(), schema=sentences_schema(with_split=False))).column("jsonl")
    splits = ["train", "dev", "test"] * 6
    splits = splits[: len(bodies)]
    lines = _jsonl_lines(bodies, pa.array([f'"{s}"' for s in splits]))
    expected = "".join(jsonl_line(body, split) for body, split in zip(bodies.to_pylist(), splits))
    assert bytes(_utf8(lines)) == expected.encode("utf-8")
    assert bytes(_utf8(lines.slice(2, 3))) == "".join(
        jsonl_line(b, s) for b, s in zip(bodies.to_pylist()[2:5], splits[2:5])
    ).encode("utf-8")
    assert bytes(_utf8(pa.array([], pa.string()))) == b""


def test_escaped_and_whitespace_character_sets_match_python():
    escaped = re.compile(_JSON_ESCAPED)
    whitespace = PYTHON_WHITESPACE_CLASS
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        assert (orjson.dumps(char).decode() != f'"{char}"') == bool(escaped.search(char)), hex(code)
        assert char.isspace() == (f"\\x{{{code:x}}}" in whitespace), hex(code)
