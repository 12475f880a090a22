"""Reading and validating a config: the schema is the one place that holds every default."""

from __future__ import annotations

import os
from copy import deepcopy
from functools import lru_cache
from pathlib import Path
from typing import Any

from phenomt.core.io import InputError

#: The package's folder: ``src/phenomt`` in a checkout, ``site-packages/phenomt`` installed.
PACKAGE = Path(__file__).resolve().parents[1]
#: The Snakemake workflow (Snakefile, rules, schemas, report captions, conda env, profile).
#: It ships with the package: in a checkout ``src/phenomt/workflow`` is a link to the
#: top-level ``workflow/`` (so this is that folder), and a wheel holds a copy of it.
WORKFLOW = (PACKAGE / "workflow").resolve()
SNAKEFILE = WORKFLOW / "Snakefile"
#: The config schema, with a ``default:`` for every optional setting.
SCHEMA = WORKFLOW / "schemas" / "config.schema.yaml"
#: Every known corpus and download, once: configs name the corpora they use.
CATALOG = PACKAGE / "plan" / "catalog.yaml"


def checkout_root() -> Path | None:
    """The checkout the package runs from (an editable install, or ``src`` on the path), or
    ``None`` for a package installed from a wheel."""
    root = PACKAGE.parents[1]
    found = (root / "pyproject.toml").is_file() and (root / "workflow" / "Snakefile").is_file()
    return root if found else None


#: The project folder, against which the checked-in files a config names (its default
#: ``config/config.yaml``, its own folder manifests, a relative mirror and the default
#: ``../shared/data``) are found: the checkout the package runs from, else the working
#: directory (an installed package's user runs in their own project folder).
PROJECT_ROOT = checkout_root() or Path.cwd()
#: Corpus keys that say how much of a corpus a run uses, not what the corpus is: never in
#: the catalog, always the config's.
RUN_KEYS = ("limit", "documents", "document_step")


