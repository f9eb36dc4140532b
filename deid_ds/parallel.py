"""Ordered parallel map over batches with bounded memory.

``ProcessPoolExecutor.map`` submits the whole input at once, which for hundreds of thousands of notes
means holding them all in memory. This keeps at most ``prefetch`` batches in flight and yields results
in input order, so outputs are identical whatever the number of workers.
"""

from __future__ import annotations

import gc
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def ordered_map(fn: Callable[[T], R], items: Iterable[T], workers: int = 1, prefetch: int | None = None) -> Iterator[R]:
    """``map(fn, items)`` on ``workers`` processes (in this process when ``workers <= 1``).

    ``fn`` must be a picklable top-level function. Worker processes are started with ``spawn`` so that
    no lock or thread state of the parent (torch, pyarrow) is inherited.
    """
    if workers <= 1:
        for item in items:
            yield fn(item)
        return
    prefetch = prefetch or 2 * workers
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: deque[Future[R]] = deque()
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= prefetch:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


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
