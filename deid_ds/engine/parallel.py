"""Ordered parallel map over batches with bounded memory.

``ProcessPoolExecutor.map`` submits the whole input at once, which for hundreds of thousands of notes
means holding them all in memory. This keeps at most ``prefetch`` batches in flight and yields results
in input order, so outputs are identical whatever the number of workers.

Workers never outlive their parent. A parent killed (``kill -9``, the OOM killer) cannot shut its
pool down, and orphaned workers would go on labelling for nobody, holding memory and the notes: each
worker asks Linux to send it SIGTERM when its parent dies (``PR_SET_PDEATHSIG``) and, on every
system, watches its parent id in a thread and exits when it changes (:func:`_exit_with_parent`). A
parent that stops on an exception (Ctrl-C, SIGTERM through :func:`sigterm_as_exit`, a failed batch)
terminates its workers at once instead of waiting for the batches in flight. A worker that dies (the
OOM killer's SIGKILL) stops the run with one line, :class:`WorkerDied`, instead of a traceback: the
commands publish their output only at the end, so nothing half-done is published.

Workers are started with ``spawn``, which runs the parent's main script again in each worker. A user
script that calls a function with ``workers=2`` at its top level, without ``if __name__ == "__main__":``,
would start pools from inside its own workers; Python stops that with an error in the workers and the
parent only sees a ``BrokenProcessPool``. :func:`ordered_map` recognises such a script before it starts
any worker and says what to do (:class:`MainGuardError`).
"""

from __future__ import annotations

import ast
import gc
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from deid_ds.errors import DeidError

T = TypeVar("T")
R = TypeVar("R")

#: How often a worker's watcher thread checks that its parent is alive (seconds).
PARENT_POLL_SECONDS = 0.5
#: Exit status of a command stopped by SIGTERM (128 + the signal number, as a shell reports it).
SIGTERM_EXIT_STATUS = 128 + signal.SIGTERM
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


class WorkerDied(DeidError):
    """A worker process ended without a result: killed by the system (out of memory) or crashed."""


#: What the command says when a worker died (no note content: the pool does not know which note it was).
WORKER_DIED = (
    "a worker process died before finishing its batch (killed by the system, most often for lack of memory): "
    "nothing was published; run again with fewer --workers or a smaller --batch-size"
)


class MainGuardError(DeidError):
    """Worker processes could not start because the main script has no ``if __name__ == "__main__":``."""


def main_guard_message(script: str) -> str:
    """The one-line explanation given when ``script`` starts worker processes without the guard."""
    return (
        f"{script} starts worker processes (workers > 1) but has no 'if __name__ == \"__main__\":' block: "
        "each worker runs the script again; put the script's calls under that line, or pass workers=1"
    )


def unguarded_main_script() -> str | None:
    """The main script's file name when ``spawn`` workers would run it again and it has no guard.

    ``spawn`` runs the parent's main module again in each worker, except an interactive session, a
    notebook and ``python -m package`` (its ``__main__``), as :mod:`multiprocessing.spawn` decides. The
    script is read (parsed, never run): one comparing ``__name__`` with ``"__main__"`` anywhere has the
    guard. ``None`` when the workers can start.
    """
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name:
        if spec.name == "__main__" or spec.name.endswith(".__main__"):
            return None
        path = spec.origin
    else:
        path = getattr(main, "__file__", None)
    if not path or not str(path).endswith(".py"):
        return None
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            names = {part.id for part in parts if isinstance(part, ast.Name)}
            constants = {part.value for part in parts if isinstance(part, ast.Constant)}
            if "__name__" in names and "__main__" in constants:
                return None
    return os.path.basename(path)


def _set_parent_death_signal() -> bool:
    """Ask Linux to send this process SIGTERM when its parent dies; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    """Exit this process as soon as its parent is no longer ``parent`` (it died; the orphan was re-parented)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)


def _start_worker(parent: int, death_signal: bool, initializer: Callable | None, initargs: tuple) -> None:
    """Worker initializer: :func:`_exit_with_parent`, then the caller's ``initializer(*initargs)``."""
    _exit_with_parent(parent, death_signal)
    if initializer is not None:
        initializer(*initargs)


