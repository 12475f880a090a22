"""How the size of the reordering challenge set depends on how its criterion is read.

The paper (Choshen & Abend 2019, Section 4.2) aligns each sentence pair with FastAlign and keeps
it when some aligned source and target tokens have indices differing by at least ``d = 5``;
Table 2 gives 306 of the 3,000 newstest2013 pairs. It leaves open which alignment is meant
(fast_align's forward output, the reverse model, a symmetrisation), whether links to
punctuation count, and its reference code compares strictly (``> d``). This module counts the
selected pairs under every combination, for a range of ``d``:

* alignment: ``forward``, ``reverse`` (both read in source-target orientation, as
  :mod:`phenomt.core.align` writes them), ``gdfa`` (grow-diag-final-and: the given file, or
  computed from forward and reverse with :func:`phenomt.core.align.grow_diag_final_and`) and
  ``intersection`` (links in both forward and reverse);
* punctuation: links ``kept``, or ``dropped`` when either end is a punctuation token
  (:func:`is_punctuation`); tokens are not renumbered, so distances stay those of the
  tokenized text the alignment was computed on;
* comparison: ``>=`` (the paper's wording) or ``>`` (the reference code).

A pair is selected when some remaining link ``(i, j)`` has ``|i - j|`` meeting the threshold;
indices are 0-based whitespace-token positions, as in :mod:`phenomt.ldd.extract`. The paper's
number is put beside the rows at its ``d`` when the corpus has the paper's size.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from phenomt.core import papers
from phenomt.core.align import grow_diag_final_and
from phenomt.core.cliargs import non_negative_int
from phenomt.core.io import InputError, atomic_write, read_lines, write_json
from phenomt.core.lazy import pandas as pd
from phenomt.core.tables import json_path, table_record, write_markdown
from phenomt.core.text import is_punctuation
from phenomt.ldd.extract import DEFAULT_REORDER_DISTANCE, parse_alignment

if TYPE_CHECKING:
    from phenomt.core.cliargs import CommandTree

Link = tuple[int, int]
Links = frozenset[Link]

ALIGNMENTS: tuple[str, ...] = ("forward", "reverse", "gdfa", "intersection")
PUNCTUATION: tuple[str, ...] = ("kept", "dropped")
COMPARISONS: tuple[str, ...] = (">=", ">")
DEFAULT_MIN, DEFAULT_MAX = 5, 15
PAPER = "choshen_abend_2019"
PAPER_TABLE = "Table 2"
PAPER_DISTANCE = DEFAULT_REORDER_DISTANCE
DEFAULT_PAPER_SET = "news/de-en"
COLUMNS: tuple[str, ...] = ("d", "alignment", "punctuation", "comparison", "selected",
                            "pairs", "percent", "paper")
NO_LINKS = -1  # maximum distance of a pair without links: never selected


def intersection(forward: Iterable[Link], reverse: Iterable[Link]) -> Links:
    """Links present in both directions (both given as source-target pairs)."""
    return frozenset(forward) & frozenset(reverse)


def drop_punctuation(links: Iterable[Link], src: Sequence[str], tgt: Sequence[str]) -> Links:
    """``links`` without those whose source or target token is punctuation."""
    return frozenset((i, j) for i, j in links
                     if not (is_punctuation(src[i]) or is_punctuation(tgt[j])))


def max_distance(links: Iterable[Link]) -> int:
    """The largest ``|i - j|`` over ``links``, or :data:`NO_LINKS` when there are none."""
    return max((abs(i - j) for i, j in links), default=NO_LINKS)


def meets(distance: int, d: int, comparison: str) -> bool:
    """Whether ``distance`` meets the threshold ``d`` under ``comparison`` (``>=`` or ``>``)."""
    if comparison == ">=":
        return distance >= d
    if comparison == ">":
        return distance > d
    raise ValueError(f"unknown comparison {comparison!r}; choose from {', '.join(COMPARISONS)}")


@dataclass(frozen=True)
class SentencePair:
    """One tokenized sentence pair with its forward, reverse and symmetrised links."""

    src: tuple[str, ...]
    tgt: tuple[str, ...]
    forward: Links
    reverse: Links
    gdfa: Links

    def links(self, alignment: str) -> Links:
        """The links of one alignment kind (see :data:`ALIGNMENTS`)."""
        if alignment == "intersection":
            return intersection(self.forward, self.reverse)
        if alignment in ("forward", "reverse", "gdfa"):
            return getattr(self, alignment)
        raise ValueError(f"unknown alignment {alignment!r}; choose from {', '.join(ALIGNMENTS)}")


def make_pair(src: Sequence[str], tgt: Sequence[str], forward: Iterable[Link],
              reverse: Iterable[Link], gdfa: Iterable[Link] | None = None) -> SentencePair:
    """A :class:`SentencePair`; without ``gdfa`` it is computed from forward and reverse."""
    forward, reverse = frozenset(forward), frozenset(reverse)
    if gdfa is None:
        gdfa = grow_diag_final_and(forward, reverse, len(src), len(tgt)) if src and tgt else ()
    return SentencePair(tuple(src), tuple(tgt), forward, reverse, frozenset(gdfa))


def max_distances(pairs: Sequence[SentencePair]) -> dict[tuple[str, str], list[int]]:
    """Per (alignment, punctuation) setting, every pair's largest link distance."""
    result: dict[tuple[str, str], list[int]] = {}
    for alignment in ALIGNMENTS:
        kept = [pair.links(alignment) for pair in pairs]
        dropped = [drop_punctuation(links, pair.src, pair.tgt)
                   for links, pair in zip(kept, pairs, strict=True)]
        result[(alignment, "kept")] = [max_distance(links) for links in kept]
        result[(alignment, "dropped")] = [max_distance(links) for links in dropped]
    return result


