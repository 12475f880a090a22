"""The manual-validation sheet of the LDD challenge sets.

**Manual-validation sheet** (``phenomt ldd sheet export|import``): a TSV (tab-separated, with
csv quoting) of :data:`SHEET_COLUMNS`, N random sentences of every set, sampled with a seed
per set, with an empty ``correct`` column to fill with y/n, yes/no or 1/0. Importing reports
the precision (correct / annotated) per direction and phenomenon.
"""

from __future__ import annotations

import csv
import io
import os
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from phenomt.core import papers
from phenomt.core.bins import parse_bin
from phenomt.core.conllu import read_conllu
from phenomt.core.io import (
    InputError,
    atomic_write,
    read_lines,
)
from phenomt.core.lazy import pandas as pd
from phenomt.core.tables import format_number as _fmt
from phenomt.ldd.extract import LEXICAL_PHENOMENA, phenomenon_pairs, word_distance
from phenomt.ldd.sets import PHENOMENA, SetKey, check_parallel, read_ids
from phenomt.ldd.tables import PAPER, paper_count, paper_printed, sorted_frame

SHEET_COLUMNS: tuple[str, ...] = ("set", "corpus", "direction", "phenomenon", "bin",
                                  "sentence_id", "marked_source", "reference", "head",
                                  "dependent", "distance", "correct")
SHEET_TRUE = frozenset({"y", "yes", "1"})
SHEET_FALSE = frozenset({"n", "no", "0"})


def _clean(text: str) -> str:
    # One sheet row per sentence: line breaks inside a cell would confuse spreadsheet users.
    return " ".join(text.splitlines())


def sheet_rows(key: SetKey, prefix: str | os.PathLike[str], per_set: int, seed: int
               ) -> list[dict[str, str]]:
    """``per_set`` random sentences of the set at ``prefix`` (all if it has fewer), by id.

    The sample depends only on ``seed`` and the set name. Head and dependent words come from the
    set's ``.conllu`` (lexical sets; several instances are joined by `` | ``); reordering sets
    have none. A missing ``.ref`` leaves the reference empty.
    """
    if per_set < 1:
        raise ValueError("at least one sentence per set is needed")
    base = os.fspath(prefix)
    ids = read_ids(f"{base}.ids")
    marked = read_lines(f"{base}.src_marked")
    check_parallel([f"{base}.ids", f"{base}.src_marked"], [ids, marked])
    ref_path = Path(f"{base}.ref")
    refs = read_lines(ref_path) if ref_path.is_file() else [""] * len(ids)
    check_parallel([f"{base}.ids", ref_path], [ids, refs])
    conllu_path = Path(f"{base}.conllu")
    sentences = None
    if key.phenomenon in LEXICAL_PHENOMENA and conllu_path.is_file():
        sentences = read_conllu(conllu_path)
        if len(sentences) != len(ids):
            raise InputError(conllu_path, f"has {len(sentences)} sentences but {base}.ids has "
                                          f"{len(ids)} ids")
    rng = random.Random(f"{seed}/{key}")
    chosen = sorted(rng.sample(range(len(ids)), min(per_set, len(ids))))
    distance_bin = parse_bin(key.bin)
    rows = []
    for position in chosen:
        heads, dependents, distances = [], [], []
        if sentences is not None:
            sentence = sentences[position]
            for head, dependent in phenomenon_pairs(sentence, key.phenomenon):
                distance = word_distance(head, dependent)
                if distance_bin.admits(distance):
                    heads.append(sentence.word(head).form)
                    dependents.append(sentence.word(dependent).form)
                    distances.append(str(distance))
        rows.append({"set": str(key), **key.meta(), "sentence_id": str(ids[position]),
                     "marked_source": _clean(marked[position]), "reference": _clean(refs[position]),
                     "head": " | ".join(heads), "dependent": " | ".join(dependents),
                     "distance": " | ".join(distances), "correct": ""})
    return rows


