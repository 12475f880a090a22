"""fairseq plugins, loaded with ``--user-dir src/phenomt/fairseq_ext``.

Importing every submodule here runs their ``@register_model`` / ``@register_criterion`` /
``@register_task`` decorators, which fairseq refuses to run twice for one name. fairseq's
``--user-dir`` imports this folder under its base name (``fairseq_ext``), and a process that
has imported ``phenomt.fairseq_ext`` (a test, an in-process decoding) may then be handed the
folder again: so the plugins are registered only under the package's own name, whichever
import comes first. Without torch and fairseq (a light install) importing it says so in one
line, not from deep in a plugin.
"""

import importlib
import pkgutil

from phenomt.core.requires import require_training

require_training("the fairseq plugins (phenomt.fairseq_ext)")

if __name__ == "phenomt.fairseq_ext":
    for _module in pkgutil.iter_modules(__path__):
        if not _module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{_module.name}")
else:  # imported by fairseq's --user-dir: register through the package, once
    importlib.import_module("phenomt.fairseq_ext")
