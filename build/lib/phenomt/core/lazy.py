"""Modules imported on first use.

Every Snakemake job is a fresh ``phenomt`` process, and a command group's modules are imported
to parse its arguments. pandas alone takes about half a second to import on the reference
machine, which the scoring jobs (the bulk of a run, hundreds per run) never use: the modules
that build tables import it through :func:`lazy_import`, so only the jobs that build a table
pay for it: they write ``from phenomt.core.lazy import pandas as pd``.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_import(name: str) -> ModuleType:
    """The module ``name``, executed on its first attribute access (the standard library's
    :class:`importlib.util.LazyLoader`); the module itself if it is already imported."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


#: pandas, imported when a table is first built.
pandas = lazy_import("pandas")
