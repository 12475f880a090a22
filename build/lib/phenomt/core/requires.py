"""torch and fairseq: what training, decoding and the fairseq plugins need, and nothing else.

They are not dependencies of the package (the ``train`` extra documents them): ``make setup``
installs them, while ``pip install`` of the package alone is the light install for scoring,
the tables and the workflow's planning. Every place that needs them asks here first, so that
a light install says in one line what is missing instead of a traceback from an import deep
inside a command. Whether they are installed is looked up without importing them (importing
torch costs seconds).
"""

from __future__ import annotations

from importlib.util import find_spec
from types import ModuleType

from phenomt.core.io import InputError

#: The modules of the ``train`` extra, by import name.
MODULES = ("torch", "fairseq")
HINT = ("run `make setup` in a checkout, or pip install torch and fairseq-fixed as "
        "scripts/setup.sh does (fairseq-fixed built against torch with --no-build-isolation)")


class MissingTraining(InputError, ImportError):
    """What needs torch and fairseq, where they are not installed. An :class:`InputError`, so
    that the command line prints it as one line, and an ImportError for importers."""

    def __init__(self, what: str, missing: list[str]):
        super().__init__(what, f"needs torch and fairseq ({', '.join(missing)} not "
                               f"installed): {HINT}")
        self.missing = missing


def missing() -> list[str]:
    """The modules of the training extra that are not installed."""
    return [name for name in MODULES if find_spec(name) is None]


def require_training(what: str) -> None:
    """Raise :class:`MissingTraining` naming ``what`` (a command or a step) unless torch and
    fairseq are installed."""
    absent = missing()
    if absent:
        raise MissingTraining(what, absent)


def import_torch(what: str) -> ModuleType:
    """torch, imported; :class:`MissingTraining` naming ``what`` when it is not installed
    (reading or averaging checkpoints needs no fairseq)."""
    if find_spec("torch") is None:
        raise MissingTraining(what, ["torch"])
    import torch

    return torch
