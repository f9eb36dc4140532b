"""Weak labelling: rules, gazetteers and metadata that label entities without a trained model.

Kept import-light on purpose: worker processes import the submodules they need
(:mod:`deid_ds.label.patterns` for the regex-based labelling functions), and importing the package
itself must not pull pandas, the knowledge bases or anything else heavy.
"""
