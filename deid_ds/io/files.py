"""Atomic output: a reader never sees a half-written file, an interrupted run leaves none behind.

Every output is written to a temporary file in the destination directory and moved into place with
``os.replace`` (atomic on POSIX within one filesystem) once complete. Directories of outputs are built
in a temporary sibling directory and swapped in the same way.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TMP_PREFIX = ".deid-ds-tmp-"
NEW, OLD = "n", "o"


def temporary_name(path: Path, kind: str = NEW) -> str:
    """``.deid-ds-tmp-<pid>-<8 hex><n|o>-<name of path>``: a temporary sibling of ``path``.

    ``n``: a directory being built; ``o``: the previous ``path`` moved aside during a swap. The name
    tells a later run (:func:`deid_ds.io.output_dir.remove_stale`) which output and process it belongs to.
    """
    return f"{TMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}{kind}-{path.name}"


def _default_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


# mkstemp creates files readable by their owner only; a finished output gets the usual permissions.
_FILE_MODE = _default_file_mode()


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; move it onto ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=path.suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    os.chmod(tmp, _FILE_MODE)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


@contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Yield a temporary directory that replaces ``path`` (whole) if the block succeeds.

    An existing ``path`` is kept until the new one is complete, then removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(temporary_name(path))
    tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    replace_directory(tmp, path)


def replace_directory(new: str | Path, path: str | Path) -> None:
    """Move the finished directory ``new`` onto ``path`` (same filesystem), removing the previous one.

    An existing ``path`` is moved aside first and removed once the new one is in place: ``path`` is
    never a mix of both.
    """
    path = Path(path)
    old = None
    if path.exists() or path.is_symlink():
        old = path.with_name(temporary_name(path, OLD))
        os.replace(path, old)
    try:
        os.replace(new, path)
    except BaseException:
        if old is not None:
            os.replace(old, path)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def close_writers(writers) -> None:
    """Close every Parquet writer, then raise the first error met (a full disk fails the first ``close``).

    A writer whose ``close`` failed is marked closed: otherwise the garbage collector calls ``close`` again
    from ``__del__`` and prints a traceback after the one-line error the user was given.
    """
    first: BaseException | None = None
    for writer in writers:
        try:
            writer.close()
        except BaseException as error:
            writer.is_open = False
            first = first or error
    if first is not None:
        raise first
