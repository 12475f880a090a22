"""Shared fixtures: paths to the project and the offline data mirror."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def mirror_dir() -> Path | None:
    env = os.environ.get("PHENOMT_MIRROR")
    candidate = Path(env) if env else ROOT.parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


@pytest.fixture
def mirror() -> Path:
    path = mirror_dir()
    if path is None:
        pytest.skip("no data mirror (../shared/data or $PHENOMT_MIRROR)")
    return path
