"""The README stays short and points to the reference pages; every command is documented; links hold."""

from __future__ import annotations

import re

from tests.docs.examples import MEASUREMENTS, PAGES, REPO, blocks

README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = {page.name: page.read_text(encoding="utf-8") for page in PAGES if page.parent.name == "docs"}
FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def test_readme_is_short():
    assert len(README.splitlines()) <= 250


def test_readme_table_lists_every_command_and_docs_document_it():
    from deid_ds.cli import COMMANDS

    everything = "\n".join(DOCS.values())
    for name in COMMANDS:
        assert re.search(rf"^\| `deid-ds {re.escape(name)}` \|", README, re.MULTILINE), name
        assert re.search(rf"^#.*`deid-ds {re.escape(name)}`", everything, re.MULTILINE), f"no docs/ heading for {name}"


def test_readme_cites_the_reference_study_and_eds_pseudo():
    text = " ".join(README.split())
    assert "Azzouzi M., Coatrieux G., Bellafqira R. et al." in text
    assert "BMC Medical Informatics and Decision Making* 24, 54 (2024)" in text
    assert "10.1186/s12911-024-02422-5" in text
    assert "eds-pseudo" in text


def test_api_offset_example_is_true():
    from deid_ds import html_to_text

    parsed = html_to_text("<p>Mme <b>Jeanne</b> LE&nbsp;GALL, n&eacute;e le 12/08/1957</p>")
    assert parsed.text == "Mme Jeanne LE\xa0GALL, née le 12/08/1957"
    assert "print(parsed.html_span(4, 18))   # (10, 33)" in DOCS["api.md"]
    assert parsed.html_span(4, 18) == (10, 33)
    assert parsed.html[10:33] == "Jeanne</b> LE&nbsp;GALL"
    assert parsed.text_span(10, 33) == (4, 18)


def test_relative_links_point_to_files():
    for page in [*PAGES, REPO / "CHANGELOG.md"]:
        prose = re.sub(r"`[^`]*`", "", FENCED.sub("", page.read_text(encoding="utf-8")))  # links, not code
        for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", prose):
            assert (page.parent / target).exists(), f"{page.relative_to(REPO)}: broken link {target}"


def test_no_internal_vocabulary():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for pattern in (r"\bissue \d+", r"\bissues? by issue\b", r"`seeds`", r"\bthe study's seeds\b"):
            assert not re.search(pattern, text, re.IGNORECASE), f"{page.relative_to(REPO)}: {pattern}"


def _documented_commands() -> list[tuple[str, list[str], str]]:
    """``(where, command words, its options)`` of every ``deid-ds`` command line or synopsis in a block,
    continuation lines (indented, or after a backslash) included."""
    found = []
    for page in PAGES:
        for block in blocks(page):
            if page in MEASUREMENTS or block.language not in {"bash", "text", "console"}:
                continue
            current = None
            for line in block.code.splitlines():
                code = line.split(" #")[0]
                words = code.split()
                if words and words[0] == "deid-ds":
                    current = [block.where(), words[1:3], ""]
                    found.append(current)
                elif not (line.startswith(" ") and current is not None):
                    current = None
                if current is not None:
                    current[2] += " " + code
    return [tuple(entry) for entry in found]


def test_the_documented_options_exist():
    import click

    from deid_ds.cli import main

    ctx = click.Context(main)
    checked = 0
    for where, words, line in _documented_commands():
        command = main.get_command(ctx, words[0])
        assert command is not None, f"{where}: no command {words[0]}"
        if isinstance(command, click.Group):
            command = command.get_command(ctx, words[1])
        known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
        for option in set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", line)):
            assert option in known, f"{where}: deid-ds {words[0]} has no {option}"
            checked += 1
    assert checked > 100
