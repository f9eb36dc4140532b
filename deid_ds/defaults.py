"""Defaults shared by several commands, kept in a module with no heavy import (the CLI reads them)."""

#: Longest sentence, in tokens; longer ones are cut (memory of a sequence tagger grows with length).
DEFAULT_MAX_TOKENS = 200

#: Notes read and processed at a time.
DEFAULT_BATCH_SIZE = 256

#: Sentences per forward pass of ``predict``'s tagger, sorted by length: 128 cost a third less CPU time than 32
#: on the demo-sized model, same output (docs/benchmarks.md, "Prediction: `predict` on CPU").
DEFAULT_MINI_BATCH = 128
