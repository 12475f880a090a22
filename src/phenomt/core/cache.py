"""phenomt's cache across runs: results that depend on nothing but the bytes of their inputs
and the version and settings of the tool that made them (UDPipe's parses, the aligner's
models), kept under the SHA-256 of all of those. A later run on the same inputs, in any output
folder, copies them instead of computing them again.

The cache is the folder ``$PHENOMT_CACHE`` (``phenomt evaluate`` sets it for its jobs, by
default ``~/.cache/phenomt``); unset or empty, nothing is cached. Each kind of result has a
subfolder (``udpipe/``, ``align/``). An entry appears under its final name only when it is
complete (a file by :func:`phenomt.core.io.atomic_write`, a folder by :func:`keep_folder`),
so a killed run never leaves one that looks whole; a reader still checks what it copies.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from phenomt.core.io import open_binary

#: The environment variable naming the cache folder; unset or empty: no cache.
CACHE_ENV = "PHENOMT_CACHE"


def folder(kind: str) -> Path | None:
    """The cache folder of one kind of result (``$PHENOMT_CACHE/<kind>``), or None."""
    root = os.environ.get(CACHE_ENV, "")
    return Path(root) / kind if root else None


def key(header: str, paths: Iterable[str | os.PathLike[str]]) -> str:
    """The SHA-256 of ``header`` (the tool's version and every setting that changes the
    result) and of each file's bytes (a gzip file's content), in order."""
    digest = hashlib.sha256(f"{header}\n".encode())
    for path in paths:
        with open_binary(path) as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes (as stored: no gunzipping)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def keep_folder(files: Iterable[str | os.PathLike[str]], entry: Path,
                texts: Mapping[str, str] | None = None) -> bool:
    """Copy ``files`` into the new cache folder ``entry``, and write ``texts`` (file name ->
    UTF-8 text) beside them; the folder appears whole or not at all: everything goes to a
    temporary folder beside it that is renamed to ``entry`` last. False
    where ``entry`` exists already (another run kept the same result first). Raises OSError
    where the cache cannot be written."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", suffix=".partial",
                                    dir=entry.parent))
    try:
        for path in files:
            shutil.copyfile(path, partial / Path(path).name)
        for name, text in (texts or {}).items():
            (partial / name).write_text(text, encoding="utf-8")
        try:
            os.rename(partial, entry)
        except OSError:
            if entry.is_dir():
                return False
            raise
        return True
    finally:
        shutil.rmtree(partial, ignore_errors=True)