def reorder_grid(pairs: Sequence[SentencePair], min_d: int = DEFAULT_MIN,
                 max_d: int = DEFAULT_MAX, paper: float | None = None,
                 paper_d: int = PAPER_DISTANCE) -> pd.DataFrame:
    """Selected pairs for every d in ``min_d..max_d`` × alignment × punctuation × comparison.

    One row per combination with the columns :data:`COLUMNS`; ``paper`` holds ``paper`` on the
    rows with ``d == paper_d`` and is missing elsewhere.
    """
    if not 0 <= min_d <= max_d:
        raise ValueError(f"need 0 <= min <= max, got min {min_d} and max {max_d}")
    distances = max_distances(pairs)
    rows = []
    for d in range(min_d, max_d + 1):
        for (alignment, punctuation), values in distances.items():
            for comparison in COMPARISONS:
                selected = sum(meets(v, d, comparison) for v in values)
                rows.append((d, alignment, punctuation, comparison, selected, len(pairs),
                             round(100 * selected / len(pairs), 2) if pairs else float("nan"),
                             paper if paper is not None and d == paper_d else float("nan")))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _check_count(path: str | os.PathLike[str], count: int, other: str | os.PathLike[str],
                 other_count: int) -> None:
    if count != other_count:
        raise InputError(path, f"has {count} lines but {other} has {other_count}; they must "
                               f"correspond line by line")


def read_pairs(src_path: str | os.PathLike[str], tgt_path: str | os.PathLike[str],
               forward_path: str | os.PathLike[str], reverse_path: str | os.PathLike[str],
               gdfa_path: str | os.PathLike[str] | None = None) -> list[SentencePair]:
    """Read tokenized texts and their Pharaoh alignments into sentence pairs.

    Files must have one line per pair. A given grow-diag-final-and alignment must contain the
    intersection of forward and reverse on every line (symmetrisation starts from it), which
    catches files from different runs; without it, it is computed.
    """
    src, tgt = read_lines(src_path), read_lines(tgt_path)
    _check_count(tgt_path, len(tgt), src_path, len(src))
    paths = [forward_path, reverse_path] + ([gdfa_path] if gdfa_path is not None else [])
    columns = [read_lines(path) for path in paths]
    for path, column in zip(paths, columns, strict=True):
        _check_count(path, len(column), src_path, len(src))
    pairs = []
    for index, (source, target) in enumerate(zip(src, tgt, strict=True)):
        s, t = source.split(), target.split()
        links = [parse_alignment(column[index], len(s), len(t), path, index + 1)
                 for path, column in zip(paths, columns, strict=True)]
        pair = make_pair(s, t, *links)
        if gdfa_path is not None and not intersection(pair.forward, pair.reverse) <= pair.gdfa:
            raise InputError(gdfa_path, "lacks links that forward and reverse share; it is "
                                        "not the symmetrisation of the given alignments",
                             index + 1)
        pairs.append(pair)
    return pairs


