"""Copies of an evaluation's input files in its output folder, rewritten only when their
content changes.

Snakemake decides what to rerun from file times. A file replaced by one with other content
but an older time (``cp -p``, ``rsync -a``, ``touch -d``) would leave the old numbers in
place. The workflow therefore reads these copies: a copy is written (with a fresh time) when
the content of its original differs from it, and left alone otherwise, so changed content
always reruns the jobs that read it and unchanged content reruns nothing.

A copy holds exactly the bytes that were checked: the checks hand over the bytes they read
(``contents``), or the digest of the file before they read it (``digests``), which the bytes
copied must still have; a file that changed in between is refused, before any copy is
written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from phenomt.core.io import InputError, atomic_write

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


def sync(copies: Iterable[Copy], contents: dict[str, bytes] | None = None,
         digests: dict[str, str] | None = None) -> list[str]:
    """Write each copy whose content differs from ``contents[role]`` (the bytes the checks
    read, or bytes made from them, e.g. document ids taken out of another layout), else from
    its original, whose bytes must then have ``digests[role]`` where given (the file as it
    was checked): a file changed since is refused with InputError before anything is
    written. Returns the roles written. Each write is atomic."""
    planned = []
    for item in copies:
        data = (contents or {}).get(item.role)
        if data is None:
            data = item.original.read_bytes()
            expected = (digests or {}).get(item.role)
            if expected is not None and hashlib.sha256(data).hexdigest() != expected:
                raise InputError(item.original, "changed while it was checked: run again "
                                                "once the file is complete")
        planned.append((item, data))
    written = []
    for item, data in planned:
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
    """The originals an earlier run in ``outdir`` recorded (role -> path), or {}; a record
    that is not one (cut short, another layout) raises InputError naming it."""
    path = outdir / INPUTS / ORIGINS
    if not path.is_file():
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, UnicodeDecodeError, ValueError):
        record = None
    if not isinstance(record, dict) or not all(
            isinstance(role, str) and isinstance(original, str) and original
            for role, original in record.items()):
        raise InputError(path, "not a config written by phenomt evaluate: give another "
                               "--outdir")
    return {role: Path(original) for role, original in record.items()}
