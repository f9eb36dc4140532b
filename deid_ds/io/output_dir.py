"""What a command may replace when it writes ``--out DIR``: only what deid-ds wrote, never an input.

Every directory a command writes gets a marker file, :data:`MARKER` (``.deid-ds.json``: tool, command,
version, time). A later run replaces ``DIR`` without asking only when ``DIR`` does not exist, is empty,
or holds the marker of the same command; anything else is refused (:class:`OutputRefused`, exit status
2) unless the user passes ``--overwrite``. Some targets are refused even then, because replacing them
would destroy what the run reads or the user's workspace: ``/``, the home directory, the current
directory, an input of the run, and any directory holding one of those.

A run holds a lock on ``DIR`` (``fcntl.flock`` on a hidden file next to it) from the check to the swap:
a second run on the same ``DIR`` refuses at once instead of adopting or deleting the first one's work.
Under the lock, the temporary directories a killed run left next to ``DIR`` are removed: their names
(:func:`deid_ds.io.files.temporary_name`) say which ``DIR`` and which process they belong to.

An ``OSError`` while writing (disk full, permission denied, read-only file system) becomes one line,
:class:`OutputError`; the temporary directory is removed and the previous ``DIR`` is left as it was.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from deid_ds.errors import DeidError
from deid_ds.io.files import OLD, TMP_PREFIX, atomic_directory, replace_directory, temporary_name

MARKER = ".deid-ds.json"
MARKER_TOOL = "deid-ds"
#: The names :func:`deid_ds.io.files.temporary_name` gives: n for a directory being built, o for the
#: previous ``DIR`` moved aside during the swap.
_TMP_NAME = re.compile(r"\.deid-ds-tmp-(\d+)-[0-9a-f]{8}([no])-(.+)")
#: The paths a run reads (``None`` for an option not given): never replaced, nor a directory holding one.
Inputs = Iterable["str | Path | None"]
OVERWRITE_HELP = (
    "Replace OUT even when deid-ds did not write it (no .deid-ds.json marker inside). "
    "Never allowed: /, the home or current directory, an input of the run or a directory holding one."
)


class OutputRefused(DeidError):
    """The output directory may not be replaced (the CLI exits with status 2)."""

    exit_code = 2


class OutputError(DeidError):
    """The output could not be written (an ``OSError``: disk full, permission denied...)."""


def _is_remote(path: str | Path) -> bool:
    """A URI Spark reads (``hdfs://``, ``s3a://``...): not a local path this module can check."""
    text = str(path)
    return "://" in text and not text.startswith("file:")


def _local(path: str | Path) -> Path:
    text = str(path)
    if text.startswith("file://"):
        text = text[len("file://") :]
    elif text.startswith("file:"):
        text = text[len("file:") :]
    return Path(text)


def forbidden_reason(out: Path, inputs: Inputs = ()) -> str | None:
    """Why ``out`` may never be replaced, even with ``--overwrite`` (``None`` when it may be).

    Paths are compared resolved (symbolic links followed): ``--out .`` is the current directory.
    """
    target = out.resolve()
    protected = [("the root directory", Path("/")), ("the current directory", Path.cwd())]
    try:
        protected.append(("the home directory", Path.home()))
    except (KeyError, RuntimeError):  # no HOME and no password entry: no home directory to protect
        pass
    for what, place in protected:
        place = place.resolve()
        if target == place:
            return f"it is {what}"
        if target in place.parents:
            return f"it holds {what}"
    for item, source in _local_inputs(inputs):
        if target == source:
            return f"it is an input of this run ({item})"
        if target in source.parents:
            return f"it holds an input of this run ({item})"
    return None


def forbidden_file_reason(out: Path, inputs: Inputs = ()) -> str | None:
    """Why the file ``out`` (a page) may never be written, even with ``--overwrite`` (``None`` when it may be).

    A file that is an input of the run, or an existing file inside an input directory (a KB's table, a
    weak-label output's spans), is part of what the run reads: replacing it would destroy it.
    """
    target = out.resolve()
    for item, source in _local_inputs(inputs):
        if target == source:
            return f"it is an input of this run ({item})"
        if source in target.parents and target.exists():
            return f"it is a file of an input of this run ({item})"
    return None


def _local_inputs(inputs: Inputs):
    """``(input as given, its resolved local path)`` for each input on this machine's file system."""
    for item in inputs:
        if item is not None and not _is_remote(item):
            yield item, _local(item).resolve()


def read_marker(out: Path) -> dict | None:
    """The marker of a directory deid-ds wrote, or ``None`` (absent, unreadable, not ours)."""
    try:
        marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) and marker.get("tool") == MARKER_TOOL else None


