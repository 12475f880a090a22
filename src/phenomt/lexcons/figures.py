"""Figure 3 of Lei et al. (2024): LTCR (L-All, L-Anno) against the number of documents
sampled, the mean and the percentile band of bootstrap samples at each size. Drawn with
matplotlib from the ``curve`` of an LTCR record (``phenomt score ltcr`` or the calibration in
``phenomt lexcons tables``' stats)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from phenomt.core.io import InputError, atomic_write
from phenomt.core.tables import load_json

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
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    # fixed metadata: the same curve gives the same bytes
    plt.rcParams.update({"svg.hashsalt": "phenomt", "figure.dpi": 100})
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
    for output in outputs:
        path = Path(output)
        with atomic_write(path, "wb") as handle:
            fig.savefig(handle, format=path.suffix.lstrip("."),
                        metadata={"Date": None} if path.suffix == ".svg" else
                        {"Software": None})
    plt.close(fig)
    return drawn


def _figure_command(args: argparse.Namespace) -> int:
    record = load_json(args.record)
    if args.key:
        if args.key not in record:
            raise InputError(args.record, f"no {args.key!r} in this file")
        record = record[args.key]
    drawn = draw_figure3(curve_of(record, args.record), args.title, args.output)
    if not drawn:
        raise InputError(args.record, "nothing to draw: no judged pairs at any sample size")
    print(f"{', '.join(args.output)}: {drawn} series")
    return 0


def register_cli(tree) -> None:
    p = tree.add("lexcons figure3", "Figure 3: LTCR against the number of documents sampled",
                 _figure_command)
    p.add_argument("--record", required=True, help="an LTCR record, or stats with --key")
    p.add_argument("--key", help="the record inside the file (e.g. reference_calibration)")
    p.add_argument("--title", default="LTCR against sample size")
    p.add_argument("--output", nargs="+", required=True, help="PNG and/or SVG paths")
