"""The code is ruff-formatted and passes ruff's lint (``[tool.ruff]`` in pyproject.toml): run ``ruff format``
and ``ruff check`` before committing."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

FORMATTED = ("deid_ds", "recipes", "tests", "benchmarks", "tools")


def test_the_code_is_ruff_formatted():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", *FORMATTED],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, "run `ruff format` on:\n" + result.stdout + result.stderr


def test_the_code_passes_the_linter():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "concise", *FORMATTED],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, "fix what `ruff check` reports:\n" + result.stdout + result.stderr