def check_output_dir(out: str | Path, command: str, inputs: Inputs = (), overwrite: bool = False) -> Path:
    """``out`` as a path, after checking this run may replace it; else :class:`OutputRefused`.

    A URI of another file system (``hdfs://``, ``s3a://``: the Spark engine's) is not checked.
    """
    path = _local(out)
    if _is_remote(out):
        return path
    if path.is_symlink():
        raise OutputRefused(f"--out {out}: is a symbolic link; give the directory it points to, or another path")
    reason = forbidden_reason(path, inputs)
    if reason is not None:
        raise OutputRefused(
            f"--out {out}: refused, {reason} (never replaced, even with --overwrite); choose a new directory"
        )
    if not path.exists():
        return path
    if not path.is_dir():
        raise OutputRefused(f"--out {out}: is a file, not a directory; remove it or choose another --out")
    if overwrite:
        return path
    marker = read_marker(path)
    if marker is not None and marker.get("command") == command:
        return path
    if marker is not None:
        raise OutputRefused(
            f"--out {out}: holds the output of deid-ds {marker.get('command')}, not {command}; "
            "pass --overwrite to replace it, or choose another --out"
        )
    try:
        empty = not any(path.iterdir())
    except OSError as error:
        raise OutputRefused(f"--out {out}: cannot be listed ({error.strerror})") from None
    if empty:
        return path
    raise OutputRefused(
        f"--out {out}: exists and was not written by deid-ds (no {MARKER} inside; "
        "an older deid-ds wrote none): pass --overwrite to replace it and everything in it, "
        "or choose another --out"
    )


def check_work_directory(work: Path, inputs: Inputs = (), overwrite: bool = False, *, sign: str = "state.json") -> None:
    """Check a run may use (and in the end remove) the work directory ``work`` (weak-label's ``OUT.partial``).

    An existing ``work`` must be one deid-ds made (it holds ``sign``), or empty, or ``overwrite`` given;
    the targets :func:`forbidden_reason` names are refused whatever.
    """
    if work.is_symlink():
        raise OutputRefused(
            f"{work}: the work directory of this --out is a symbolic link; move it away or choose another --out"
        )
    reason = forbidden_reason(work, inputs)
    if reason is not None:
        raise OutputRefused(f"{work}: refused as the work directory of this --out, {reason}; choose another --out")
    if not work.exists() or overwrite:
        return
    if not work.is_dir():
        raise OutputRefused(f"{work}: the work directory of this --out is a file; remove it or choose another --out")
    if not (work / sign).is_file() and any(work.iterdir()):
        raise OutputRefused(
            f"{work}: exists and is not a deid-ds work directory (no {sign}); "
            "pass --overwrite to replace it, or choose another --out"
        )


def _lock_path(out: Path) -> Path:
    return out.absolute().with_name(f".{out.name}.deid-ds-lock")


