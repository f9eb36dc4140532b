"""Synthetic sample data: French clinical HTML notes, patient metadata, gold annotations and knowledge-base
source files in the official BAN / Annuaire Santé formats (``deid-ds synth``).

No real clinical data can be shipped; this generator is the project's stand-in: the embedded sample that
``make demo`` runs on, the fixture of end-to-end tests and the first yardstick of the weak labeller.

    >>> from deid_ds.synth import SynthConfig, generate_corpus, write_corpus
    >>> corpus = generate_corpus(SynthConfig(notes=20, seed=3))
    >>> len(corpus.notes)
    20
"""

from deid_ds.synth.corpus import Corpus, SynthConfig, canonical_command, generate_corpus, synthesize, write_corpus
from deid_ds.synth.summary import SampleCounts, summary_table

__all__ = [
    "Corpus",
    "SampleCounts",
    "SynthConfig",
    "canonical_command",
    "generate_corpus",
    "summary_table",
    "synthesize",
    "write_corpus",
]
