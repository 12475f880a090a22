"""Shared fixtures: paths to the project and the offline data mirror."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
# No test reads or fills a user's cache of parses and aligner models (``phenomt evaluate``
# keeps one in ~/.cache/phenomt by default): a cached result would change what a test's jobs
# do. The cache's own tests give theirs.
os.environ["PHENOMT_CACHE"] = ""
TINY_CONFIG = ROOT / ".test" / "config" / "tiny.yaml"
SNAKEMAKE = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"


def run_snakemake(*args: str, cwd: Path = ROOT, timeout: int = 900
                  ) -> subprocess.CompletedProcess:
    """Run the project's workflow with this interpreter's tools first on PATH (rules call
    ``phenomt`` and fairseq's scripts)."""
    cmd = [SNAKEMAKE, "--snakefile", str(ROOT / "workflow" / "Snakefile"), *args]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def error_of(capsys, *argv: object) -> str:
    """Run ``phenomt argv`` in this process: it must stop with status 2 and one ``error:``
    line, no traceback; returns stderr."""
    from phenomt.cli import run

    try:
        status = run([str(a) for a in argv])
    except SystemExit as stop:  # argparse
        status = stop.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert "error:" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err  # usage errors too (cli Parser)
    return err


def tiny_workdir(path: Path) -> Path:
    """Prepare ``path`` to run the checked-in tiny config (its tests/ paths resolve there)."""
    path.mkdir(parents=True, exist_ok=True)
    link = path / "tests"
    if not link.exists():
        link.symlink_to(ROOT / "tests")
    return path


def mirror_dir() -> Path | None:
    """The project's own mirror discovery: $PHENOMT_MIRROR, then ../shared/data."""
    from phenomt.core.fetch import find_mirror

    return find_mirror(None, ROOT)


#: Fixtures made once per pytest process and costly: under pytest-xdist (``make test`` runs
#: one worker per core) the tests that use one go to one worker, so it is made once.
SHARED_FIXTURES = {"tiny_run": "tiny-run", "slurm_cluster": "tiny-run",
                   "tiny_comet": "tiny-comet"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Work units for pytest-xdist's ``--dist loadgroup``: the tests of a shared fixture
    (:data:`SHARED_FIXTURES`) form one group and run first, as it is the longest; every
    other module is a group of its own, as its module-scoped fixtures (trained models,
    parses) would otherwise be made again in each worker. Without xdist the marks change
    nothing but the order: the shared run's tests first."""
    def group(item: pytest.Item) -> str:
        for name in getattr(item, "fixturenames", ()):
            if name in SHARED_FIXTURES:
                return SHARED_FIXTURES[name]
        return item.nodeid.split("::", 1)[0]

    groups = {id(item): group(item) for item in items}
    shared = set(SHARED_FIXTURES.values())
    items.sort(key=lambda item: groups[id(item)] not in shared)  # stable: order kept
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[id(item)]))


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


def require_fairseq() -> ModuleType:
    """fairseq, imported. Without it the test (or the module, at module level) skips, unless
    $PHENOMT_REQUIRE_FAIRSEQ is set (CI sets it): then a missing or broken fairseq fails."""
    try:
        return importlib.import_module("fairseq")
    except Exception as err:
        message = f"fairseq cannot be imported ({type(err).__name__}: {err})"
        if os.environ.get("PHENOMT_REQUIRE_FAIRSEQ"):
            pytest.fail(message + ", and PHENOMT_REQUIRE_FAIRSEQ is set", pytrace=False)
        if not isinstance(err, ImportError):
            raise  # a broken install is an error, as it was under pytest.importorskip
        pytest.skip(message, allow_module_level=True)


def require_long_runs(what: str) -> None:
    """Whole-pipeline reruns (the tiny config on a SLURM test cluster, a run killed and
    resumed) cost one more tiny run each: they run when $PHENOMT_LONG_TESTS is set."""
    if not os.environ.get("PHENOMT_LONG_TESTS"):
        pytest.skip(f"{what}: a further run of the tiny config; set PHENOMT_LONG_TESTS=1")


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory, mirror) -> Path:
    """One complete local run of the tiny config, shared by every test that needs finished
    results (the end-to-end checks, the cluster, fault and report tests compare against it).
    Returns its working directory (``results/`` inside)."""
    require_fairseq()
    workdir = tiny_workdir(tmp_path_factory.mktemp("tiny-run"))
    # The timeout only guards against a hang; benchmarks/stage_times.py reports the time.
    result = run_snakemake("--cores", "2", "--configfile", str(TINY_CONFIG),
                           "--directory", str(workdir), timeout=2400)
    assert result.returncode == 0, result.stderr[-5000:]
    return workdir


@pytest.fixture(scope="session")
def tiny_comet(tmp_path_factory) -> Path:
    """A COMET-architecture model folder built here (tests/comet_tiny.py); skips without the
    comet extra, unless $PHENOMT_REQUIRE_COMET is set (CI installs it)."""
    import importlib.util

    if importlib.util.find_spec("comet") is None:
        message = "unbabel-comet not installed (pip install 'phenomt[comet]')"
        if os.environ.get("PHENOMT_REQUIRE_COMET"):
            pytest.fail(message + ", and PHENOMT_REQUIRE_COMET is set")
        pytest.skip(message)
    from tests.comet_tiny import SENTENCES, build_tiny_comet

    return build_tiny_comet(tmp_path_factory.mktemp("comet"), SENTENCES)
