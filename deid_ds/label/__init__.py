"""Weak labelling: rules, gazetteers and metadata that label entities without a trained model.

:mod:`.functions` lists the labelling functions by name (one module per family: :mod:`.dates`,
:mod:`.phones`, :mod:`.emails`, :mod:`.zips`, :mod:`.people`, :mod:`.patient`, :mod:`.addresses`,
:mod:`.propagate`; the cue phrases they share in :mod:`.cues`); :mod:`.labeller` runs them and
:mod:`.resolve` settles their conflicts.

Kept import-light on purpose: worker processes import the submodules they need
(:mod:`deid_ds.label.patterns` for the regex-based labelling functions), and importing the package
itself must not pull pandas, the knowledge bases or anything else heavy.
"""
