"""Per-note limits: a note far larger than usual, or one that takes too long, is failed with its reason
instead of stalling its batch.

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

R = TypeVar("R")

#: Default of ``--max-note-bytes``: some thousand times a usual note, far above any clinical note.
DEFAULT_MAX_NOTE_BYTES = 5_000_000
#: Default of ``--note-timeout`` (seconds): a note of the largest size allowed labels in under 20 s
#: on one core of a loaded 2-core VM (docs/benchmarks.md, "One large note").
DEFAULT_NOTE_TIMEOUT = 60.0


@dataclass(frozen=True)
class NoteLimits:
    """The per-note limits (picklable: sent to worker processes). None or 0 turns a limit off."""

    max_bytes: int | None = DEFAULT_MAX_NOTE_BYTES
    timeout: float | None = DEFAULT_NOTE_TIMEOUT  # seconds


class NoteTimeout(BaseException):
    """Raised inside the work on a note when its time is up.

    A :class:`BaseException`, so that the ``except Exception`` that turns a note's own errors into a
    failed status does not take it for one: it must reach :meth:`NoteTimer.run`, which says why.
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


class NoteTimer:
    """Runs each note's work of a batch within ``seconds`` (None or 0: no limit); use as a context.

    In the main thread a timer signal interrupts the work when its time is up, even inside a regex
    search (CPython's regex engine checks for signals): the SIGALRM handler is installed once for the
    batch (and the previous one put back after it), and each note only arms and disarms the timer.
    Where no timer can be set (another thread, as in some Spark executors, a platform without SIGALRM,
    or a timer someone else already set) the work runs to its end and is judged by its duration: the
    same notes fail, the batch just waits for them.

    The work must leave no shared state half-updated when interrupted: the weak-labelling pipeline
    gives it a note's parsing, segmentation and labelling, whose only shared state are memos that
    store complete values.
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds if seconds and seconds > 0 else None
        self._interrupts = False
        self._armed = False  # the handler raises only while a note's work runs
        self._previous = None

    def __enter__(self) -> NoteTimer:
        self._interrupts = self.seconds is not None and _can_interrupt()
        if self._interrupts:
            self._previous = signal.signal(signal.SIGALRM, self._expire)
        return self

    def __exit__(self, *exc_info) -> None:
        if self._interrupts:
            self._interrupts = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            # None: the handler was not set from Python; the default is what it was then
            signal.signal(signal.SIGALRM, signal.SIG_DFL if self._previous is None else self._previous)

    def _expire(self, signum, frame) -> None:
        if self._armed:
            raise NoteTimeout

    def run(self, work: Callable[[], R]) -> R | None:
        """``work()``, or None if it ran for more than the time limit."""
        if self.seconds is None:
            return work()
        if not self._interrupts:
            started = time.perf_counter()
            result = work()
            return None if time.perf_counter() - started > self.seconds else result
        try:
            try:
                self._armed = True  # inside the try: a signal as early as this is caught below
                signal.setitimer(signal.ITIMER_REAL, self.seconds)
                result = work()
            finally:
                self._armed = False  # from here on a late signal is ignored, not raised outside
        except NoteTimeout:
            result = None
        signal.setitimer(signal.ITIMER_REAL, 0)
        return result


def run_with_timeout(work: Callable[[], R], seconds: float | None) -> R | None:
    """``work()``, or None if it ran for more than ``seconds``: one note's :meth:`NoteTimer.run`."""
    with NoteTimer(seconds) as timer:
        return timer.run(work)
