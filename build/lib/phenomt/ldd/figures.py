"""Figures of the LDD challenge sets (Choshen & Abend 2019), drawn from the finished tables:

- ``phenomt ldd figure-distance``: BLEU by minimum dependency distance, one line per lexical
  phenomenon and one panel per model and corpus (Table 5);
- ``phenomt ldd figure-sets``: each challenge set's BLEU beside that of the full test set it
  was extracted from (the paper's "baseline"; the legend says "full test set", as "baseline"
  names a baseline system elsewhere), one panel per system, with intervals where the table
  has them (Table 4). It reads any table of systems by sets: one row per system and set
  (``--system-column``) or one column per system (``--systems-as-columns``); a score is a
  number or ``value [low, high]``, and the full test set's score is a column of each row
  (``--baseline-column``) or a row of its own (``--baseline-set``).
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from phenomt.core.figures import (
    Score,
    add_title,
    parse_number,
    parse_score,
    pyplot,
    read_table,
    require_columns,
    write_figure,
)
from phenomt.core.io import InputError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Table 5's columns that tell its rows apart besides the phenomenon, in title order.
PANEL_COLUMNS = ("model", "corpus", "direction", "scoring")
#: Table 5's BLEU columns: "BLEU All", "BLEU ≥1", ... (the paper's columns start "paper").
_BIN_COLUMN = re.compile(r"^BLEU (.+)$")
SET_COLOUR, BASELINE_COLOUR = "C0", "0.6"
#: The legend of the grey bars: the full test set each set was extracted from.
FULL_LABEL = "full test set"


# --------------------------------------------------------------------------- Table 5

def distance_bins(columns: Sequence[str]) -> list[str]:
    """Table 5's distance-bin columns in their order, e.g. ``["BLEU All", "BLEU ≥1"]``."""
    return [c for c in columns if _BIN_COLUMN.match(c)]


def draw_distance(rows: Sequence[Mapping[str, str]], path: str | os.PathLike[str] = "table"
                  ) -> Figure:
    """BLEU by distance bin: one panel per model, corpus, direction and BLEU setting, one
    line per phenomenon; a bin without a score is a gap in its line."""
    if not rows:
        raise InputError(path, "the table has no rows")
    require_columns(rows, ["phenomenon"], path)
    bins = distance_bins(list(rows[0]))
    if not bins:
        raise InputError(path, "no 'BLEU <bin>' columns (Table 5 layout)")
    keys = [c for c in PANEL_COLUMNS if c in rows[0]]
    panels: dict[tuple[str, ...], list[Mapping[str, str]]] = {}
    for row in rows:
        panels.setdefault(tuple(row[k] for k in keys), []).append(row)
    plt = pyplot()
    fig, axes = _grid(plt, len(panels), width=5.2, height=3.4)
    for ax, (panel, members) in zip(axes, panels.items(), strict=False):
        for row in members:
            values = [parse_number(row[b]) for b in bins]
            ax.plot(range(len(bins)), [math.nan if v is None else v for v in values],
                    marker="o", label=row["phenomenon"])
        ax.set_xticks(range(len(bins)), [_BIN_COLUMN.match(b).group(1) for b in bins])
        ax.set_title(_panel_title(dict(zip(keys, panel, strict=True))), fontsize=9)
        ax.set_xlabel("minimum distance (words between head and dependent)", fontsize=8)
        ax.set_ylabel("BLEU")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def _panel_title(values: Mapping[str, str]) -> str:
    """``transformer.de-en · books (de-en, sacrebleu)``."""
    main = " · ".join(values[k] for k in ("model", "corpus") if values.get(k))
    extra = ", ".join(values[k] for k in ("direction", "scoring") if values.get(k))
    return f"{main} ({extra})" if extra else main


