"""Figures of the NAT experiment (Wang et al.), drawn from the finished tables:

- ``phenomt nat figure-redundancy``: CRR and DRR (Table 10; or BLEU and Redu., Table 5) per
  system, raw against distilled training data, the paper's numbers as markers;
- ``phenomt nat figure-speedup``: each NAT model's decoding speed-up over AR beam search at
  every measured batch size (the speed table).
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from phenomt.core.figures import (
    add_title,
    parse_number,
    pyplot,
    read_table,
    require_columns,
    write_figure,
)
from phenomt.core.io import InputError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The speed table's name for the AR teacher (phenomt.nat.recipes.SYSTEM_LABELS).
AR_LABEL = "AR teacher"
DATA_ORDER = ("raw", "distilled")
DEFAULT_METRICS = ("CRR (%)", "DRR (%)")


def _ordered_unique(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _data_conditions(rows: Sequence[Mapping[str, str]]) -> list[str]:
    """Training-data conditions, raw and distilled first."""
    found = _ordered_unique([r["data"] for r in rows])
    return sorted(found, key=lambda d: (DATA_ORDER.index(d) if d in DATA_ORDER else 9, d))


def draw_redundancy(rows: Sequence[Mapping[str, str]], metrics: Sequence[str] = DEFAULT_METRICS,
                    path: str | os.PathLike[str] = "table") -> Figure:
    """One row of panels per language pair and test set, one panel per metric: a bar per
    system and training data (raw, distilled side by side), the paper's number of the same
    row as a black marker where it has one."""
    require_columns(rows, ["pair", "test set", "system", "data", *metrics], path)
    if not rows:
        raise InputError(path, "the table has no rows")
    groups: dict[tuple[str, str], list[Mapping[str, str]]] = {}
    for row in rows:
        groups.setdefault((row["pair"], row["test set"]), []).append(row)
    conditions = _data_conditions(rows)
    width = 0.8 / len(conditions)
    plt = pyplot()
    fig, axes = plt.subplots(len(groups), len(metrics), squeeze=False,
                             figsize=(5.2 * len(metrics), 3.4 * len(groups)))
    for line, ((pair, testset), members) in zip(axes, groups.items(), strict=True):
        systems = _ordered_unique([r["system"] for r in members])
        for ax, metric in zip(line, metrics, strict=True):
            for k, data in enumerate(conditions):
                placed = [(systems.index(r["system"]) + (k - (len(conditions) - 1) / 2) * width,
                           r) for r in members if r["data"] == data]
                ours = [(x, parse_number(r[metric])) for x, r in placed]
                ours = [(x, v) for x, v in ours if v is not None]
                if ours:
                    ax.bar([x for x, _ in ours], [v for _, v in ours], width=width,
                           color=f"C{k}", label=data)
                paper = [(x, parse_number(r.get(f"paper {metric}"))) for x, r in placed]
                paper = [(x, v) for x, v in paper if v is not None]
                if paper:
                    ax.plot([x for x, _ in paper], [v for _, v in paper], linestyle="none",
                            marker="D", markersize=4, color="black",
                            label="paper" if k == 0 else "_paper")
            ax.set_xticks(range(len(systems)), systems, rotation=30, ha="right", fontsize=8)
            ax.set_ylabel(metric)
            ax.set_title(f"{metric.split(' (')[0]}: {pair}, {testset}", fontsize=9)
            ax.grid(axis="y", alpha=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def draw_speedup(rows: Sequence[Mapping[str, str]], path: str | os.PathLike[str] = "table"
                 ) -> Figure:
    """One panel per language pair: a bar per NAT system and training data for every batch
    size, the AR teacher's speed (1x) as a dashed line."""
    column = "speed-up vs AR"
    require_columns(rows, ["pair", "system", "data", "batch size", column], path)
    nat = [r for r in rows if not r["system"].startswith(AR_LABEL)]
    if not nat:
        raise InputError(path, "no NAT system in the speed table")
    pairs = _ordered_unique([r["pair"] for r in nat])
    batches = sorted({r["batch size"] for r in nat}, key=lambda b: parse_number(b) or 0)
    width = 0.8 / len(batches)
    plt = pyplot()
    fig, axes = plt.subplots(1, len(pairs), squeeze=False, figsize=(6 * len(pairs), 3.8))
    for ax, pair in zip(axes[0], pairs, strict=True):
        mine = [r for r in nat if r["pair"] == pair]
        systems = _ordered_unique([f"{r['system']} ({r['data']})" for r in mine])
        for k, batch in enumerate(batches):
            points = [(systems.index(f"{r['system']} ({r['data']})")
                       + (k - (len(batches) - 1) / 2) * width, parse_number(r[column]))
                      for r in mine if r["batch size"] == batch]
            points = [(x, v) for x, v in points if v is not None and not math.isnan(v)]
            if points:
                ax.bar([x for x, _ in points], [v for _, v in points], width=width,
                       color=f"C{k}", label=f"batch {batch}")
        ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8, label="AR beam search")
        ax.set_xticks(range(len(systems)), systems, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("speed-up over AR (×)")
        ax.set_title(f"Decoding speed-up: {pair}", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _save(fig: Figure, outputs: Sequence[str]) -> int:
    return write_figure(fig, outputs, f"{sum(len(ax.patches) for ax in fig.axes)} bars")


def _redundancy_command(args: argparse.Namespace) -> int:
    fig = draw_redundancy(read_table(args.table), args.metrics, args.table)
    return _save(add_title(fig, args.title), args.output)


def _speedup_command(args: argparse.Namespace) -> int:
    return _save(add_title(draw_speedup(read_table(args.table), args.table), args.title),
                 args.output)


def register_cli(tree) -> None:
    p = tree.add("nat figure-redundancy", "Figure: CRR and DRR per NAT model, raw against "
                 "distilled data (from Table 10)", _redundancy_command)
    p.add_argument("--table", required=True, help="nat_table10.csv (or nat_table5.csv)")
    p.add_argument("--metrics", nargs="+", default=list(DEFAULT_METRICS),
                   help="the columns to draw, one panel each")
    p.add_argument("--title", default="", help="a title above the panels")
    p.add_argument("--output", nargs="+", required=True, help="PNG and/or SVG paths")

    p = tree.add("nat figure-speedup", "Figure: decoding speed-up of each NAT model over AR "
                 "(from the speed table)", _speedup_command)
    p.add_argument("--table", required=True, help="nat_speed.csv")
    p.add_argument("--title", default="", help="a title above the panels")
    p.add_argument("--output", nargs="+", required=True, help="PNG and/or SVG paths")
