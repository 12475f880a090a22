"""Reading and validating a config: the schema is the one place that holds every default."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The config schema, with a ``default:`` for every optional setting.
SCHEMA = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"


def validate_config(config: dict[str, Any], schema: str | Path = SCHEMA) -> dict[str, Any]:
    """Validate ``config`` in place and fill in the schema's defaults (as the Snakefile does).

    Raises snakemake's ``WorkflowError`` naming the offending key.
    """
    from snakemake.utils import validate

    validate(config, str(schema), set_default=True)
    return config


def load_config(path: str | Path, validate: bool = True) -> dict[str, Any]:
    """Read a YAML config file, validated and with defaults filled in unless ``validate``
    is false (the Snakefile validates with Snakemake's own call)."""
    import yaml

    with open(path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle) or {}
    return validate_config(config) if validate else config