def paper_size(paper_set: str | None, pairs: int) -> tuple[float | None, str]:
    """The paper's reordering-set size for ``paper_set`` (``corpus/direction``) and a note.

    The number is returned only when the corpus has as many pairs as the paper's full corpus,
    since a set size is comparable only on the same corpus.
    """
    if paper_set is None:
        return None, "No paper number: no paper set given."
    size = papers.lookup(PAPER, PAPER_TABLE, f"{paper_set}/reorder/ge{PAPER_DISTANCE}",
                         "sentences")
    total = papers.lookup(PAPER, PAPER_TABLE, f"{paper_set}/baseline/all", "sentences")
    source = papers.citation(PAPER, PAPER_TABLE)
    if size is None or total is None:
        return None, f"No paper number: {source} has no reordering set {paper_set!r}."
    if int(total) != pairs:
        return None, (f"No paper number: {source} counts {paper_set} on {int(total)} pairs, "
                      f"this corpus has {pairs}, so the sizes are not comparable.")
    return size, (f"paper = {source}: {int(size)} of {int(total)} {paper_set} pairs at "
                  f"d = {PAPER_DISTANCE} (FastAlign; alignment kind, punctuation and "
                  f"comparison not stated).")


def setting_label(alignment: str, punctuation: str) -> str:
    """A column name for one alignment and punctuation setting."""
    return alignment if punctuation == "kept" else f"{alignment} −punct"


