"""Per-note limits: a note far larger than usual, or one that takes too long, is failed with its reason
instead of stalling its batch (issue 17).

A clinical note is a few kilobytes; an export error (a whole patient file, a PDF in base64, a log
pasted into a note) can make one of megabytes, and a batch waits for its slowest note. Labelling time
is linear in a note's size, but a note of hundreds of megabytes would still hold a worker for minutes
and its memory for the whole batch. So a note over :attr:`NoteLimits.max_bytes` is failed before it is
parsed, and a note still being processed after :attr:`NoteLimits.timeout` seconds is interrupted and
failed: the batch goes on with the next note, and the documents table says why.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

R = TypeVar("R")

#: Default of ``--max-note-bytes``: some thousand times a usual note, far above any clinical note.
DEFAULT_MAX_NOTE_BYTES = 5_000_000
#: Default of ``--note-timeout`` (seconds): a note of the largest size allowed labels in about 10 s.
DEFAULT_NOTE_TIMEOUT = 60.0


@dataclass(frozen=True)
class NoteLimits:
    """The per-note limits (picklable: sent to worker processes). None or 0 turns a limit off."""

    max_bytes: int | None = DEFAULT_MAX_NOTE_BYTES
    timeout: float | None = DEFAULT_NOTE_TIMEOUT  # seconds


class NoteTimeout(BaseException):
    """Raised inside the work on a note when its time is up.

    A :class:`BaseException`, so that the ``except Exception`` that turns a note's own errors into a
    failed status does not take it for one: it must reach :func:`run_with_timeout`, which says why.
    """


def html_size(html: str | bytes) -> int:
    """The size of a note's HTML in bytes (UTF-8 for text: what it weighs in the notes table)."""
    if isinstance(html, bytes):
        return len(html)
    return len(html.encode("utf-8", "surrogatepass"))


def size_error(html: object, max_bytes: int | None) -> str | None:
    """The reason a note's HTML is refused for its size, or None when it is within ``max_bytes``.

    The reason gives the two sizes, never content. Anything that is not text or bytes is left to
    the parser, which says what it is. A character is at most four bytes in UTF-8: a text of at most
    ``max_bytes / 4`` characters, every usual note, is not encoded to be measured.
    """
    if not max_bytes or not isinstance(html, (str, bytes)):
        return None
    if isinstance(html, str) and 4 * len(html) <= max_bytes:
        return None
    size = html_size(html)
    if size <= max_bytes:
        return None
    return f"note larger than the limit ({size} bytes > {max_bytes})"


def timeout_error(seconds: float) -> str:
    """The reason a note that took too long is failed."""
    return f"note took longer than the time limit ({seconds:g} s)"


def _can_interrupt() -> bool:
    """Whether a timer signal can interrupt this thread now: the main thread of a process that has
    SIGALRM, and whose real-time timer nobody else (pytest-timeout, the embedding program) has set."""
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    )


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """Raise :class:`NoteTimeout` in this thread if the block is still running after ``seconds``.

    The previous SIGALRM handler is put back afterwards. The handler raises only while the block
    runs (``armed``): a signal that arrives as the block ends is ignored, not raised elsewhere.
    """
    armed = [True]

    def expire(signum, frame) -> None:  # noqa: ARG001 - the signal module's signature
        if armed[0]:
            raise NoteTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        yield
    finally:
        armed[0] = False
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            signal.signal(signal.SIGALRM, previous)


def run_with_timeout(work: Callable[[], R], seconds: float | None) -> R | None:
    """``work()``, or None if it ran for more than ``seconds`` (None or 0: no limit).

    In the main thread, a timer interrupts the work when its time is up, even inside a regex search
    (CPython's regex engine checks for signals). Where no timer can be set (another thread, as in
    some Spark executors, or a platform without SIGALRM) the work runs to its end and is then judged
    by its duration: the same notes fail, the batch just waits for them.
    ``work`` must leave no shared state half-updated when interrupted: the weak-labelling pipeline
    gives it a note's parsing, segmentation and labelling, whose only shared state are memos that
    store complete values.
    """
    if not seconds or seconds <= 0:
        return work()
    if not _can_interrupt():
        started = time.perf_counter()
        result = work()
        return None if time.perf_counter() - started > seconds else result
    try:
        with _alarm(seconds):
            return work()
    except NoteTimeout:
        return None