def _grid(plt, panels: int, width: float, height: float, columns: int = 2):
    """A figure of ``panels`` axes, at most ``columns`` side by side; returns (fig, axes)."""
    columns = max(1, min(columns, panels))
    rows = max(1, math.ceil(panels / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(width * columns, height * rows),
                             squeeze=False)
    return fig, [ax for line in axes for ax in line]


# --------------------------------------------------------------------------- Table 4

@dataclass(frozen=True)
class SetBar:
    """One challenge set of one system: its score and its baseline's, the full test set's
    (either may be missing)."""

    system: str
    label: str
    score: Score | None
    baseline: Score | None


def wide_to_long(rows: Sequence[Mapping[str, str]], set_columns: Sequence[str],
                 systems: Sequence[str] | None = None, value: str = "BLEU"
                 ) -> list[dict[str, str]]:
    """A table with one column per system (``systems``; default every column that does not
    name the set) as one row per system and set, with columns ``system`` and ``value``."""
    if not rows:
        return []
    names = list(systems) if systems else [c for c in rows[0] if c not in set_columns]
    return [{**{c: row[c] for c in set_columns}, "system": name, value: row[name]}
            for row in rows for name in names]


def set_bars(rows: Sequence[Mapping[str, str]], path: str | os.PathLike[str], *,
             system_column: str, set_columns: Sequence[str], value: str,
             baseline_column: str | None = None, baseline_set: str | None = None,
             match: Sequence[str] = ()) -> list[SetBar]:
    """One bar pair per row of a table with one row per system and set.

    The baseline is the row's ``baseline_column``, or else the row of the same system (and
    the same ``match`` columns) whose set columns hold ``baseline_set``; such baseline rows
    are no sets of their own.
    """
    require_columns(rows, [system_column, *set_columns, value,
                           *([baseline_column] if baseline_column else []), *match], path)
    baselines: dict[tuple[str, ...], Score | None] = {}
    sets = []
    for row in rows:
        names = [row[c] for c in set_columns]
        if baseline_set is not None and baseline_set in names:
            baselines[(row[system_column], *(row[c] for c in match))] = parse_score(row[value])
        else:
            sets.append(row)
    bars = []
    for row in sets:
        if baseline_column:
            baseline = parse_score(row[baseline_column])
        else:
            baseline = baselines.get((row[system_column], *(row[c] for c in match)))
        bars.append(SetBar(row[system_column], " · ".join(row[c] for c in set_columns
                                                          if row[c]),
                           parse_score(row[value]), baseline))
    return bars


def draw_sets_vs_baseline(bars: Sequence[SetBar], value: str = "BLEU", title: str = ""
                          ) -> Figure:
    """One panel per system: each set's score (horizontal bar, interval as an error bar)
    right above the full test set's (grey, :data:`FULL_LABEL`). A missing score draws no
    bar."""
    systems = list(dict.fromkeys(b.system for b in bars))
    if not systems:
        raise ValueError("no challenge sets to draw")
    plt = pyplot()
    heights = [max(1.5, 0.42 * sum(b.system == s for b in bars) + 0.9) for s in systems]
    fig, axes = plt.subplots(len(systems), 1, figsize=(9, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, system in zip((a for line in axes for a in line), systems, strict=True):
        mine = [b for b in bars if b.system == system]
        _bars(ax, [(i - 0.2, b.score) for i, b in enumerate(mine)], SET_COLOUR,
              "challenge set")
        _bars(ax, [(i + 0.2, b.baseline) for i, b in enumerate(mine)], BASELINE_COLOUR,
              FULL_LABEL)
        ax.set_yticks(range(len(mine)), [b.label for b in mine], fontsize=7)
        ax.set_xlim(left=min([0.0, *(x for b in mine for x in _extent(b))]))
        ax.invert_yaxis()  # first set on top, as in the table
        ax.set_xlabel(value)
        ax.set_title(system, fontsize=9)
        ax.grid(axis="x", alpha=0.3)
        if ax.patches:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def _extent(bar: SetBar) -> list[float]:
    """Every number a set's bars reach, intervals included."""
    return [x for score in (bar.score, bar.baseline) if score is not None
            for x in (score.value, score.low, score.high) if x is not None]


def _bars(ax, placed: Sequence[tuple[float, Score | None]], colour: str, label: str) -> None:
    """Horizontal bars at the given positions, the intervals as error bars."""
    shown = [(y, s) for y, s in placed if s is not None]
    if not shown:
        return
    errors = [[s.errors[0] for _, s in shown], [s.errors[1] for _, s in shown]]
    with_interval = any(s.has_interval for _, s in shown)
    bars = ax.barh([y for y, _ in shown], [s.value for _, s in shown], height=0.38,
                   color=colour, label=label, xerr=errors if with_interval else None,
                   capsize=2, error_kw={"elinewidth": 0.8})
    # the value at the bar's end: a score of 0 draws no visible bar
    ax.bar_label(bars, fmt="%.2f", fontsize=6, padding=2)


# --------------------------------------------------------------------------- command line

def _filter(rows: list[dict[str, str]], where: Sequence[str], path: str) -> list[dict[str, str]]:
    """Rows that meet every ``COLUMN=VALUE[,VALUE...]`` condition (one of its values)."""
    for condition in where:
        column, sep, wanted = condition.partition("=")
        if not sep:
            raise InputError(path, f"--where {condition!r}: expected COLUMN=VALUE[,VALUE...]")
        require_columns(rows, [column], path)
        rows = [r for r in rows if r[column] in wanted.split(",")]
    return rows


def _distance_command(args: argparse.Namespace) -> int:
    rows = _filter(read_table(args.table), args.where, args.table)
    fig = add_title(draw_distance(rows, args.table), args.title)
    return write_figure(fig, args.output, f"{sum(len(a.lines) for a in fig.axes)} lines")


def _sets_command(args: argparse.Namespace) -> int:
    rows = _filter(read_table(args.table), args.where, args.table)
    system_column = args.system_column
    if args.systems_as_columns is not None:
        require_columns(rows, args.sets, args.table)
        rows = wide_to_long(rows, args.sets, args.systems_as_columns, args.value)
        system_column = "system"
    bars = set_bars(rows, args.table, system_column=system_column, set_columns=args.sets,
                    value=args.value, baseline_column=args.baseline_column,
                    baseline_set=args.baseline_set, match=args.match)
    if not bars:
        raise InputError(args.table, "no challenge sets to draw")
    fig = draw_sets_vs_baseline(bars, args.value, args.title)
    return write_figure(fig, args.output, f"{len(bars)} sets")


def register_cli(tree) -> None:
    p = tree.add("ldd figure-distance", "Figure: BLEU by dependency distance per phenomenon "
                 "(from Table 5)", _distance_command)
    p.add_argument("--table", required=True, help="ldd_table5.csv")
    p.add_argument("--title", default="", help="a title above the panels")
    p.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE[,VALUE]",
                   help="keep only the rows with one of these values (repeatable)")
    p.add_argument("--output", nargs="+", required=True, help="PNG and/or SVG paths")

    p = tree.add("ldd figure-sets", "Figure: each challenge set's score beside the full test "
                 "set's, per system, with intervals where given (Table 4 or a per-system "
                 "table)",
                 _sets_command)
    p.add_argument("--table", required=True, help="a CSV table of systems by sets")
    p.add_argument("--sets", nargs="+", default=["corpus", "direction", "phenomenon",
                                                 "distance"],
                   help="the columns that name a set")
    p.add_argument("--value", default="BLEU", help="the score column (long form)")
    p.add_argument("--system-column", default="model", help="the system column (long form)")
    p.add_argument("--systems-as-columns", nargs="*", metavar="SYSTEM",
                   help="one column per system (all columns but --sets when none is named)")
    p.add_argument("--baseline-column",
                   help="the full test set's score in each row (Table 4: 'baseline BLEU')")
    p.add_argument("--baseline-set", help="the set name that marks the full test set's rows")
    p.add_argument("--match", nargs="*", default=[],
                   help="columns a set shares with its full test set's row (e.g. corpus "
                        "direction)")
    p.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE[,VALUE]",
                   help="keep only the rows with one of these values (repeatable)")
    p.add_argument("--title", default="")
    p.add_argument("--output", nargs="+", required=True, help="PNG and/or SVG paths")