@contextmanager
def output_lock(out: Path) -> Iterator[None]:
    """Hold the lock on ``out`` for the block; :class:`OutputRefused` at once if another run holds it.

    The lock file is removed when released; a run that opened it just before checks, once it holds the
    lock, that the path still names the file it locked (else it was released meanwhile: try again).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX (Windows): no lock
        yield
        return
    lock = _lock_path(out)
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            raise OutputRefused(
                f"--out {out}: another deid-ds run is writing it (lock {lock.name}); "
                "wait for it to finish or choose another --out"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        try:
            os.unlink(lock)
        finally:
            os.close(fd)


def remove_stale(out: Path) -> list[Path]:
    """Remove the temporary siblings of ``out`` that earlier (killed) runs left; call under the lock.

    A run killed between moving the previous ``out`` aside and moving the new one in leaves no ``out``
    but the previous one aside: it is put back rather than removed. Returns what was removed.
    """
    parent = out.absolute().parent
    removed = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _TMP_NAME.fullmatch(entry.name)
        if match is None or match.group(3) != out.name:
            continue
        if match.group(2) == OLD and not out.exists() and entry.is_dir():
            os.replace(entry, out)
            continue
        _remove(entry)
        removed.append(entry)
    return removed


def remove_stale_inside(directory: Path) -> list[Path]:
    """Remove the ``.deid-ds-tmp-*`` entries directly in ``directory`` (build-kb's, which writes into its
    ``--out``); call under the lock of ``directory``, when no other run can be writing them."""
    removed = []
    for entry in directory.iterdir():
        if entry.name.startswith(TMP_PREFIX):
            _remove(entry)
            removed.append(entry)
    return removed


def _remove(entry: Path) -> None:
    """Remove a temporary file or directory of ours (a link is removed, never followed)."""
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)


def write_marker(directory: Path, command: str, *, timestamp: bool = True) -> None:
    """Sign ``directory`` as the output of deid-ds ``command`` (what a later run may replace).

    Without ``timestamp`` the marker holds no time: ``synth`` promises the same bytes for the same seed.
    """
    from deid_ds import __version__

    marker = {"tool": MARKER_TOOL, "command": command, "version": __version__}
    if timestamp:
        marker["created"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    (directory / MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")


def publish(new: Path, out: Path, command: str) -> None:
    """Sign the finished directory ``new`` and swap it onto ``out`` (same file system).

    The previous ``out`` is moved aside first and removed once the new one is in place: ``out`` is never
    a mix of both.
    """
    write_marker(new, command)
    replace_directory(new, out.absolute())


def describe_os_error(out: str | Path, error: OSError) -> str:
    """One line for an ``OSError`` met while writing ``out``: what failed, where, and that nothing changed."""
    reason = error.strerror or str(error) or type(error).__name__
    where = f" ({error.filename})" if error.filename and TMP_PREFIX not in str(error.filename) else ""
    return f"cannot write {out}: {reason}{where}; the previous output, if any, is unchanged"


@contextmanager
def guarded_output(out: str | Path, command: str, *, inputs: Inputs = (), overwrite: bool = False) -> Iterator[Path]:
    """Check ``out`` may be replaced, lock it and clean what killed runs left, for the block.

    Yields ``out`` as a path. An ``OSError`` in the block becomes :class:`OutputError` (one line).
    For a command that builds its output elsewhere (weak-label's work directory) and swaps it in with
    :func:`publish`, or on Spark; the others use :func:`output_directory`. A URI of another file
    system (Spark's ``hdfs://``...) is neither checked nor locked.
    """
    path = check_output_dir(out, command, inputs, overwrite)
    if _is_remote(out):
        yield path
        return
    try:
        with output_lock(path):
            check_output_dir(out, command, inputs, overwrite)  # again, now that no other run can change it
            remove_stale(path)
            yield path
    except OSError as error:
        raise OutputError(describe_os_error(out, error)) from None


@contextmanager
def output_directory(out: str | Path, command: str, *, inputs: Inputs = (), overwrite: bool = False) -> Iterator[Path]:
    """A temporary directory that replaces ``out`` (whole, signed with the marker) if the block succeeds.

    The checks, lock and error handling of :func:`guarded_output`; the temporary directory is removed
    whatever happens, the previous ``out`` kept until the new one is complete.
    """
    with guarded_output(out, command, inputs=inputs, overwrite=overwrite) as path:
        path.absolute().parent.mkdir(parents=True, exist_ok=True)
        tmp = path.absolute().with_name(temporary_name(path))
        tmp.mkdir()
        try:
            yield tmp
            publish(tmp, path, command)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def signed_directory(path: str | Path, command: str) -> Iterator[Path]:
    """:func:`deid_ds.io.files.atomic_directory` whose result carries the marker of ``command``.

    For the Spark engine, whose output may be on another file system (checked, when local, by
    :func:`check_output_dir` before the run; not locked).
    """
    with atomic_directory(path) as tmp:
        yield tmp
        write_marker(tmp, command)
