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
def relaxed_gc(threshold: int = 50_000) -> Iterator[None]:
    """Run a batch with the cyclic garbage collector's first threshold raised.

    Segmenting a note allocates thousands of small container objects (tokens, sentences) that live
    until the batch is written; with the default threshold (700) the collector rescans them over and
    over, which doubles the cost of segmentation. Nothing here creates reference cycles, so collecting
    less often loses nothing; the previous thresholds are restored afterwards.
    """
    previous = gc.get_threshold()
    gc.set_threshold(max(threshold, previous[0]), *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)
