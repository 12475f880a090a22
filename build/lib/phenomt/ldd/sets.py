"""Names of the long-distance-dependency (LDD) challenge sets and selection of their lines
(Choshen & Abend, CoNLL 2019).

The sets are the files written by :mod:`phenomt.ldd.extract`; a set is named by a :class:`SetKey`
``corpus/direction/phenomenon/bin``, for example ``news/de-en/particle/ge1``. ``direction`` is
``<source>-<target>``; ``bin`` is a :class:`~phenomt.ldd.extract.DistanceBin` label (``all``,
``ge<k>``, ``eq<k>``); reordering sets use ``reorder`` with the alignment threshold as their bin
(``ge5``); the full corpus, the baseline of every set, is ``<corpus>/<direction>/baseline/all``.

**Hypotheses of a set** are the full-corpus hypotheses at the set's ``.ids`` (1-based line
numbers): translating the full corpus once and selecting (:func:`select_lines`) gives the lines
a translation of the set would give, since every sentence is translated on its own (up to the
decoder's batching, which can change floating-point ties).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from phenomt.core.bins import parse_bin
from phenomt.core.io import (
    InputError,
    read_lines,
)
from phenomt.core.lineids import read_ids, select_lines
from phenomt.ldd.extract import LEXICAL_PHENOMENA, REORDER

BASELINE = "baseline"
PHENOMENA: tuple[str, ...] = (*LEXICAL_PHENOMENA, REORDER, BASELINE)
SCORE_SCHEMA = "phenomt.ldd.score/1"
#: Several score records in one file: ``{"schema": ..., "records": [<score record>, ...]}``.
SCORES_SCHEMA = "phenomt.ldd.scores/1"
CONTROL_SCHEMA = "phenomt.ldd.control/1"
_DIRECTION = re.compile(r"[a-z]{2,3}-[a-z]{2,3}")
@dataclass(frozen=True, slots=True, order=True)
class SetKey:
    """The name of a challenge set (or, with phenomenon ``baseline``, of the full corpus)."""

    corpus: str
    direction: str
    phenomenon: str
    bin: str

    def __post_init__(self) -> None:
        if not self.corpus or "/" in self.corpus or "=" in self.corpus:
            raise ValueError(f"bad corpus name {self.corpus!r}")
        if _DIRECTION.fullmatch(self.direction) is None:
            raise ValueError(f"bad direction {self.direction!r}: expected e.g. de-en")
        if self.phenomenon not in PHENOMENA:
            raise ValueError(f"unknown phenomenon {self.phenomenon!r}; "
                             f"choose from {', '.join(PHENOMENA)}")
        parse_bin(self.bin)
        if self.phenomenon == BASELINE and self.bin != "all":
            raise ValueError("the baseline (full corpus) has bin 'all'")

    @classmethod
    def parse(cls, text: str) -> SetKey:
        """Parse ``corpus/direction/phenomenon/bin``."""
        parts = text.split("/")
        if len(parts) != 4:
            raise ValueError(f"bad set name {text!r}: expected corpus/direction/phenomenon/bin")
        return cls(*parts)

    def __str__(self) -> str:
        return f"{self.corpus}/{self.direction}/{self.phenomenon}/{self.bin}"

    @property
    def source_lang(self) -> str:
        return self.direction.split("-")[0]

    def meta(self) -> dict[str, str]:
        """The key as the fields stored in score and control records."""
        return {"corpus": self.corpus, "direction": self.direction,
                "phenomenon": self.phenomenon, "bin": self.bin}


def parse_assignment(text: str) -> tuple[SetKey, str]:
    """Parse ``corpus/direction/phenomenon/bin=PATH``."""
    name, sep, path = text.partition("=")
    if not sep or not path:
        raise ValueError(f"bad set assignment {text!r}: expected corpus/direction/phenomenon/"
                         f"bin=PATH")
    return SetKey.parse(name), path


def record_key(record: Mapping[str, Any]) -> SetKey:
    return SetKey(record["corpus"], record["direction"], record["phenomenon"], record["bin"])


def select_file(full_path: str | os.PathLike[str], ids_path: str | os.PathLike[str]
                ) -> list[str]:
    """The lines of a full-corpus file at the sentence ids of a ``.ids`` file."""
    return select_lines(read_lines(full_path), read_ids(ids_path), ids_path, full_path)


def check_selection(selected: Sequence[str], expected_path: str | os.PathLike[str]) -> None:
    """Fail unless ``selected`` equals the lines of ``expected_path`` (e.g. a set's ``.ref``).

    Guards against pairing a set with the wrong full corpus.
    """
    expected = read_lines(expected_path)
    if len(expected) != len(selected):
        raise InputError(expected_path, f"has {len(expected)} lines but the ids select "
                                        f"{len(selected)}")
    for number, (got, want) in enumerate(zip(selected, expected, strict=True), start=1):
        if got != want:
            raise InputError(expected_path, f"differs from the selected full-corpus line: "
                                            f"{want!r} against {got!r}", number)


def check_parallel(paths: Sequence[str | os.PathLike[str]], columns: Sequence[Sequence[str]]
                    ) -> None:
    if len({len(column) for column in columns}) > 1:
        detail = ", ".join(f"{p}: {len(c)} lines" for p, c in zip(paths, columns, strict=True))
        raise InputError(paths[0], f"parallel files differ in length ({detail})")
