"""The work directory of an unfinished run: its layout, the run's fingerprint, and resumption.

``OUT.partial/`` holds a ``state.json`` (format, fingerprint, number of batches) and one directory per
finished batch (:func:`part_name`), each written atomically. A restart with the same fingerprint skips
the finished batches; another fingerprint starts over. Input files are fingerprinted by content
(:func:`content_digest`), not by size and modification time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from deid_ds.engine.local import part_name  # noqa: F401 - the layout of the parts, re-exported
from deid_ds.io.files import atomic_write_text
from deid_ds.io.notes import NotesSource
from deid_ds.weak_labelling.options import WeakLabelOptions

WORK_SUFFIX = ".partial"
STATE_FILE = "state.json"
# /2: batch parts are Arrow IPC files (were Parquet); /3: the rendered lines are columns of the sentences
# table (were a table of their own). An older work directory is started over, not misread.
STATE_FORMAT = "deid-ds-weak-label-work/3"
_PART = re.compile(r"batch-(\d{6})")
#: Packages of ``deid_ds`` and modules whose code decides what a batch part holds: a restart after
#: they changed starts over. Whole packages count, whatever their module layout; the knowledge-base
#: code the labeller runs (folding, ambiguity, the matcher) and the notes reader (column mapping, batch
#: slicing) count too.
_CODE_PACKAGES = ("segmentation", "label", "weak_labelling")
_CODE_MODULES = (
    "model.py",
    "io/notes.py",
    "engine/local.py",
    "kb/normalize.py",
    "kb/ambiguity.py",
    "kb/matcher.py",
)
_PACKAGE = Path(__file__).resolve().parent.parent  # deid_ds/


def work_directory(out: str | Path) -> Path:
    """Where an unfinished run keeps its state and batch parts: ``OUT.partial`` next to ``OUT``."""
    out = Path(out).absolute()
    return out.with_name(out.name + WORK_SUFFIX)


def content_digest(path: str | Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes, read a chunk at a time (never the whole file in memory).

    Size and modification time alone miss a file rewritten in place with the same length whose
    mtime was restored (``rsync --times``, ``cp -p``, ``os.utime``, a coarse clock): resuming then
    would mix batches labelled from two different inputs. Hashing costs about 0.13 s per 100 MB
    (measured: SHA-256 with 1 MiB reads of a 100 MB file in the page cache; BLAKE2b took 0.21 s on
    the same machine, which has SHA instructions), i.e. a few seconds for a national notes table,
    against the ~30 minutes of labelling it protects.
    """
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_identity(path: str | Path) -> dict[str, object]:
    """A file as the fingerprint sees it: where it is, its size and its content — not its mtime: the
    same bytes touched or copied back in place resume, a same-size rewrite with its mtime restored
    starts over."""
    return {"path": str(Path(path).resolve()), "size": Path(path).stat().st_size, "sha256": content_digest(path)}


def _code_files() -> list[Path]:
    """The source files of :data:`_CODE_PACKAGES` and :data:`_CODE_MODULES`, in a fixed order."""
    files = [file for name in _CODE_PACKAGES for file in sorted((_PACKAGE / name).rglob("*.py"))]
    resources = sorted(p for p in (_PACKAGE / "resources").iterdir() if p.is_file())  # word lists, Punkt parameters
    return files + [_PACKAGE / name for name in _CODE_MODULES] + resources


@functools.cache
def _code_digest() -> str:
    """Digest of the code that decides a part's content: labelling rules, parser, segmenter, this package.

    Computed once per process: the code a process runs is the code it loaded, whatever is edited later.
    """
    digest = hashlib.sha256()
    for file in _code_files():
        digest.update(file.relative_to(_PACKAGE).as_posix().encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def run_fingerprint(
    source: NotesSource,
    options: WeakLabelOptions,
    batch_size: int,
    gold: str | Path | None,
    split: Sequence[float] = (),
    seed: int = 0,
) -> dict:
    """Everything a batch part depends on: a restart resumes only when all of it is unchanged."""
    from deid_ds import __version__

    kb = options.label.kb_dir
    punkt = options.segment.punkt_path
    fingerprint = {
        "version": __version__,
        "code": _code_digest(),
        "input": {"kind": source.kind, "files": [_file_identity(f) for f in source.files], "columns": source.columns},
        "batch_size": batch_size,
        "segment": {"punkt": _file_identity(punkt) if punkt else None, "max_tokens": options.segment.max_tokens},
        "label": {
            "kb": kb,
            "kb_manifest_sha256": hashlib.sha256((Path(kb) / "manifest.json").read_bytes()).hexdigest() if kb else None,
            "use_metadata": options.label.use_metadata,
            "disabled": sorted(options.label.disabled),
        },
        "keep_empty": options.keep_empty,
        "keep_empty_test": options.keep_empty_test,
        "sentences_jsonl": options.sentences_jsonl,  # parts hold the JSONL lines only when asked for
        "features": options.features,  # parts' Flair lines hold the feature column only when asked for
        "split": list(split),  # which sentences a part keeps depends on its notes' split
        "seed": seed,
        "gold": _file_identity(gold) if gold else None,
        "limits": {
            "max_note_bytes": options.limits.max_bytes,
            "note_timeout": options.limits.timeout,
        },  # which notes fail
    }
    return json.loads(json.dumps(fingerprint))  # the form it has once read back from state.json


def prepare_work(work: Path, fingerprint: dict, n_batches: int, log: Callable[[str], None]) -> set[int]:
    """Open (or create) the work directory; returns the indices of the batches already done."""
    state_path = work / STATE_FILE
    if work.exists():
        try:
            state = json.loads(state_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            state = {}
        if (
            state.get("format") == STATE_FORMAT
            and state.get("fingerprint") == fingerprint
            and state.get("batches") == n_batches
        ):
            done = {int(m.group(1)) for p in work.iterdir() if p.is_dir() and (m := _PART.fullmatch(p.name))}
            done &= set(range(n_batches))
            log(f"resuming: {len(done)} of {n_batches} batches done (work directory {work})")
            return done
        changed = sorted(k for k in fingerprint if state.get("fingerprint", {}).get(k) != fingerprint[k]) or ["state"]
        log(f"starting over: {', '.join(changed)} changed since the interrupted run (work directory {work})")
        shutil.rmtree(work)
    work.mkdir(parents=True)
    atomic_write_text(
        state_path,
        json.dumps({"format": STATE_FORMAT, "fingerprint": fingerprint, "batches": n_batches}, indent=1) + "\n",
    )
    return set()
