"""fairseq plugins, loaded with ``--user-dir src/phenomt/fairseq_ext``.

fairseq imports this package once; importing every submodule here runs their
``@register_model`` / ``@register_criterion`` / ``@register_task`` decorators.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
