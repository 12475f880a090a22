"""fairseq plugins, loaded with ``--user-dir src/phenomt/fairseq_ext``.

fairseq imports this package once; importing every submodule here runs their
``@register_model`` / ``@register_criterion`` / ``@register_task`` decorators. Without torch
and fairseq (a light install) importing it says so in one line, not from deep in a plugin.
"""

import importlib
import pkgutil

from phenomt.core.requires import require_training

require_training("the fairseq plugins (phenomt.fairseq_ext)")

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
