"""Property-based tests of ``phenomt evaluate``'s input checks: whatever names, bytes and line
counts it is given, it either refuses them with status 2 and an ``error:`` line, or accepts
them; it never ends in a traceback, never writes outside its output folder, and never starts
anything for input it refuses. Snakemake is replaced by a stand-in that records the call."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import phenomt.core.snakerun as snakerun
from phenomt.cli import main
from phenomt.evaluate.checks import NAME

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
GOOD = ["Ein Satz, der lang genug ist, um erkannt zu werden.",
        "Noch ein Satz mit etwas mehr Inhalt als zuvor.",
        "Der dritte Satz beschreibt das Wetter in Berlin."]
GOOD_EN = ["A sentence that is long enough to be recognised.",
           "Another sentence with a little more content than before.",
           "The third sentence describes the weather in Berlin."]


class Started(Exception):
    """Snakemake would have been started."""


def _run(root: Path, args: list[str], monkeypatch_run) -> tuple[int, str, list]:
    """``phenomt evaluate args`` in ``root`` (output folder ``root/out``): status, stderr and
    the calls Snakemake would have had."""
    calls: list = []

    def fake(cmd, *a, **k):
        calls.append(cmd)
        raise Started

    monkeypatch_run(fake)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(["evaluate", *args, "--outdir", str(root / "out"), "--no-ldd",
                           "--no-report"])
        except SystemExit as stop:
            status = stop.code
        except Started:
            status = "started"
    return status, err.getvalue(), calls


def _files(root: Path, src: bytes, ref: bytes, hyp: bytes) -> list[str]:
    for name, data in (("t.de", src), ("t.en", ref), ("h.en", hyp)):
        (root / name).write_bytes(data)
    return ["--src", str(root / "t.de"), "--ref", str(root / "t.en"), "--langs", "de-en"]


def _outside(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")
            if p.relative_to(root).parts[0] != "out"}


def _lines(lines: list[str]) -> bytes:
    return "".join(f"{line}\n" for line in lines).encode("utf-8")


@pytest.fixture
def patch_run(monkeypatch):
    # set anew for every example (each records its own calls)
    return lambda fake: monkeypatch.setattr(snakerun, "run", fake)


def _check(status, err: str, calls: list, before: set[str], root: Path) -> None:
    assert "Traceback" not in err
    assert _outside(root) == before  # nothing written outside the output folder
    if status == 2:
        assert "error:" in err and not calls
        assert not (root / "out").exists()  # nothing a rerun would trust
    else:
        assert status == "started" and len(calls) == 1


@SETTINGS
@given(name=st.text(min_size=0, max_size=80))
def test_any_system_name_is_refused_or_used_as_data(name, patch_run):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        args = _files(root, _lines(GOOD), _lines(GOOD_EN), _lines(GOOD_EN))
        before = _outside(root)
        status, err, calls = _run(root, [*args, "--hyp", f"{name}={root / 'h.en'}"], patch_run)
        _check(status, err, calls, before, root)
        assert (status == "started") == bool(NAME.fullmatch(name))
        if status == "started":  # the name is a key of the config, whatever YAML makes of it
            config = yaml.safe_load((root / "out" / "config.yaml").read_text("utf-8"))
            outputs = next(iter(config["systems"]["testsets"].values()))["outputs"]
            assert list(outputs) == [name]


@SETTINGS
@given(data=st.binary(max_size=400), role=st.sampled_from(["src", "ref", "hyp"]))
def test_any_bytes_in_any_file_never_give_a_traceback(data, role, patch_run):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        files = {"src": _lines(GOOD), "ref": _lines(GOOD_EN), "hyp": _lines(GOOD_EN), role: data}
        args = _files(root, files["src"], files["ref"], files["hyp"])
        before = _outside(root)
        status, err, calls = _run(root, [*args, "--hyp", f"x={root / 'h.en'}"], patch_run)
        _check(status, err, calls, before, root)


@SETTINGS
@given(counts=st.tuples(*[st.integers(min_value=0, max_value=6)] * 3))
def test_any_line_counts_are_refused_unless_they_agree(counts, patch_run):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        src, ref, hyp = ([text[i % 3] for i in range(n)] for text, n in
                         zip((GOOD, GOOD_EN, GOOD_EN), counts, strict=True))
        args = _files(root, _lines(src), _lines(ref), _lines(hyp))
        before = _outside(root)
        status, err, calls = _run(root, [*args, "--hyp", f"x={root / 'h.en'}"], patch_run)
        _check(status, err, calls, before, root)
        assert (status == "started") == (counts[0] == counts[1] == counts[2] > 0)
