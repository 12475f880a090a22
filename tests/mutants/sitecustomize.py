"""Deliberately broken variants of the fairseq plugins, to check that a test can see them.

Python imports ``sitecustomize`` at start-up when it lies on ``PYTHONPATH``, in pytest and in
every fairseq process pytest launches. With ``PHENOMT_MUTANT`` set, this one patches the named
plugin module as soon as it is imported (as ``phenomt.fairseq_ext.<module>`` in-process, or as
``fairseq_ext.<module>`` through fairseq's ``--user-dir``)::

    PYTHONPATH=tests/mutants PHENOMT_MUTANT=oaxe-identity \\
        .venv/bin/python -m pytest tests/test_overfit.py -k glat_oaxe

A test that still passes under a mutant cannot see the mechanism the mutant breaks. Nothing
imports this file without ``PYTHONPATH`` pointing here; without ``PHENOMT_MUTANT`` it does
nothing.

Mutants:

- ``oaxe-identity``: the Hungarian assignment returns the identity, so OaXE is the
  (truncated) cross entropy in the reference's order;
- ``oaxe-random``: the assignment is a random permutation;
- ``glat-ratio-0``: the glancing ratio is 0 at every update, so GLAT reveals nothing and
  trains as a vanilla NAT;
- ``glat-ratio-1``: the glancing ratio is 1 at every update.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys


def _oaxe_identity(module) -> None:
    import numpy as np

    def identity(cost):
        rows = np.arange(cost.shape[0])
        return rows, rows.copy()

    module.linear_sum_assignment = identity


def _oaxe_random(module) -> None:
    import numpy as np

    rng = np.random.default_rng(0)

    def random_assignment(cost):
        return np.arange(cost.shape[0]), rng.permutation(cost.shape[0])

    module.linear_sum_assignment = random_assignment


def _glat_ratio(ratio: float):
    def patch(module) -> None:
        module.GlancingModel.current_glancing_ratio = lambda self: ratio
    return patch


#: mutant name -> (plugin module, patch applied to it once imported)
MUTANTS = {
    "oaxe-identity": ("oaxe", _oaxe_identity),
    "oaxe-random": ("oaxe", _oaxe_random),
    "glat-ratio-0": ("glat", _glat_ratio(0.0)),
    "glat-ratio-1": ("glat", _glat_ratio(1.0)),
}


class _PatchingFinder(importlib.abc.MetaPathFinder):
    """Finds the plugin module as usual and patches it right after it has run."""

    def __init__(self, module: str, patch) -> None:
        self.suffix = f"fairseq_ext.{module}"
        self.patch = patch

    def find_spec(self, fullname, path, target=None):
        if fullname != self.suffix and not fullname.endswith("." + self.suffix):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module
        patch = self.patch

        def exec_module(module):
            run(module)
            patch(module)
            print(f"mutant {os.environ['PHENOMT_MUTANT']}: patched {fullname}", file=sys.stderr)

        spec.loader.exec_module = exec_module
        return spec


_name = os.environ.get("PHENOMT_MUTANT")
if _name:
    if _name not in MUTANTS:
        raise SystemExit(f"PHENOMT_MUTANT={_name!r}: expected one of {', '.join(MUTANTS)}")
    sys.meta_path.insert(0, _PatchingFinder(*MUTANTS[_name]))