def _exit_with_parent(parent: int, death_signal: bool) -> None:
    """Worker initializer: make this worker exit when ``parent`` (the process that started it) dies.

    ``PR_SET_PDEATHSIG`` fires when the *thread* that started the worker ends, so it is asked for only
    when that thread is the main thread (``death_signal``); the watcher thread covers every other case
    and systems without ``prctl``, within :data:`PARENT_POLL_SECONDS`.
    """
    if death_signal:
        _set_parent_death_signal()
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="deid-ds-parent-watch", daemon=True).start()


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now: cancel what has not started and terminate the workers running the rest.

    ``shutdown(wait=True)`` would let every batch in flight run to its end (minutes for large batches)
    after an interruption that wants the command to stop.
    """
    terminate = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        terminate()
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())  # taken first: shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)


def ordered_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    workers: int = 1,
    prefetch: int | None = None,
    *,
    initializer: Callable | None = None,
    initargs: tuple = (),
) -> Iterator[R]:
    """``map(fn, items)`` on ``workers`` processes (in this process when ``workers <= 1``).

    ``fn`` must be a picklable top-level function. Worker processes are started with ``spawn`` so that
    no lock or thread state of the parent (torch, pyarrow) is inherited. ``initializer(*initargs)``
    runs once in each worker when it starts (what every item needs, sent once per worker instead of
    once per item); not in this process.
    """
    if workers <= 1:
        for item in items:
            yield fn(item)
        return
    script = unguarded_main_script()
    if script is not None:  # checked before any worker starts: each would run the script again, and fail
        raise MainGuardError(main_guard_message(script))
    prefetch = prefetch or 2 * workers
    context = multiprocessing.get_context("spawn")
    # Workers are started by the thread that submits (this generator's consumer).
    death_signal = threading.current_thread() is threading.main_thread()
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_start_worker,
        initargs=(os.getpid(), death_signal, initializer, initargs),
    )
    pending: deque[Future[R]] = deque()
    try:
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= prefetch:
                yield _result(pending.popleft())
        while pending:
            yield _result(pending.popleft())
    except BrokenProcessPool:  # (submit raises it too, once the pool knows)
        raise WorkerDied(WORKER_DIED) from None
    finally:
        if pending:  # an error, an interruption, or a consumer that stopped early: work still in flight
            _terminate_workers(pool)
        else:  # every result delivered (a consumer that knows the count may close before the end)
            pool.shutdown(wait=True)


def _result(future: Future[R]) -> R:
    """The batch's result; a worker that died (SIGKILL from the OOM killer) is one line, not a traceback."""
    try:
        return future.result()
    except BrokenProcessPool:
        raise WorkerDied(WORKER_DIED) from None


@contextmanager
def sigterm_as_exit() -> Iterator[None]:
    """Turn SIGTERM into ``SystemExit(143)`` while the block runs, so that a command stopped by
    ``kill``, a scheduler or a container runtime unwinds like Ctrl-C: ``finally`` blocks run, worker
    pools are terminated, temporary directories are removed, the previous output stays as it was.

    A second SIGTERM during the unwinding kills at once (the default action is put back first). Only
    the main thread can handle signals: elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise SystemExit(SIGTERM_EXIT_STATUS)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


@contextmanager
def relaxed_gc() -> Iterator[None]:
    """Run a batch with the cyclic garbage collector paused.

    Segmenting a note allocates thousands of small container objects (tokens, sentences) that live
    until the batch is written. Every collection of the youngest generation walks all of them, again
    and again as the batch grows: with the default threshold (700) that doubles the cost of
    segmentation, and even with a threshold of 50,000 the collector still took a fifth of the time of
    a batch that keeps its results. Nothing here creates reference cycles: what a batch allocates is
    freed by reference counting when the batch is done, so pausing the collector for a batch (bounded
    in size by its callers) loses nothing. Its previous state is restored afterwards, and it then runs
    its normal course over whatever survived.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