def load_yaml(path: str | Path) -> Any:
    """A YAML file's data (safe loading): through libyaml where PyYAML has it, which reads the
    catalog 6x faster than pure Python; every Snakemake process and ``evaluate`` read it.

    Bytes that are not UTF-8, or text that is not YAML, raise :class:`InputError` naming the
    file and the line."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line_start = data.rfind(b"\n", 0, err.start) + 1
        raise InputError(path, f"invalid UTF-8 at byte {err.start - line_start} of the line",
                         data.count(b"\n", 0, err.start) + 1) from None
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as err:
        raise InputError(path, f"not valid YAML: {_yaml_problem(err)}",
                         _yaml_line(err, text)) from None


def _yaml_problem(err: Exception) -> str:
    """What yaml says is wrong, in one line, without its own file and line marks."""
    problem = getattr(err, "problem", None)
    if getattr(err, "reason", None):  # a ReaderError: a character YAML refuses
        character = err.character
        code = character if isinstance(character, int) else ord(character)
        return f"unacceptable character #x{code:04x}: {err.reason}"
    if not problem:
        return " ".join(str(err).split())
    context = getattr(err, "context", None)
    return f"{problem} ({context})" if context else problem


def _yaml_line(err: Exception, text: str) -> int | None:
    """The 1-based line yaml found the problem on."""
    mark = getattr(err, "problem_mark", None)
    if mark is not None:
        return mark.line + 1
    position = getattr(err, "position", None)  # a ReaderError
    return text.count("\n", 0, position) + 1 if isinstance(position, int) else None


def read_catalog(path: str | Path = CATALOG) -> dict[str, dict[str, Any]]:
    """The data catalog: ``{"corpora": {...}, "downloads": {...}}``, a fresh copy each call
    (callers complete and change it), read from the file once per process.

    A download's ``manifest`` in the catalog is relative to the catalog's folder (the
    manifests are package data, ``phenomt/plan/manifests``) and is returned absolute, so that
    it is found wherever the package is installed; a config's own manifests stay relative to
    the project folder."""
    return deepcopy(_read_catalog(str(Path(path).resolve())))


@lru_cache(maxsize=4)
def _read_catalog(path: str) -> dict[str, dict[str, Any]]:
    catalog = load_yaml(path) or {}
    downloads = catalog.get("downloads") or {}
    for spec in downloads.values():
        if spec and spec.get("manifest"):
            spec["manifest"] = str(Path(path).parent / spec["manifest"])
    return {"corpora": catalog.get("corpora") or {}, "downloads": downloads}


def resolve_catalog(config: dict[str, Any], catalog: dict[str, dict] | None = None
                    ) -> dict[str, Any]:
    """``config`` with its corpora and downloads completed from the catalog, in place.

    A corpus the catalog knows is the catalog's entry with the config's keys over it (``{}``:
    as catalogued); one it does not know is the config's own. Every catalogued download is
    available, a config's own entry of the same name replacing it.

    What is not a mapping (a config, its corpora or downloads, a corpus) is left as given:
    the workflow resolves before it validates, and the schema refuses it naming the key.
    """
    if not isinstance(config, dict):
        return config
    catalog = read_catalog() if catalog is None else catalog
    corpora = config.get("corpora") or {}
    if isinstance(corpora, dict):
        config["corpora"] = {name: {**(catalog["corpora"].get(name) or {}), **(spec or {})}
                             if isinstance(spec or {}, dict) else spec
                             for name, spec in corpora.items()}
    downloads = config.get("downloads") or {}
    if isinstance(downloads, dict):
        config["downloads"] = {**catalog["downloads"], **downloads}
    return config


def compact_catalog(config: dict[str, Any], catalog: dict[str, dict] | None = None
                    ) -> dict[str, Any]:
    """The inverse of :func:`resolve_catalog`: the config with only what differs from the
    catalog (used to write generated configs)."""
    catalog = read_catalog() if catalog is None else catalog
    corpora = {}
    for name, spec in (config.get("corpora") or {}).items():
        base = catalog["corpora"].get(name)
        if base is None:
            corpora[name] = spec
            continue
        corpora[name] = {k: v for k, v in spec.items() if k in RUN_KEYS or base.get(k) != v}
        # a catalogued key this corpus does not have: null, the schema's "none"
        corpora[name].update({k: None for k in base if k not in spec})
    downloads = {name: spec for name, spec in (config.get("downloads") or {}).items()
                 if catalog["downloads"].get(name) != spec}
    compacted = {k: v for k, v in config.items() if k not in ("corpora", "downloads")}
    compacted["corpora"] = corpora
    if downloads:
        compacted["downloads"] = downloads
    return compacted


def validate_config(config: dict[str, Any], schema: str | Path = SCHEMA,
                    source: str | os.PathLike[str] = "config") -> dict[str, Any]:
    """Validate ``config`` in place and fill in the schema's defaults: the one validation of
    the workflow, ``evaluate`` and the plan's readers (:func:`validate_with_jsonschema`).

    Raises :class:`~phenomt.core.io.InputError` naming ``source`` (the config file) and the
    offending key by its JSON path.
    """
    from jsonschema import ValidationError

    try:
        validate_with_jsonschema(config, schema)
    except ValidationError as err:
        raise InputError(source, f"invalid config at {err.json_path}: "
                                 f"{_explain(err)}") from None
    check_baselines(config, source)
    return config


def _explain(err: Any) -> str:
    """jsonschema's message; for a corpus missing a required key whose name the catalog does
    not know (a misspelled catalog name, most often), what that means and the names near it."""
    path = list(err.absolute_path)
    if err.validator != "required" or len(path) != 2 or path[0] != "corpora":
        return err.message
    known = read_catalog()["corpora"]
    name = str(path[1])
    if name in known:
        return err.message
    import difflib

    near = difflib.get_close_matches(name, list(known), n=3)
    hint = f"; the catalog's nearest: {', '.join(map(repr, near))}" if near else ""
    return (f"corpus {name!r} is not in the data catalog (phenomt/plan/{CATALOG.name}) and "
            f"is not declared in full in the config ({err.message}){hint}")


def check_baselines(config: dict[str, Any], source: str | os.PathLike[str]) -> None:
    """A test set's baseline must be one of its outputs (the schema cannot say so)."""
    testsets = (config.get("systems") or {}).get("testsets") or {}
    for name, spec in testsets.items():
        if spec.get("baseline") and spec["baseline"] not in spec["outputs"]:
            raise InputError(source, f"invalid config at $.systems.testsets.{name}.baseline: "
                                     f"{spec['baseline']!r} is not one of its outputs "
                                     f"({', '.join(spec['outputs'])})")


def validate_with_jsonschema(config: dict[str, Any], schema: str | Path = SCHEMA
                             ) -> dict[str, Any]:
    """Validate against the 2020-12 schema and fill in each missing property's default on the
    way down, as Snakemake's ``validate(..., set_default=True)`` does (the same config for
    every shipped one, tests/test_configs.py), without importing Snakemake (0.3 s). Raises
    jsonschema's ``ValidationError``."""
    from jsonschema import Draft202012Validator, validators

    schema_doc = load_yaml(schema)
    check_properties = Draft202012Validator.VALIDATORS["properties"]

    def fill_defaults(validator, properties, instance, subschema):
        if isinstance(instance, dict):
            for name, spec in properties.items():
                if "default" in spec:
                    instance.setdefault(name, spec["default"])
        yield from check_properties(validator, properties, instance, subschema)

    filling = validators.extend(Draft202012Validator, {"properties": fill_defaults})
    filling(schema_doc).validate(config)
    return config


def load_config(path: str | Path, validate: bool = True) -> dict[str, Any]:
    """Read a YAML config file with its catalog entries resolved, validated and with defaults
    filled in unless ``validate`` is false."""
    data = load_yaml(path)
    if data is not None and not isinstance(data, dict):
        raise InputError(path, f"a config is a mapping of settings, not a "
                               f"{type(data).__name__}", 1)
    config = resolve_catalog(data or {})
    return validate_config(config, source=path) if validate else config
