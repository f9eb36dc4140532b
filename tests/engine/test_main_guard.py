"""A user script that starts worker processes without ``if __name__ == "__main__":`` gets one clear
error, not a ``BrokenProcessPool``; with the guard, or with one worker, it runs. Real scripts, run as a
user runs them (``python script.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import REPO

GUARD_HINT = "has no 'if __name__ == \"__main__\":' block"


def run_script(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    script = tmp_path / "my_script.py"
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_script_without_the_guard_is_told_to_add_it(tmp_path):
    done = run_script(
        tmp_path,
        """
        from deid_ds.engine.parallel import ordered_map

        print(list(ordered_map(abs, [-1, 2, -3], workers=2)))
        """,
    )
    assert done.returncode == 1
    last_line = done.stderr.strip().splitlines()[-1]
    assert last_line.startswith("deid_ds.engine.parallel.MainGuardError: my_script.py starts worker processes")
    assert GUARD_HINT in last_line and "workers=1" in last_line
    assert "BrokenProcessPool" not in done.stderr and "bootstrapping phase" not in done.stderr


def test_the_error_is_a_deid_error_a_script_can_catch(tmp_path):
    done = run_script(
        tmp_path,
        """
        from deid_ds.engine.parallel import ordered_map
        from deid_ds.errors import DeidError

        try:
            list(ordered_map(abs, [-1], workers=2))
        except DeidError as error:
            print("caught:", error)
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("caught: my_script.py starts worker processes")


def test_a_script_with_the_guard_or_one_worker_runs(tmp_path):
    guarded = run_script(
        tmp_path,
        """
        from deid_ds.engine.parallel import ordered_map

        if __name__ == "__main__":
            print(list(ordered_map(abs, [-1, 2, -3], workers=2)))
        """,
    )
    assert guarded.returncode == 0, guarded.stderr
    assert guarded.stdout.strip() == "[1, 2, 3]"
    one_worker = run_script(
        tmp_path,
        """
        from deid_ds.engine.parallel import ordered_map

        print(list(ordered_map(abs, [-1, 2, -3], workers=1)))
        """,
    )
    assert one_worker.returncode == 0, one_worker.stderr
    assert one_worker.stdout.strip() == "[1, 2, 3]"
