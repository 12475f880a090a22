"""The plan: the validated config turned into paths and settings for the Snakemake rules.

It sits on top of the package: the workflow (and the CLI where it must) imports it, nothing in
``core`` or a wing does.
"""

from phenomt.plan.base import Plan, load_config, shell_args

__all__ = ["Plan", "load_config", "shell_args"]
