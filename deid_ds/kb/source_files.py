"""Opening knowledge-base source files and checking their first line before the real read.

A wrong file is better refused at once with a message that names it than discovered as a half-empty
gazetteer: an HTML error page saved instead of a zip, a comma-separated export, an empty or truncated
file. These checks read only the beginning of the file.
"""

from __future__ import annotations

import gzip
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

from deid_ds.errors import InputError


class SourceError(InputError):
    """A knowledge-base source file cannot be used (the message names the file and, when known, the line)."""


def sniff(path: Path) -> str:
    """``"gzip"``, ``"zip"``, ``"html"``, ``"empty"`` or ``"text"``, from the first bytes."""
    from deid_ds.kb.download import sniff_bytes

    with path.open("rb") as handle:
        head = handle.read(512)
    return sniff_bytes(head) if head else "empty"


def first_line(path: Path, *, member: str | None = None) -> str:
    """The first line (header) of a plain, gzip or zip (``member``) text file, decoded as UTF-8."""
    kind = sniff(path)
    if kind == "empty":
        raise SourceError(f"{path}: empty file")
    if kind == "html":
        raise SourceError(f"{path}: this is an HTML page (an error page saved instead of the data file?)")
    try:
        if kind == "gzip":
            with gzip.open(path, "rb") as handle:
                raw = handle.readline()
        elif kind == "zip":
            if member is None:
                raise SourceError(f"{path}: a zip archive where a text file was expected")
            with zipfile.ZipFile(path) as archive, archive.open(member) as handle:
                raw = handle.readline()
        else:
            with path.open("rb") as handle:
                raw = handle.readline()
    except (EOFError, gzip.BadGzipFile, zipfile.BadZipFile, OSError) as error:
        raise SourceError(f"{path}: unreadable or truncated {kind} file ({error})") from None
    if not raw.strip():
        raise SourceError(f"{path}: empty file (no header line)")
    try:
        return raw.decode("utf-8-sig").rstrip("\r\n")
    except UnicodeDecodeError:
        raise SourceError(f"{path}, line 1: not UTF-8 text") from None


def check_separator(path: Path, header: str, separator: str, expected_columns: list[str]) -> list[str]:
    """Split ``header`` on ``separator`` and check the expected columns are there (by name)."""
    names = header.split(separator)
    if len(names) < 2:
        for other, label in ((";", "semicolon"), (",", "comma"), ("\t", "tab"), ("|", "pipe")):
            if other != separator and other in header:
                raise SourceError(f"{path}, line 1: separated by {label}s, expected {separator!r}")
        raise SourceError(f"{path}, line 1: not a {separator!r}-separated header")
    missing = [c for c in expected_columns if c not in names]
    if missing:
        raise SourceError(
            f"{path}, line 1: missing column(s) {', '.join(repr(m) for m in missing)} (found: "
            f"{', '.join(n for n in names if n)})"
        )
    return names


def check_has_rows(path: Path, rows_read: int, rejected: int) -> None:
    """Refuse a source that had a header but no data row.

    Such a file (an export cut after its first line, a filter that matched nothing) would otherwise
    build a knowledge base whose gazetteers silently lack everything it was meant to bring.
    """
    if rows_read:
        return
    if rejected:
        raise SourceError(f"{path}: no data row could be read ({rejected:,} line(s) with the wrong number of fields)")
    raise SourceError(f"{path}: a header and no data rows (an empty extraction or a truncated file?)")


class StoppableFile:
    """A Python file handed to pyarrow (a zip member) that can be stopped, and waited for, from this thread.

    pyarrow's CSV reader reads a Python file from a read-ahead thread of its own. When reading stops on
    an error, that thread may still be inside ``read()``; if the interpreter shuts down meanwhile, the
    process aborts (exit 134, after the error message). :meth:`stop` makes every later ``read()`` return
    end-of-file and waits for the one in progress, so that nothing of ours runs in that thread any more.
    """

    def __init__(self, handle) -> None:
        self._handle = handle
        self._stopped = False
        self._idle = threading.Condition()
        self._reading = 0

    closed = property(lambda self: self._handle.closed)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def read(self, size: int = -1) -> bytes:
        with self._idle:
            if self._stopped:
                return b""
            self._reading += 1
        try:
            return self._handle.read(size)
        finally:
            with self._idle:
                self._reading -= 1
                self._idle.notify_all()

    def stop(self) -> None:
        with self._idle:
            self._stopped = True
            self._idle.wait_for(lambda: self._reading == 0)


def guarded_batches(open_reader, path: Path, rows_read, source: StoppableFile | None = None) -> Iterator:
    """Open a pyarrow CSV reader (``open_reader()``, see :func:`open_guarded`) and iterate it, turning a read
    failure into a :class:`SourceError` naming the file.

    ``rows_read`` is a callable giving how many rows were read so far (for the message). Only the
    reading is guarded: an error in the caller's processing of a batch stays what it is (a bug).

    This generator alone holds the reader, and lets go of it before raising: a reader over a Python file
    (a zip member) has a read-ahead thread that calls back into Python, and a reader kept alive by the
    error's traceback until the interpreter shuts down makes that thread abort the process (exit 134).
    ``source``, the :class:`StoppableFile` the reader reads if any, is stopped when reading ends, whatever
    ends it, before the reader is let go.
    """
    try:
        reader = open_guarded(open_reader, path)
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except (OSError, ValueError) as error:  # pyarrow.ArrowInvalid is a ValueError
                message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                del reader, error  # now, not at exit (docstring)
                raise SourceError(
                    f"{path}: unreadable after {rows_read():,} rows ({message}): truncated or corrupt file"
                ) from None
            yield batch
    finally:
        if source is not None:
            source.stop()


def open_guarded(open_reader, path: Path):
    """Call ``open_reader()`` (which reads the first block), turning a failure into a :class:`SourceError`."""
    try:
        return open_reader()
    except (OSError, ValueError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise SourceError(f"{path}: unreadable ({message}): truncated or corrupt file") from None
