"""The checked-in configs: the tiny one is generated, every mirrored download is pinned."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from phenomt.core.fetch import sha256_of
from phenomt.core.io import InputError
from phenomt.plan.config import compact_catalog, load_config, read_catalog, resolve_catalog
from tests.conftest import ROOT, run_snakemake

CONFIGS = sorted([*(ROOT / "config").glob("*.yaml"), *(ROOT / "config" / "papers").glob("*.yaml"),
                  *(ROOT / ".test" / "config").glob("*.yaml")])


def test_tiny_config_is_generated_from_the_default():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_configs.py"),
                             "--check"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr


def _check_mirrored(name: str, downloads: dict, mirror: Path) -> int:
    checked = 0
    for download, spec in downloads.items():
        path = mirror / spec["mirror"] if spec.get("mirror") else None
        if path is None or not path.is_file():
            continue
        assert spec.get("sha256"), f"{name}: download {download!r} has no sha256"
        assert sha256_of(path) == spec["sha256"], f"{name}: {download!r} does not match"
        checked += 1
    return checked


def test_every_mirrored_download_of_the_catalog_has_its_sha256(mirror: Path):
    """A download the mirror serves must record the checksum of the mirror's copy."""
    assert _check_mirrored("catalog", read_catalog()["downloads"], mirror) > 50


def test_every_download_of_the_catalog_states_its_licence():
    downloads = read_catalog()["downloads"]
    unstated = [name for name, spec in downloads.items() if not spec.get("licence")]
    assert not unstated
    # the mirror's README: Multi30k is for non-commercial research, TED talks are BY-NC-ND
    assert "non-commercial" in downloads["multi30k.train.de"]["licence"]
    assert "CC BY-NC-ND" in downloads["iwslt14.test.de"]["licence"]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_configs_own_downloads_have_their_sha256(config: Path, mirror: Path):
    downloads = yaml.safe_load(config.read_text(encoding="utf-8")).get("downloads") or {}
    _check_mirrored(config.name, downloads, mirror)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_config_names_catalogued_or_complete_corpora(config: Path):
    """Each corpus is the catalog's (with overrides) or complete in the config, and every
    download a corpus uses is known."""
    resolved = load_config(config)
    for name, corpus in resolved["corpora"].items():
        for lang in corpus["langs"]:
            assert corpus["files"][lang]["download"] in resolved["downloads"], (config, name)


def test_resolving_and_compacting_the_catalog_are_inverse():
    catalog = {"corpora": {"c": {"label": "C", "langs": ["de", "en"], "split": "train",
                                 "docids": {"format": "x"}}},
               "downloads": {"d": {"url": "u", "sha256": "s", "mirror": "m"}}}
    config = {"seed": 1, "corpora": {"c": {"limit": 5, "split": "test"}, "own": {"label": "O"}},
              "downloads": {"e": {"url": "v"}}}
    resolved = resolve_catalog(config.copy(), catalog)
    assert resolved["corpora"]["c"] == {"label": "C", "langs": ["de", "en"], "split": "test",
                                        "docids": {"format": "x"}, "limit": 5}
    assert resolved["corpora"]["own"] == {"label": "O"}
    assert set(resolved["downloads"]) == {"d", "e"}
    # a catalogued key a config's corpus lacks is written as null
    resolved["corpora"]["c"].pop("docids")
    compact = compact_catalog(resolved, catalog)
    assert compact["corpora"] == {"c": {"limit": 5, "split": "test", "docids": None},
                                  "own": {"label": "O"}}
    assert compact["downloads"] == {"e": {"url": "v"}}


def test_the_default_config_stays_readable():
    assert len((ROOT / "config" / "config.yaml").read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.name)
def test_validation_without_snakemake_fills_the_same_defaults(config: Path):
    """A node without Snakemake (the GPU check's) validates through jsonschema alone: the same
    config, defaults included, for every shipped config; and the same refusal."""
    from jsonschema import ValidationError
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    from phenomt.plan.config import SCHEMA, validate_with_jsonschema

    with open(config, encoding="utf-8") as handle:
        raw = resolve_catalog(yaml.safe_load(handle) or {})
    expected = yaml.safe_load(yaml.safe_dump(raw))
    validate(expected, str(SCHEMA), set_default=True)
    assert validate_with_jsonschema(raw) == expected
    broken = {**raw, "seed": "one"}
    with pytest.raises(ValidationError, match="'one' is not of type 'integer'"):
        validate_with_jsonschema(broken)
    with pytest.raises(WorkflowError):
        validate(broken, str(SCHEMA), set_default=True)


def test_an_invalid_config_is_refused_naming_its_file_and_key(tmp_path: Path):
    """One validation for the plan's readers and the workflow: the error names the config file
    and the offending key by its JSON path."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    config["ldd"]["parse_shards"] = "two"
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    with pytest.raises(InputError, match=r"broken\.yaml: invalid config at \$\.ldd\."
                                         r"parse_shards: 'two' is not of type 'integer'"):
        load_config(path)
    result = run_snakemake("-n", "--configfile", str(path), "--directory", str(tmp_path))
    assert result.returncode != 0
    assert f"{path}: invalid config at $.ldd.parse_shards" in result.stdout + result.stderr
