"""Copies of an evaluation's input files in its output folder, rewritten only when their
content changes.

Snakemake decides what to rerun from file times. A file replaced by one with other content
but an older time (``cp -p``, ``rsync -a``, ``touch -d``) would leave the old numbers in
place. The workflow therefore reads these copies: a copy is written (with a fresh time) when
the content of its original differs from it, and left alone otherwise, so changed content
always reruns the jobs that read it and unchanged content reruns nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from phenomt.core.io import atomic_write

#: The folder of the copies inside the output folder, and the record of their originals.
INPUTS = "inputs"
ORIGINS = "origins.json"
CHUNK = 1 << 20


def digest(path: Path) -> str:
    """The sha256 of a file's bytes."""
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(CHUNK):
            sha.update(block)
    return sha.hexdigest()


@dataclass(frozen=True)
class Copy:
    """One input: its role (``source``, ``hyp/NAME`` ...), original and copy."""

    role: str
    original: Path
    copy: Path


def plan_copies(outdir: Path, roles: Iterable[tuple[str, Path]]) -> list[Copy]:
    """Where each ``(role, original)`` is copied in ``outdir``: ``inputs/<role>.txt``."""
    return [Copy(role, original, outdir / INPUTS / f"{role}.txt") for role, original in roles]


def sync(copies: Iterable[Copy], contents: dict[str, bytes] | None = None) -> list[str]:
    """Write each copy whose content differs from its original (or from ``contents[role]``,
    bytes made from the original, e.g. document ids taken out of another layout); returns
    the roles written. Each write is atomic."""
    written = []
    for item in copies:
        data = (contents or {}).get(item.role)
        if data is None:
            data = item.original.read_bytes()
        if item.copy.is_file() and item.copy.read_bytes() == data:
            continue
        with atomic_write(item.copy, "wb") as out:
            out.write(data)
        written.append(item.role)
    return written


def write_origins(outdir: Path, copies: Iterable[Copy]) -> None:
    """Record each copy's original path, so that a later run finds the same files."""
    record = {item.role: str(item.original) for item in copies}
    with atomic_write(outdir / INPUTS / ORIGINS) as out:
        json.dump(record, out, indent=2, sort_keys=True, ensure_ascii=False)


def read_origins(outdir: Path) -> dict[str, Path]:
    """The originals an earlier run in ``outdir`` recorded (role -> path), or {}."""
    path = outdir / INPUTS / ORIGINS
    if not path.is_file():
        return {}
    with open(path, encoding="utf-8") as handle:
        return {role: Path(original) for role, original in json.load(handle).items()}
