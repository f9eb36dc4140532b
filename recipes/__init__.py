"""Prodigy recipes of deid-ds, installed as the package ``deid_ds_recipes`` (see recipes/README.md)."""
