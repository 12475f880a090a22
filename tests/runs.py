"""Helpers for the tests that run the whole tiny config: comparing two finished runs, and
starting a run that a test then kills."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.conftest import ROOT, SNAKEMAKE

#: Tables made of measured times (decoding speed, training time): they differ between any two
#: runs, so comparisons leave them out. Found by diffing the tables of two runs of one commit.
TIMING_TABLES = ("nat_speed", "training")


def differing_tables(reference: Path, other: Path,
                     only: Callable[[str], bool] | None = None) -> list[str]:
    """Files of ``results/tables/`` that differ byte for byte between two run folders, or
    that only one of them has; timing tables aside, and with ``only`` the files it accepts.
    Empty when the runs agree."""
    ref_dir, other_dir = reference / "results" / "tables", other / "results" / "tables"
    names = {p.name for p in ref_dir.iterdir()} | {p.name for p in other_dir.iterdir()}
    differing = []
    for name in sorted(names):
        if name.split(".", 1)[0] in TIMING_TABLES or (only is not None and not only(name)):
            continue
        ref_file, other_file = ref_dir / name, other_dir / name
        if not (ref_file.is_file() and other_file.is_file()) or (
                ref_file.read_bytes() != other_file.read_bytes()):
            differing.append(name)
    return differing


def start_snakemake(*args: str, log: Path, cwd: Path = ROOT) -> subprocess.Popen:
    """Start the workflow like :func:`tests.conftest.run_snakemake`, in a new session, so
    that :func:`kill_group` can kill Snakemake and every job it started at once. Its output
    goes to ``log``."""
    cmd = [SNAKEMAKE, "--snakefile", str(ROOT / "workflow" / "Snakefile"), *args]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    with open(log, "ab") as handle:
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=handle,
                                stderr=subprocess.STDOUT, start_new_session=True)


def kill_group(process: subprocess.Popen, timeout: float = 30) -> None:
    """``kill -9`` the process group of ``process`` (Snakemake and its jobs) and wait until
    none of its processes is left, so that nothing writes into the run folder afterwards."""
    pgid = process.pid  # the leader of its own session and group
    os.killpg(pgid, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + timeout
    while _group_members(pgid):
        if time.monotonic() > deadline:
            raise RuntimeError(f"processes of group {pgid} survived SIGKILL: "
                               f"{_group_members(pgid)}")
        time.sleep(0.1)


def _group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes whose process group is ``pgid``."""
    return [pid for pid, fields in live_processes() if int(fields[2]) == pgid]


def children(ppid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``ppid``."""
    return [pid for pid, fields in live_processes() if int(fields[1]) == ppid]


def live_processes() -> Iterator[tuple[int, list[str]]]:
    """Every live (not zombie) process: its id and the fields of its ``/proc/PID/stat`` after
    the command ("state ppid pgrp ...": the command may hold spaces)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            yield int(entry.name), fields
