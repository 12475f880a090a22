"""Sentence-id files: 1-based line numbers that select the lines of a corpus, such as the
``.ids`` file of a challenge set (one id a line, strictly ascending)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TypeVar

from phenomt.core.io import InputError, read_lines

#: what a selected line is: a sentence, or a score kept per sentence
Line = TypeVar("Line")


def read_ids(path: str | os.PathLike[str]) -> list[int]:
    """The 1-based sentence ids of a ``.ids`` file: positive, strictly ascending integers."""
    ids: list[int] = []
    for number, line in enumerate(read_lines(path), start=1):
        text = line.strip()
        if not text.isdigit() or int(text) < 1:
            raise InputError(path, f"expected a positive sentence id, got {line!r}", number)
        if ids and int(text) <= ids[-1]:
            raise InputError(path, f"ids must be strictly ascending: {text} after {ids[-1]}",
                             number)
        ids.append(int(text))
    return ids


def select_lines(lines: Sequence[Line], ids: Iterable[int],
                 ids_path: str | os.PathLike[str] = "<ids>",
                 lines_path: str | os.PathLike[str] = "<lines>") -> list[Line]:
    """The lines at the 1-based ``ids``; an id outside the lines is an :class:`InputError`."""
    selected: list[Line] = []
    for number, sentence_id in enumerate(ids, start=1):
        if not 1 <= sentence_id <= len(lines):
            raise InputError(ids_path, f"sentence id {sentence_id} is outside {lines_path}, "
                                       f"which has {len(lines)} lines", number)
        selected.append(lines[sentence_id - 1])
    return selected
