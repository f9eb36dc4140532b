"""The code is ruff-formatted (``[tool.ruff]`` in pyproject.toml): run ``ruff format`` before committing."""

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
