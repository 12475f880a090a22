"""The checked-in configs: the tiny one is generated, every mirrored download is pinned."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from phenomt.core.fetch import sha256_of
from tests.conftest import ROOT

CONFIGS = sorted([*(ROOT / "config").glob("*.yaml"), *(ROOT / "config" / "papers").glob("*.yaml"),
                  *(ROOT / ".test" / "config").glob("*.yaml")])


def test_tiny_config_is_generated_from_the_default():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_configs.py"),
                             "--check"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_mirrored_download_has_its_sha256(config: Path, mirror: Path):
    """A download the mirror serves must record the checksum of the mirror's copy."""
    downloads = yaml.safe_load(config.read_text(encoding="utf-8"))["downloads"]
    checked = 0
    for name, spec in downloads.items():
        path = mirror / spec["mirror"] if spec.get("mirror") else None
        if path is None or not path.is_file():
            continue
        assert spec.get("sha256"), f"{config.name}: download {name!r} has no sha256"
        assert sha256_of(path) == spec["sha256"], f"{config.name}: {name!r} does not match"
        checked += 1
    assert checked or "papers" in config.parts
