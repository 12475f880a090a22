"""What every figure of the pipeline shares: matplotlib without a display, byte-stable files,
and reading the finished tables (``results/tables/*.csv``) the figures are drawn from.

Figures are drawn by the wings (``phenomt.<wing>.figures``); each drawing function returns
its matplotlib Figure so that tests can count its series, and :func:`save_figure` writes it
to every requested path, the format taken from the suffix.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from phenomt.core.io import InputError, atomic_write

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Fixed SVG element ids: the same figure gives the same bytes.
SVG_HASH_SALT = "phenomt"
#: A cell shown as "value [low, high]" (phenomt.core.tables.interval_cell), possibly
#: followed by a note such as "Δ+0.79".
_INTERVAL = re.compile(r"^\s*(-?[\d.]+(?:e-?\d+)?)\s*\[\s*(-?[\d.]+(?:e-?\d+)?)\s*,\s*"
                       r"(-?[\d.]+(?:e-?\d+)?)\s*\]")
_MISSING = {"", "—", "-", "nan", "NaN", "None"}


def pyplot():
    """matplotlib's pyplot on the Agg backend (files only, no display), with the settings
    that make its output reproducible."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": SVG_HASH_SALT, "figure.dpi": 100})
    return plt


def save_figure(fig: Figure, outputs: Sequence[str | os.PathLike[str]]) -> None:
    """Write ``fig`` atomically to every path of ``outputs`` (PNG or SVG by suffix),
    cropped to its drawn area, without the date or software version that would change the
    bytes."""
    kinds = {Path(output): Path(output).suffix.lstrip(".").lower() for output in outputs}
    for path, kind in kinds.items():
        if kind not in ("png", "svg"):
            raise InputError(path, "a figure must end in .png or .svg")
    if not kinds:
        return
    crop = tight_bbox(fig)
    for path, kind in kinds.items():
        metadata = {"Software": None} if kind == "png" else {"Date": None}
        with atomic_write(path, "wb") as handle:
            fig.savefig(handle, format=kind, metadata=metadata, bbox_inches=crop)


def tight_bbox(fig: Figure):
    """The area ``savefig(bbox_inches="tight")`` crops to (in inches, padded by
    ``savefig.pad_inches``), laid out once for every format: savefig would lay out the whole
    figure again for each (a quarter of a many-panel figure's time)."""
    from contextlib import nullcontext

    import matplotlib

    renderer = fig.canvas.get_renderer()
    with getattr(renderer, "_draw_disabled", nullcontext)():
        fig.draw(renderer)  # places the ticks and labels, as savefig does before measuring
    pad = matplotlib.rcParams["savefig.pad_inches"]
    return fig.get_tightbbox(renderer).padded(pad, pad)


def add_title(fig: Figure, title: str) -> Figure:
    """``title`` above every panel of ``fig`` (nothing when empty), e.g. the scale of the run
    that trained the models drawn."""
    if title:
        fig.suptitle(title, fontsize=10)
        fig.tight_layout(rect=(0, 0, 1, 0.96))
    return fig


def close_figure(fig: Figure) -> None:
    pyplot().close(fig)


def write_figure(fig: Figure, outputs: Sequence[str | os.PathLike[str]], what: str) -> int:
    """A figure command's end: write ``fig`` to ``outputs``, free it and say what it drew."""
    save_figure(fig, outputs)
    close_figure(fig)
    print(f"{', '.join(map(str, outputs))}: {what}")
    return 0


def read_table(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """The rows of a finished CSV table as strings (empty cells as ``""``), or an
    InputError naming the file."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except (UnicodeDecodeError, csv.Error) as err:
        raise InputError(path, f"not a readable CSV table: {err}") from None


def require_columns(rows: Sequence[dict[str, str]], columns: Sequence[str],
                    path: str | os.PathLike[str]) -> None:
    """Raise an InputError naming ``path`` if a needed column is absent."""
    present = set(rows[0]) if rows else set()
    missing = [c for c in columns if c not in present]
    if rows and missing:
        raise InputError(path, f"no column {', '.join(map(repr, missing))} in this table "
                               f"(it has {', '.join(map(repr, rows[0]))})")


@dataclass(frozen=True)
class Score:
    """A number with its interval where the table gives one."""

    value: float
    low: float | None = None
    high: float | None = None

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def errors(self) -> tuple[float, float]:
        """Error-bar lengths below and above the value, never negative (matplotlib refuses
        them): an interval that does not contain its value (a table marks it ‡) is drawn
        from the value to its far end; no interval gives (0, 0)."""
        if not self.has_interval:
            return 0.0, 0.0
        return error_lengths(self.value, self.low, self.high)


def error_lengths(value: float, low: float, high: float) -> tuple[float, float]:
    """Error-bar lengths of an interval below and above its value, never negative: a
    percentile interval can miss its value by rounding (the point BLEU and the resamples'
    batch BLEU differ in the last digits) or by skew, and matplotlib refuses negative
    lengths; such an interval is drawn from the value to its far end."""
    return max(0.0, value - low), max(0.0, high - value)


def parse_number(cell: str | None) -> float | None:
    """A table cell as a number: ``None`` for an empty cell or a dash; "2.31x" and "53.5%"
    lose their unit."""
    if cell is None or cell.strip() in _MISSING:
        return None
    text = cell.strip().removesuffix("x").removesuffix("%").strip()
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def parse_score(cell: str | None) -> Score | None:
    """A cell ``12.3`` or ``12.3 [11.0, 13.5]`` (value and interval, any note after it
    ignored), ``None`` if empty."""
    if cell is None:
        return None
    match = _INTERVAL.match(cell)
    if match:
        value, low, high = (float(g) for g in match.groups())
        return Score(value, low, high)
    value = parse_number(cell)
    return None if value is None else Score(value)
