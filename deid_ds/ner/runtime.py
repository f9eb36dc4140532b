"""What every training command needs from torch and Flair: the device, the seed, quiet logs, versions.

Imported only by the command functions (it imports torch and flair at call time, not at import time).
"""

from __future__ import annotations

import logging
import platform
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata

from deid_ds.defaults import available_cores
from deid_ds.errors import InputError

DEVICES = ("auto", "cpu", "cuda")


def select_device(name: str = "auto") -> str:
    """Point Flair at ``cpu`` or ``cuda`` (``auto``: CUDA when torch sees a GPU); return what was chosen.

    Flair reads the global ``flair.device`` when it builds embeddings and models, so this must run
    before anything is built. ``cuda:1`` style names pick a GPU.
    """
    import flair
    import torch

    if name == "auto":
        chosen = "cuda" if torch.cuda.is_available() else "cpu"
    elif name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise InputError(f"--device {name}: torch sees no CUDA device here (use --device cpu or auto)")
        chosen = name
    elif name == "cpu":
        chosen = "cpu"
    else:
        raise InputError(f"--device {name}: expected auto, cpu, cuda or cuda:N")
    flair.device = torch.device(chosen)
    return chosen


def thread_count(requested: int | None, cores: int, workers: int = 1) -> int:
    """torch's CPU threads for one of ``workers`` processes sharing ``cores``: the one rule of every command.

    By default one thread: when other jobs hold the cores, torch's threads spin waiting for each other, and an
    epoch of the demo's tagger took 14 times longer with 2 threads than with 1 (median; loaded 2-core VM, hidden
    64 and 256 alike; docs/benchmarks.md, "Threads: one by default"), where a second thread could at best halve it.
    ``requested`` (``--threads``) is obeyed up to the process's share of the cores, never beyond: workers ×
    threads never exceeds the cores.
    """
    if requested is not None and requested < 1:
        raise InputError(f"--threads {requested}: at least 1")
    share = max(1, cores // max(1, workers))
    return 1 if requested is None else min(requested, share)


def set_threads(requested: int | None, log: Callable[[str], None] | None = None) -> int:
    """Give torch :func:`thread_count` threads on this process's cores; return the number (recorded in reports).

    ``log`` is told when ``requested`` is more than the cores allow. torch's inter-op pool is left alone:
    it starts only for ``torch.jit.fork``-style work, which none of these models does (a training with one
    thread runs on 2 OS threads, one of them idle), and ``torch.set_num_threads`` sizes OpenMP's and MKL's
    pools, the ones that spin.
    """
    import torch

    cores = available_cores()
    threads = thread_count(requested, cores)
    if log is not None and requested is not None and threads < requested:
        log(f"--threads {requested}: {cores} core(s) available to this process, {threads} thread(s) used")
    if torch.get_num_threads() != threads:  # predict calls this for every batch
        torch.set_num_threads(threads)
    return threads


def device_description(device: str) -> str:
    """The device in words for a model card (GPU name when it is one)."""
    if device.startswith("cuda"):
        import torch

        return f"{device} ({torch.cuda.get_device_name(torch.device(device))})"
    return f"cpu ({platform.processor() or platform.machine()})"


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's generators (Flair's ``set_seed``) so runs repeat on one machine."""
    import flair

    flair.set_seed(seed)


@contextmanager
def flair_console(verbose: bool) -> Iterator[None]:
    """Keep Flair's own console log (INFO lines every tenth of an epoch) only when ``verbose``.

    Flair's logger also feeds the ``training.log`` file handlers its trainers attach; only the console
    handlers are raised to WARNING, so the file log stays complete. Flair's deprecation warnings about
    its own calls into torch (``torch.cuda.amp.GradScaler``) and its ``FastTextEmbeddings`` (deprecated
    in Flair 0.14, still there in the pinned 0.15) are silenced too: a user can do nothing about them,
    and so are Flair's progress bars (the commands show their own).
    """
    import flair.file_utils

    logger = logging.getLogger("flair")
    changed: list[tuple[logging.Handler, int]] = []
    bar = flair.file_utils._tqdm
    if not verbose:
        # Flair's own progress bars (label dictionary, every evaluation) all go through this name.
        # (Flair passes disable=False itself, so the argument is overridden rather than defaulted.)
        flair.file_utils._tqdm = lambda *args, **kwargs: bar(*args, **{**kwargs, "disable": True})
        for handler in logger.handlers:
            if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
                changed.append((handler, handler.level))
                handler.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            if not verbose:
                warnings.filterwarnings("ignore", category=FutureWarning, module=r"flair\.")
                warnings.filterwarnings("ignore", category=DeprecationWarning, message=r".*FastTextEmbeddings")
            yield
    finally:
        flair.file_utils._tqdm = bar
        for handler, level in changed:
            handler.setLevel(level)


def package_versions() -> dict[str, str | None]:
    """Versions of what produced a model: recorded so a model can be reproduced or its loading explained."""
    from deid_ds import __version__

    versions: dict[str, str | None] = {"deid-ds": __version__, "python": platform.python_version()}
    for name in ("flair", "torch", "gensim", "numpy"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions
