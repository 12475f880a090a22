"""The published numbers of the four papers, one checked-in TSV per paper.

Every file has the columns ``table  row  column  value  citation`` and an optional ``note``;
``row`` and ``column`` use the keys described in this folder's README.md, so a table of ours
can be joined on them (:func:`beside`). Values are the printed numbers (percent without the
sign); ``printed`` keeps the text of the value, so a table can show the paper's precision.

pandas is imported only when a frame is asked for.
"""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from phenomt.core.io import InputError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import pandas as pd

#: Paper id (the data file's stem) -> full reference, for table notes.
PAPERS: dict[str, str] = {
    "choshen_abend_2019": (
        "Choshen & Abend (CoNLL 2019), 'Automatically Extracting Challenge Sets for Non-local "
        "Phenomena in Neural Machine Translation'"),
    "wang_nat": (
        "Wang, Wang, Su, Yao & Tu, 'On the Information Redundancy in Non-Autoregressive "
        "Translation'"),
    "lei_2024": (
        "Lei, Li, Tao & Yang (LREC-COLING 2024), 'Evaluation Dataset for Lexical Translation "
        "Consistency in Chinese-to-English Document-level Translation'"),
    "thesis_ch3": "Thesis chapter 3, 'Experiment Setup' (German-to-English datasets)",
}
REQUIRED = ("table", "row", "column", "value", "citation")
OPTIONAL = ("note",)
# Plain decimal numbers only: no thousands separators, no percent sign, no exponent.
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")

Key = tuple[str, str, str]
RowSpec = str | Callable[[Mapping[str, Any]], str]


@dataclass(frozen=True, slots=True)
class Entry:
    """One published number."""

    table: str
    row: str
    column: str
    value: float
    printed: str
    citation: str
    note: str
    line: int

    @property
    def key(self) -> Key:
        return (self.table, self.row, self.column)


def data_file(paper: str) -> Traversable:
    """The packaged TSV of ``paper``."""
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; choose from {', '.join(PAPERS)}")
    return resources.files(__name__).joinpath(f"{paper}.tsv")


def parse(text: str, path: str) -> tuple[Entry, ...]:
    """Parse and check the text of a data file; ``path`` names it in errors."""
    reader = csv.reader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(reader, None)
    if header is None or tuple(header) not in (REQUIRED, REQUIRED + OPTIONAL):
        raise InputError(path, f"header must be {' '.join(REQUIRED)} [note], got {header}", 1)
    entries: list[Entry] = []
    seen: dict[Key, int] = {}
    for number, fields in enumerate(reader, start=2):
        if len(fields) != len(header):
            raise InputError(path, f"{len(fields)} fields, expected {len(header)}", number)
        record = dict(zip(header, (field.strip() for field in fields), strict=True))
        for name in REQUIRED:
            if not record[name]:
                raise InputError(path, f"empty {name}", number)
        if _NUMBER.fullmatch(record["value"]) is None:
            raise InputError(path, f"value {record['value']!r} is not a plain number", number)
        entry = Entry(record["table"], record["row"], record["column"], float(record["value"]),
                      record["value"], record["citation"], record.get("note", ""), number)
        if entry.key in seen:
            raise InputError(path, f"duplicate key {entry.key} (first on line "
                                   f"{seen[entry.key]})", number)
        seen[entry.key] = number
        entries.append(entry)
    return tuple(entries)


@functools.cache
def entries(paper: str) -> tuple[Entry, ...]:
    """All numbers of ``paper``, checked; read once per process."""
    source = data_file(paper)
    return parse(source.read_text(encoding="utf-8"), str(source))


@functools.cache
def _index(paper: str) -> dict[Key, Entry]:
    return {entry.key: entry for entry in entries(paper)}


def load(paper: str) -> pd.DataFrame:
    """The numbers of ``paper`` as a frame: table, row, column, value, printed, citation,
    note."""
    import pandas as pd

    fields = ("table", "row", "column", "value", "printed", "citation", "note")
    return pd.DataFrame([[getattr(e, f) for f in fields] for e in entries(paper)],
                        columns=list(fields))


def entry(paper: str, table: str, row: str, column: str) -> Entry | None:
    """The full entry of one cell, or ``None`` when the paper has no such number."""
    return _index(paper).get((table, row, column))


def lookup(paper: str, table: str, row: str, column: str) -> float | None:
    """The paper's number in one cell, or ``None`` when the paper has no such number."""
    found = entry(paper, table, row, column)
    return None if found is None else found.value


def total(paper: str, table: str, rows: Iterable[str], column: str) -> float | None:
    """The sum of ``column`` over ``rows`` (e.g. test sets concatenated into one), or ``None``
    when any of them is missing."""
    values = [lookup(paper, table, row, column) for row in rows]
    return None if not values or None in values else sum(v for v in values if v is not None)


def _key(spec: RowSpec, record: Mapping[str, Any]) -> str:
    """A key for one row of ours: ``spec`` called on the row, or formatted with its fields."""
    return spec(record) if callable(spec) else spec.format_map(record)


def beside(ours: pd.DataFrame, paper: str, table: str, row: RowSpec,
           columns: Mapping[str, RowSpec], printed: bool = False) -> pd.DataFrame:
    """``ours`` with a ``paper <column>`` column right after each column named in ``columns``.

    ``row`` and the values of ``columns`` are templates formatted with each row's fields
    (``"{corpus}/{direction}/{phenomenon}/{bin}"``, ``"{model}"``) or callables taking the
    row as a mapping; a plain string without braces is a fixed paper column. Cells the paper
    does not have are missing. With ``printed`` the cells are the printed text (the paper's
    precision) instead of floats.
    """
    result = ours.copy()
    records = ours.to_dict("records")
    for ours_column, paper_column in columns.items():
        if ours_column not in result.columns:
            raise KeyError(f"no column {ours_column!r} in our table")
        cells = []
        for record in records:
            found = entry(paper, table, _key(row, record), _key(paper_column, record))
            cells.append(None if found is None else
                         (found.printed if printed else found.value))
        name = f"paper {ours_column}"
        if name in result.columns:
            result = result.drop(columns=name)
        values: list[Any] = cells if printed else [float("nan") if c is None else c
                                                   for c in cells]
        result.insert(result.columns.get_loc(ours_column) + 1, name, values)
    return result


def citation(paper: str, table: str) -> str:
    """The citation of ``table`` as the data file gives it."""
    for item in entries(paper):
        if item.table == table:
            return item.citation
    raise KeyError(f"{paper} has no {table!r}")


def comparability(paper: str, table: str, differences: Mapping[str, str] | None = None) -> str:
    """A table note saying whether our numbers are comparable with the paper's ``table``.

    ``differences`` maps an aspect (``scale``, ``data``, ``test set``, ...) to how our run
    differs; with none given the numbers are called directly comparable.
    """
    source = citation(paper, table)
    if not differences:
        return f"Paper numbers: {source}; ours are directly comparable."
    listed = "; ".join(f"{aspect}: {how}" for aspect, how in differences.items())
    return f"Paper numbers: {source}; not directly comparable with ours ({listed})."