def export_sheet(sets: Sequence[tuple[SetKey, str | os.PathLike[str]]],
                 output: str | os.PathLike[str], per_set: int, seed: int) -> int:
    """Write the validation sheet of ``sets`` (key and prefix) as TSV; returns the row count."""
    rows = [row for key, prefix in sets for row in sheet_rows(key, prefix, per_set, seed)]
    with atomic_write(output) as out:
        writer = csv.DictWriter(out, fieldnames=SHEET_COLUMNS, delimiter="\t",
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def parse_judgement(value: str) -> bool | None:
    """``True`` for y/yes/1, ``False`` for n/no/0 (any case), ``None`` for an empty cell."""
    text = value.strip().lower()
    if not text:
        return None
    if text in SHEET_TRUE:
        return True
    if text in SHEET_FALSE:
        return False
    raise ValueError(f"bad judgement {value!r}: write y/n, yes/no or 1/0")


def _sheet_text(path: str | os.PathLike[str]) -> str:
    """The text of a sheet, a spreadsheet's UTF-8 byte-order mark dropped; bytes that are not
    UTF-8 are an :class:`InputError` naming the file and line."""
    data = Path(path).read_bytes()
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line_start = data.rfind(b"\n", 0, err.start) + 1
        raise InputError(path, f"invalid UTF-8 at byte {err.start - line_start} of the line "
                               "(save the sheet as UTF-8 text)",
                         data.count(b"\n", 0, err.start) + 1) from None


def read_sheet(path: str | os.PathLike[str], allow_blank: bool = False
               ) -> list[dict[str, Any]]:
    """The rows of a filled sheet, ``correct`` parsed to ``True``/``False`` (``None`` = blank).

    A bad judgement, or a blank one unless ``allow_blank``, is an :class:`InputError` naming
    the file and line.
    """
    if not Path(path).is_file():
        raise InputError(path, "file not found")
    rows = []
    with io.StringIO(_sheet_text(path), newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = [c for c in ("set", "phenomenon", "direction", "correct")
                   if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(path, f"missing column(s) {', '.join(missing)}", 1)
        for row in reader:
            try:
                judgement = parse_judgement(row["correct"] or "")
            except ValueError as err:
                raise InputError(path, str(err), reader.line_num) from None
            if judgement is None and not allow_blank:
                raise InputError(path, "the 'correct' cell is empty", reader.line_num)
            rows.append({**row, "correct": judgement})
    return rows


def _corpus(row: Mapping[str, Any]) -> str:
    """The corpus of a sheet row: its own column, else the first part of the set name."""
    return row.get("corpus") or str(row["set"]).split("/")[0]


def _paper_validation(corpus: str, direction: str) -> str:
    """The paper's row of its manual validation: source language and corpus."""
    return f"manual-validation/{direction.split('-')[0]}/{corpus}"


def precision_table(rows: Sequence[Mapping[str, Any]]) -> tuple[pd.DataFrame, list[str]]:
    """Precision of the extracted instances per corpus, direction and phenomenon, per corpus
    and direction (beside the paper's, which is given per source language and corpus), and
    overall."""
    groups: dict[tuple[str, str, str], list[bool]] = {}
    blank = 0
    for row in rows:
        if row["correct"] is None:
            blank += 1
            continue
        key = (_corpus(row), row["direction"], row["phenomenon"])
        groups.setdefault(key, []).append(row["correct"])

    def line(corpus: str, direction: str, phenomenon: str, judged: list[bool],
             paper_row: str | None = None) -> dict:
        return {"corpus": corpus, "direction": direction, "phenomenon": phenomenon,
                "annotated": len(judged), "correct": sum(judged),
                "precision (%)": _fmt(100 * sum(judged) / len(judged), 1) if judged else None,
                "paper annotated": None if paper_row is None
                else paper_count("Section 4.3", paper_row),
                "paper precision (%)": None if paper_row is None
                else paper_printed("Section 4.3", paper_row, "precision")}

    def rank(phenomenon: str) -> int:
        return PHENOMENA.index(phenomenon) if phenomenon in PHENOMENA else len(PHENOMENA)

    table = []
    for corpus, direction in sorted({(c, d) for c, d, _ in groups}):
        mine = sorted((p for c, d, p in groups if (c, d) == (corpus, direction)),
                      key=lambda p: (rank(p), p))
        table += [line(corpus, direction, p, groups[(corpus, direction, p)]) for p in mine]
        table.append(line(corpus, direction, "all",
                          [j for p in mine for j in groups[(corpus, direction, p)]],
                          _paper_validation(corpus, direction)))
    table.append(line("all", "all", "all", [j for judged in groups.values() for j in judged]))
    source = papers.citation(PAPER, "Section 4.3")
    notes = [f"Precision = sentences judged correct / sentences annotated; {blank} blank "
             f"row{'s' if blank != 1 else ''} not counted.",
             f"Paper columns: {source}, the share of validated sentences that contain the "
             "target phenomenon, per source language and corpus (the rows 'all' of a corpus "
             "and direction); '—' where the paper gives none (it validated German sources "
             "on Books only, and gives no overall figure).",
             papers.comparability(PAPER, "Section 4.3", {
                 "test set": "the paper validated sentences spread evenly over phenomena and "
                             "a few exact distances ('over' its count for German); ours are a "
                             "seeded random sample of each configured set, whatever its bin",
                 "data": "our Books is the corpus this run was configured with"})]
    return sorted_frame(table), notes
