"""The output directory of a stage, on either engine: built whole in a temporary directory, then
published onto ``OUT`` (or, decided at the end, onto another target: ``deidentify --fail-on-leak``'s
``OUT.leaks``).

The policy is :mod:`deid_ds.io.output_dir`'s (``OUT`` checked, locked, replaced only if deid-ds wrote
it or with ``--overwrite``; the marker written last). A local ``OUT`` is built beside itself (or in the
directory ``scratch``, on the same file system: ``weak-label``'s work directory) and moved onto it; a
URI of another file system (the Spark engine's ``hdfs://``, ``s3a://``, ``file:``) is built in a local
temporary directory and published by the engine's ``publish_remote`` (copied beside the target, then
renamed onto it).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from deid_ds.io.files import temporary_name
from deid_ds.io.output_dir import check_output_dir, guarded_output, publish, write_marker

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")  # hdfs://, s3a://, file:/ (not C:\)


def is_local(path: str | Path) -> bool:
    """Whether ``path`` is a plain local path (not a URI: ``hdfs://``, ``s3a://``, ``file:``...)."""
    return not _URI.match(str(path))


#: Name prefix of the temporary directory built in ``scratch``.
SCRATCH_PREFIX = "assembly-"


@dataclass
class Output:
    """The directory being built (``tmp``) and where it goes when the block succeeds (``target``:
    ``OUT`` unless the stage changes it before the end)."""

    tmp: Path
    target: str


@contextmanager
def building(
    out: str | Path,
    command: str,
    *,
    inputs: tuple = (),
    overwrite: bool = False,
    scratch: Path | None = None,
    publish_remote: Callable[[Path, str], None] | None = None,
    locked: bool = False,
) -> Iterator[Output]:
    """An :class:`Output` whose ``tmp`` replaces its ``target`` if the block succeeds (module docstring).

    ``OUT`` is checked and locked for the block (:func:`deid_ds.io.output_dir.guarded_output`), unless
    the caller holds that already (``locked``). A target other than ``OUT`` is checked by the same
    policy before it is replaced. The temporary directory is removed whatever happens; the previous
    target is kept until the new one is complete.
    """
    if locked:
        with _staged(out, command, inputs, overwrite, scratch, publish_remote) as output:
            yield output
        return
    with guarded_output(out, command, inputs=inputs, overwrite=overwrite):
        with _staged(out, command, inputs, overwrite, scratch, publish_remote) as output:
            yield output


@contextmanager
def _staged(out, command, inputs, overwrite, scratch, publish_remote) -> Iterator[Output]:
    if is_local(out):
        path = Path(out)
        if scratch is None:
            path.absolute().parent.mkdir(parents=True, exist_ok=True)
            tmp = path.absolute().with_name(temporary_name(path))
            tmp.mkdir()
        else:
            scratch.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=scratch))
        staging = None
    else:
        staging = Path(tempfile.mkdtemp(prefix="deid-ds-out-"))
        tmp = staging / "out"
        tmp.mkdir()
    first = str(out) if not is_local(out) else str(Path(out))
    output = Output(tmp, first)
    try:
        yield output
        if output.target != first:
            check_output_dir(output.target, command, inputs, overwrite)
        if is_local(output.target):
            publish(tmp, Path(output.target), command)
        else:
            write_marker(tmp, command)
            assert publish_remote is not None, "a URI output needs the Spark engine"
            publish_remote(tmp, output.target)
    finally:
        shutil.rmtree(staging or tmp, ignore_errors=True)
