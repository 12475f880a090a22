"""The document-folder layout of the released lexical-consistency test set (Lei et al. 2024),
which every document-level test set of the project is also written in.

A folder holds ``zh2en_token/test-N.txt`` (tokenized ``zh ||| en`` pairs, one a line),
optionally ``zh2en_raw/test-N.txt`` (the same pairs untokenized) and ``res/test-N.txt``
(annotated chains). Documents are the files ``test-1`` … ``test-n`` in numeric order. The
chain layer is read by :mod:`phenomt.lexcons.testset`; this module reads what a corpus needs.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from phenomt.core.io import InputError, atomic_directory, read_lines

T = TypeVar("T")

TOKEN_DIR = "zh2en_token"
RAW_DIR = "zh2en_raw"
CHAIN_DIR = "res"
SEPARATOR = " ||| "
_NAME = re.compile(r"test-([1-9][0-9]*)\.txt")


def document_names(folder: Path) -> list[str]:
    """``test-1`` … ``test-n`` found in ``folder``, in numeric order; gaps are an error."""
    if not folder.is_dir():
        raise InputError(folder, "folder not found")
    numbers = {}
    for path in folder.iterdir():
        match = _NAME.fullmatch(path.name)
        if match is None:
            raise InputError(path, "unexpected file: documents are named test-N.txt")
        numbers[int(match.group(1))] = path.stem
    ordered = sorted(numbers)  # numeric, so test-10 follows test-9
    if ordered != list(range(1, len(ordered) + 1)):
        missing = sorted(set(range(1, max(ordered, default=0) + 1)) - set(ordered))
        raise InputError(folder, f"documents must be test-1 … test-n without gaps; missing "
                                 f"test-{missing[0]}")
    if not ordered:
        raise InputError(folder, "no test-N.txt documents")
    return [numbers[n] for n in ordered]


def split_pair(line: str, path: Path, number: int) -> tuple[str, str]:
    """The two sides of a ``zh ||| en`` line."""
    parts = line.split(SEPARATOR)
    if len(parts) != 2:
        found = "no" if len(parts) == 1 else f"{len(parts) - 1}"
        raise InputError(path, f"expected one ' ||| ' between source and target, found {found}",
                         number)
    return parts[0], parts[1]


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """All ``zh ||| en`` lines of one file."""
    return [split_pair(line, path, n) for n, line in enumerate(read_lines(path), start=1)]


def read_corpus(root: str | Path, layer: str = RAW_DIR
                ) -> tuple[list[str], list[str], list[str]]:
    """Source lines, reference lines and the document name (``test-N``) of every line, all
    documents in order: the folder read as a parallel corpus with document ids."""
    folder = Path(root) / layer
    src: list[str] = []
    ref: list[str] = []
    ids: list[str] = []
    for name in document_names(folder):
        for zh, en in read_pairs(folder / f"{name}.txt"):
            src.append(zh)
            ref.append(en)
            ids.append(name)
    return src, ref, ids


def sample_documents(names: Sequence[T], documents: int | None, step: int | None,
                     source: str | Path) -> list[T]:
    """Every ``step``-th of the documents ``names`` in order (the 1st, the (step+1)-th, ...),
    then the first ``documents`` of those; an error naming ``source`` when fewer remain."""
    kept = list(names[::step or 1])
    if documents is None:
        return kept
    if documents > len(kept):
        taken = f", so {len(kept)} at step {step};" if step and step > 1 else ","
        raise InputError(source, f"has {len(names)} documents{taken} {documents} were asked "
                                 "for")
    return kept[:documents]


def copy_documents(root: str | Path, output: str | Path, documents: int | None,
                   step: int | None = None) -> int:
    """Copy every ``step``-th document (all with ``None``), then the first ``documents`` of
    those, of every layer of a folder into ``output``, written whole or not at all; returns
    the number copied. The copies are numbered ``test-1`` … again, as the layout requires."""
    root = Path(root)
    names = sample_documents(document_names(root / TOKEN_DIR), documents, step, root)
    with atomic_directory(output) as partial:
        for layer in (TOKEN_DIR, RAW_DIR, CHAIN_DIR):
            if not (root / layer).is_dir():
                continue
            (partial / layer).mkdir()
            for number, name in enumerate(names, start=1):
                shutil.copyfile(root / layer / f"{name}.txt",
                                partial / layer / f"test-{number}.txt")
    return len(names)
