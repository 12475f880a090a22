"""Shared fixtures: paths to the project and the offline data mirror."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def mirror_dir() -> Path | None:
    """The project's own mirror discovery: $PHENOMT_MIRROR, then ../shared/data."""
    from phenomt.core.fetch import find_mirror

    return find_mirror(None, ROOT)


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The offline data mirror. Tests that need it skip without one, unless
    $PHENOMT_REQUIRE_MIRROR is set (CI sets it), which turns the skip into a failure."""
    path = mirror_dir()
    if path is None:
        message = "no data mirror (../shared/data or $PHENOMT_MIRROR)"
        if os.environ.get("PHENOMT_REQUIRE_MIRROR"):
            pytest.fail(message + ", and PHENOMT_REQUIRE_MIRROR is set")
        pytest.skip(message)
    return path
