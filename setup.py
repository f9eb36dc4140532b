"""Package discovery that pyproject.toml cannot express: every ``deid_ds*`` package found in the tree
(as ``[tool.setuptools.packages.find]`` would), plus the Prodigy recipes of ``recipes/`` installed as
``deid_ds_recipes``, the target of the ``prodigy_recipes`` entry points. Everything else is in
pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[*find_namespace_packages(include=["deid_ds", "deid_ds.*"]), "deid_ds_recipes"],
    package_dir={"deid_ds_recipes": "recipes"},
)