def wide_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The grid with one row per (d, comparison) and one column per setting, for reading."""
    table = frame.assign(setting=[setting_label(a, p) for a, p in
                                  zip(frame["alignment"], frame["punctuation"], strict=True)])
    wide = table.pivot(index=["d", "comparison"], columns="setting", values="selected")
    order = [setting_label(a, p) for a in ALIGNMENTS for p in PUNCTUATION]
    wide = wide[order].reset_index()
    wide["comparison"] = pd.Categorical(wide["comparison"], COMPARISONS, ordered=True)
    paper = table.groupby("d")["paper"].first()
    wide["paper"] = ["—" if pd.isna(paper[d]) else f"{paper[d]:g}" for d in wide["d"]]
    return wide.sort_values(["d", "comparison"]).astype({"comparison": str})


def closest_settings(frame: pd.DataFrame, target: float, d: int | None = None,
                     count: int = 3) -> pd.DataFrame:
    """The ``count`` rows whose size is closest to ``target`` (at ``d`` only, if given)."""
    rows = frame if d is None else frame[frame["d"] == d]
    gap = (rows["selected"] - target).abs()
    return rows.assign(gap=gap).sort_values(["gap", "d"], kind="stable").head(count)


def _describe(row: pd.Series) -> str:
    return (f"{row['alignment']}, punctuation {row['punctuation']}, |i − j| "
            f"{row['comparison']} {row['d']}: {row['selected']}")


def grid_notes(frame: pd.DataFrame, pairs: Sequence[SentencePair], paper: float | None,
               paper_note: str) -> list[str]:
    """Notes under the grid: readings, unaligned pairs and the settings nearest the paper."""
    unlinked = {a: sum(not pair.links(a) for pair in pairs) for a in ALIGNMENTS}
    notes = [
        f"{len(pairs)} sentence pairs; a pair is selected when some link (i, j) has |i − j| "
        "meeting the threshold (0-based token indices of the tokenized text).",
        "Pairs without any link: " + ", ".join(f"{a} {n}" for a, n in unlinked.items()) + ".",
        "−punct: links whose source or target token is punctuation (every character in a "
        "Unicode P* category) are dropped; tokens are not renumbered.",
        "intersection = links in both forward and reverse; gdfa = grow-diag-final-and.",
        "Distances are whole numbers, so |i − j| > d selects exactly what |i − j| >= d + 1 "
        "does: the reference code's strict comparison equals the paper's wording one d higher.",
        paper_note,
    ]
    if paper is not None:
        at_paper = closest_settings(frame, paper, PAPER_DISTANCE)
        notes.append(f"Closest to the paper at d = {PAPER_DISTANCE}: "
                     + "; ".join(_describe(row) for _, row in at_paper.iterrows()) + ".")
        # "> d" selects what ">= d + 1" does, so one comparison suffices here.
        nearest = closest_settings(frame[frame["comparison"] == ">="], paper, None,
                                   count=len(frame))
        nearest = nearest.drop_duplicates(["alignment", "punctuation"])
        notes.append("Per alignment and punctuation setting, the d in the grid whose size is "
                     "closest to the paper's: "
                     + "; ".join(_describe(row) for _, row in nearest.iterrows()) + ".")
    return notes


def write_grid(src: str | os.PathLike[str], tgt: str | os.PathLike[str],
               forward: str | os.PathLike[str], reverse: str | os.PathLike[str],
               gdfa: str | os.PathLike[str] | None, out_md: str | os.PathLike[str],
               out_csv: str | os.PathLike[str], min_d: int = DEFAULT_MIN,
               max_d: int = DEFAULT_MAX, paper_set: str | None = DEFAULT_PAPER_SET
               ) -> pd.DataFrame:
    """Compute the grid from files and write it atomically: tidy CSV, wide Markdown."""
    pairs = read_pairs(src, tgt, forward, reverse, gdfa)
    paper, paper_note = paper_size(paper_set, len(pairs))
    frame = reorder_grid(pairs, min_d, max_d, paper)
    title = "Reordering-set size by d, alignment, punctuation and comparison"
    notes = grid_notes(frame, pairs, paper, paper_note)
    with atomic_write(out_csv) as out:
        frame.to_csv(out, index=False, lineterminator="\n")
    write_json(json_path(out_csv), table_record(frame, title, notes))
    write_markdown(wide_table(frame).fillna("—").astype(str), out_md, title, notes)
    return frame


def _cmd_reorder_grid(args: argparse.Namespace) -> int:
    if args.min > args.max:
        raise InputError("command line", f"--min {args.min} is larger than --max {args.max}")
    paper_set = None if args.paper_set == "none" else args.paper_set
    frame = write_grid(args.src, args.tgt, args.forward, args.reverse, args.gdfa, args.out_md,
                       args.out_csv, args.min, args.max, paper_set)
    first = frame[(frame["d"] == args.min) & (frame["comparison"] == ">=")]
    summary = ", ".join(f"{setting_label(r.alignment, r.punctuation)} {r.selected}"
                        for r in first.itertuples())
    print(f"{frame['pairs'].iloc[0]} pairs; at |i - j| >= {args.min}: {summary} -> "
          f"{Path(args.out_md)}, {Path(args.out_csv)}", file=sys.stderr)
    return 0


def register_cli(tree: CommandTree) -> None:
    """Add ``ldd reorder-grid``."""
    p = tree.add("ldd reorder-grid", "Reordering-set size by d, alignment kind, punctuation "
                                     "links and >= or >, beside the paper's Table 2",
                 _cmd_reorder_grid)
    p.add_argument("--src", required=True, help="tokenized source, one sentence a line")
    p.add_argument("--tgt", required=True, help="tokenized target (reference), line-parallel")
    p.add_argument("--forward", required=True, help="forward Pharaoh alignment (i-j)")
    p.add_argument("--reverse", required=True,
                   help="reverse alignment, in source-target i-j orientation")
    p.add_argument("--gdfa", help="grow-diag-final-and alignment (default: computed)")
    p.add_argument("--min", type=non_negative_int, default=DEFAULT_MIN,
                   help=f"smallest d (default {DEFAULT_MIN})")
    p.add_argument("--max", type=non_negative_int, default=DEFAULT_MAX,
                   help=f"largest d (default {DEFAULT_MAX})")
    p.add_argument("--paper-set", default=DEFAULT_PAPER_SET,
                   help="the paper's corpus/direction to compare with (default "
                        f"{DEFAULT_PAPER_SET}, i.e. newstest2013), or 'none'")
    p.add_argument("--out-md", required=True, help="grid as a Markdown table with notes")
    p.add_argument("--out-csv", required=True, help="grid as tidy CSV, one row a setting")
