"""Batch helpers: ordered parallel map and the paused garbage collector."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deid_ds.engine.parallel import ordered_map, relaxed_gc, sigterm_as_exit
from tests.conftest import REPO


def test_relaxed_gc_pauses_the_collector_and_restores_its_state():
    assert gc.isenabled()
    with relaxed_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with relaxed_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # was off before: stays off
    finally:
        gc.enable()


def test_relaxed_gc_restores_the_collector_after_an_error():
    try:
        with relaxed_gc():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()


def test_ordered_map_in_process_keeps_order():
    assert list(ordered_map(abs, [-3, 1, -2], workers=1)) == [3, 1, 2]


# ------------------------------------------------------------------------ workers never outlive the parent

SLOW_SCRIPT = """
import os, sys, time
from pathlib import Path

from deid_ds.engine.parallel import ordered_map


def slow(item):
    directory, index = item
    Path(directory, f"worker-{os.getpid()}").touch()
    time.sleep(120)
    return index


if __name__ == "__main__":
    for _ in ordered_map(slow, [(sys.argv[1], i) for i in range(8)], workers=2):
        pass
"""


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie, dead but not yet reaped, is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads processes from /proc")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm-default"])
def test_workers_exit_when_their_parent_is_killed(tmp_path, how):
    """A parent that cannot clean up (kill -9, or SIGTERM with its default action) leaves no worker behind."""
    script = tmp_path / "slow_map.py"
    script.write_text(SLOW_SCRIPT)
    parent = subprocess.Popen([sys.executable, str(script), str(tmp_path)], env=_environment())
    try:
        assert _wait_for(lambda: len(list(tmp_path.glob("worker-*"))) == 2, 60), "the workers did not start"
        workers = [int(p.name.split("-")[1]) for p in tmp_path.glob("worker-*")]
        assert all(_alive(pid) for pid in workers)
        parent.send_signal(how)
        parent.wait(timeout=10)
        assert _wait_for(lambda: not any(_alive(pid) for pid in workers), 5), "orphaned workers still running"
    finally:
        parent.kill()
        for pid in [int(p.name.split("-")[1]) for p in tmp_path.glob("worker-*")]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_sigterm_as_exit_unwinds_and_restores_the_previous_handler():
    before = signal.getsignal(signal.SIGTERM)
    unwound = []
    with pytest.raises(SystemExit) as stopped:
        with sigterm_as_exit():
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)  # interrupted by the handler
            finally:
                unwound.append(True)
    assert stopped.value.code == 143 and unwound == [True]
    assert signal.getsignal(signal.SIGTERM) == before


def _fail_on_three(item: int) -> int:
    if item == 3:
        raise ValueError("batch 3 failed")
    time.sleep(0.2 if item < 3 else 30)  # the later batches would run for a long time
    return item


def test_a_failed_batch_stops_the_other_workers_instead_of_waiting_for_them():
    import multiprocessing

    before = {process.pid for process in multiprocessing.active_children()}
    started = time.monotonic()
    with pytest.raises(ValueError, match="batch 3 failed"):
        list(ordered_map(_fail_on_three, range(8), workers=2))
    assert time.monotonic() - started < 20
    # terminated at once; on a loaded machine a worker may take a moment to be reaped
    assert _wait_for(
        lambda: not [process for process in multiprocessing.active_children() if process.pid not in before], 10
    ), "workers left running"
