"""Figures of Lei et al. (2024), drawn with matplotlib from an LTCR record (``phenomt score
ltcr`` or the calibration in ``phenomt lexcons tables``' stats):

- Figure 3: LTCR (L-All, L-Anno) against the number of documents sampled, the mean and the
  percentile band of bootstrap samples at each size (its ``curve``);
- LTCR by the sentence distance of a pair, the bins of the paper's Table 5
  (its ``by_distance``)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phenomt.core.figures import close_figure, pyplot, save_figure
from phenomt.core.io import InputError, load_json
from phenomt.core.metrics import ltcr

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SERIES = (("l_all", "L-All"), ("l_anno", "L-Anno"))


def curve_of(record: Mapping[str, Any], path: str | os.PathLike[str]) -> Mapping[str, Any]:
    """The record's sample-size curve, or an InputError naming the file."""
    curve = record.get("curve")
    if not isinstance(curve, Mapping) or not curve.get("sizes"):
        raise InputError(path, "no sample-size curve in this LTCR record ('curve')")
    return curve


def draw_figure3(curve: Mapping[str, Any], title: str, outputs: list[str | Path]) -> int:
    """Write the figure to every path of ``outputs`` (format from the suffix); returns the
    number of series drawn."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    drawn = 0
    for key, label in SERIES:
        points = [p for p in curve.get(key) or [] if p["mean"] is not None]
        if not points:
            continue
        sizes = [p["documents"] for p in points]
        ax.plot(sizes, [100 * p["mean"] for p in points], marker="o", label=label)
        banded = [p for p in points if p["interval"]]
        ax.fill_between([p["documents"] for p in banded],
                        [100 * p["interval"][0] for p in banded],
                        [100 * p["interval"][1] for p in banded], alpha=0.2)
        drawn += 1
    ax.set_xlabel("documents sampled")
    ax.set_ylabel("LTCR (%)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if drawn:
        ax.legend()
    save_figure(fig, outputs)
    close_figure(fig)
    return drawn


def by_distance_of(record: Mapping[str, Any], path: str | os.PathLike[str]
                   ) -> Mapping[str, Any]:
    """The record's LTCR by sentence distance, or an InputError naming the file."""
    by_distance = record.get("by_distance")
    if not isinstance(by_distance, Mapping) or not by_distance:
        raise InputError(path, "no LTCR by distance in this record ('by_distance')")
    return by_distance


def draw_distance(by_distance: Mapping[str, Any], title: str) -> Figure:
    """LTCR (L-All, L-Anno) by the sentence distance of a pair (the paper's Table 5 bins
    0-4 and >=5), one line per subset; a bin with no judged pair is left out of its line."""
    plt = pyplot()
    bins = [b for b in ltcr.DISTANCE_BINS if b in by_distance]
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, label in SERIES:
        subset = key.removeprefix("l_")
        points = [(i, by_distance[b][subset]) for i, b in enumerate(bins)
                  if (by_distance[b].get(subset) or {}).get("ltcr") is not None]
        if points:
            ax.plot([i for i, _ in points], [100 * c["ltcr"] for _, c in points],
                    marker="o", label=label)
    ax.set_xticks(range(len(bins)), [_distance_title(b) for b in bins])
    ax.set_xlabel("sentence distance d of the pair")
    ax.set_ylabel("LTCR (%)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if ax.lines:
        ax.legend()
    return fig


def _distance_title(label: str) -> str:
    """``ge5`` → ``≥5``, as in the paper."""
    return f"≥{label.removeprefix('ge')}" if label.startswith("ge") else label


def _record_at(path: str, key: str | None) -> Mapping[str, Any]:
    """An LTCR record: the file itself, or its entry ``key``."""
    record = load_json(path)
    if key:
        if key not in record:
            raise InputError(path, f"no {key!r} in this file")
        record = record[key]
        if not isinstance(record, Mapping):
            raise InputError(path, f"{key!r} is not an LTCR record (a JSON object)")
    return record


def _figure_command(args: argparse.Namespace) -> int:
    record = _record_at(args.record, args.key)
    drawn = draw_figure3(curve_of(record, args.record), args.title, args.output)
    if not drawn:
        raise InputError(args.record, "nothing to draw: no judged pairs at any sample size")
    print(f"{', '.join(args.output)}: {drawn} series")
    return 0


def _distance_command(args: argparse.Namespace) -> int:
    record = _record_at(args.record, args.key)
    fig = draw_distance(by_distance_of(record, args.record), args.title)
    drawn = len(fig.axes[0].lines)
    if not drawn:
        close_figure(fig)
        raise InputError(args.record, "nothing to draw: no judged pairs at any distance")
    save_figure(fig, args.output)
    close_figure(fig)
    print(f"{', '.join(args.output)}: {drawn} series")
    return 0


def register_cli(tree) -> None:
    p = tree.add("lexcons figure3", "Figure 3: LTCR against the number of documents sampled",
                 _figure_command)
    p.add_argument("--record", required=True, help="an LTCR record, or stats with --key")
    p.add_argument("--key", help="the record inside the file (e.g. reference_calibration)")
    p.add_argument("--title", default="LTCR against sample size")
    p.add_argument("--output", nargs="+", required=True, help="PNG and/or SVG paths")
    p = tree.add("lexcons figure-distance", "LTCR (L-All, L-Anno) by the sentence distance "
                 "of a pair (the paper's Table 5 bins)", _distance_command)
    p.add_argument("--record", required=True, help="an LTCR record, or stats with --key")
    p.add_argument("--key", help="the record inside the file (e.g. reference_calibration)")
    p.add_argument("--title", default="LTCR by sentence distance")
    p.add_argument("--output", nargs="+", required=True, help="PNG and/or SVG paths")
