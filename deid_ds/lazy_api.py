"""A package's public names imported on first use (PEP 562), so that importing the package stays cheap.

``deid-ds COMMAND --help``, the engines' workers and ``import deid_ds`` import a stage's package without using
its API: a package that imported its whole stage up front (Arrow, pandas, the labeller) made each of them pay.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, api: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package`` serving ``api`` (public name -> the module that defines it): the
    name is imported from its module the first time it is asked for, then kept on the package.

    A name equal to one of the package's own submodules cannot be served this way (importing the submodule binds
    its name on the package first): such a package imports that name up front."""

    def __getattr__(name: str) -> Any:
        module = api.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
