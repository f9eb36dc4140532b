"""docs/benchmarks.md gives commands that can be run again: every benchmark script is there, and every option its
commands pass exists in the script or the ``deid-ds`` command they call."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click

from deid_ds.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "benchmarks.md"
_SHELL_BLOCK = re.compile(r"^ *```sh\n(.*?)^ *```", re.MULTILINE | re.DOTALL)


def _command_lines() -> list[list[str]]:
    """The page's shell commands as words: continuation lines joined, comments dropped."""
    commands = []
    for block in _SHELL_BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(words)
    return commands


def _long_options(words: list[str]) -> set[str]:
    return {word.split("=")[0] for word in words if word.startswith("--")}


def test_every_benchmark_script_has_its_command_on_the_page():
    scripts = {word for words in _command_lines() for word in words if word.startswith("benchmarks/")}
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        if path.name != "machine.py":
            assert f"benchmarks/{path.name}" in scripts, path.name


def test_the_options_of_the_benchmark_commands_exist_in_their_scripts():
    checked = 0
    for words in _command_lines():
        script = next((word for word in words if word.startswith("benchmarks/")), None)
        if script is None:
            continue
        source = (ROOT / script).read_text(encoding="utf-8")
        for option in _long_options(words):
            assert f'"{option}"' in source, f"{script} has no {option}"
            checked += 1
    assert checked > 20


def test_the_options_of_the_deid_ds_commands_exist():
    ctx = click.Context(main)
    checked = 0
    for words in _command_lines():
        if not words[0].endswith("deid-ds"):
            continue
        command = main.get_command(ctx, words[1])
        assert command is not None, words[1]
        if isinstance(command, click.Group):
            command = command.get_command(ctx, words[2])
        known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
        for option in _long_options(words):
            assert option in known, f"deid-ds {words[1]} has no {option}"
            checked += 1
    assert checked > 20
