"""Defaults shared by several commands, kept in a module with no heavy import (the CLI reads them)."""

import os

#: Longest sentence, in tokens; longer ones are cut (memory of a sequence tagger grows with length).
DEFAULT_MAX_TOKENS = 200

#: Notes read and processed at a time.
DEFAULT_BATCH_SIZE = 256

#: Sentences per forward pass of ``predict``'s tagger, sorted by length: 128 cost a third less CPU time than 32
#: on the demo-sized model, same output (docs/benchmarks.md, "Prediction: `predict` on CPU").
DEFAULT_MINI_BATCH = 128


def available_cores() -> int:
    """The cores this process may run on: its CPU affinity (``taskset``, a container's cpuset), which
    ``os.cpu_count()`` ignores; the default number of workers and the cap on torch's threads."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1
