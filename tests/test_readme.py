"""The README's Python example says what the code does."""

from __future__ import annotations

import re
from pathlib import Path

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_readme_offset_example_is_true():
    from deid_ds import html_to_text

    parsed = html_to_text("<p>Mme <b>Jeanne</b> LE&nbsp;GALL, n&eacute;e le 12/08/1957</p>")
    assert parsed.text == "Mme Jeanne LE\xa0GALL, née le 12/08/1957"
    assert "parsed.html_span(4, 18)          # (10, 33)" in README
    assert parsed.html_span(4, 18) == (10, 33)
    assert parsed.html[10:33] == "Jeanne</b> LE&nbsp;GALL"
    assert parsed.text_span(10, 33) == (4, 18)


def test_readme_lists_every_command():
    from deid_ds.cli import COMMANDS

    for name in COMMANDS:
        assert re.search(rf"`deid-ds {re.escape(name)}`", README), name
