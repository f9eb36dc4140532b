"""Ordered parallel map over batches with bounded memory.

``ProcessPoolExecutor.map`` submits the whole input at once, which for hundreds of thousands of notes
means holding them all in memory. This keeps at most ``prefetch`` batches in flight and yields results
in input order, so outputs are identical whatever the number of workers.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Iterator
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
