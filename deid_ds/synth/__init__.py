"""Synthetic sample data: French clinical HTML notes, patient metadata, gold annotations and knowledge-base
source files in the official BAN / Annuaire Santé formats (``deid-ds synth``).

No real clinical data can be shipped; this generator is the project's stand-in: the embedded sample that
``make demo`` runs on, the fixture of end-to-end tests and the first yardstick of the weak labeller.

    >>> from deid_ds.synth import SynthConfig, generate_corpus, write_corpus
    >>> corpus = generate_corpus(SynthConfig(notes=20, seed=3))
    >>> len(corpus.notes)
    20
"""

from deid_ds.lazy_api import lazy_getattr

#: public name -> the module that defines it, imported on first use (PEP 562): importing the package, as
#: `deid-ds COMMAND --help` and the engines' workers do, stays cheap.
_API: dict[str, str] = {
    "Corpus": "deid_ds.synth.corpus",
    "SynthConfig": "deid_ds.synth.corpus",
    "canonical_command": "deid_ds.synth.corpus",
    "generate_corpus": "deid_ds.synth.corpus",
    "synthesize": "deid_ds.synth.corpus",
    "write_corpus": "deid_ds.synth.corpus",
    "SampleCounts": "deid_ds.synth.summary",
    "summary_table": "deid_ds.synth.summary",
}

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


__getattr__ = lazy_getattr(__name__, _API)
