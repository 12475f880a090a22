"""Distance bins of long-distance-dependency challenge sets: ``all`` (every instance),
``ge<k>`` (distance at least k) and ``eq<k>`` (distance exactly k). The labels name set files
and table rows, so the extractor, the set scorer and the given-systems tables share them."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DistanceBin:
    """A set's distance condition: ``distance >= k``, or ``distance == k`` when ``exact``."""

    distance: int
    exact: bool = False

    def __post_init__(self) -> None:
        if self.distance < 0:
            raise ValueError(f"distance must be non-negative, got {self.distance}")

    @property
    def label(self) -> str:
        """``all``, ``ge<k>`` or ``eq<k>``; usable in file names."""
        if self.exact:
            return f"eq{self.distance}"
        return "all" if self.distance == 0 else f"ge{self.distance}"

    def admits(self, distance: int) -> bool:
        """Whether an instance at ``distance`` falls in this bin."""
        return distance == self.distance if self.exact else distance >= self.distance


_BIN = re.compile(r"all|ge([0-9]+)|eq([0-9]+)")


def parse_bin(label: str) -> DistanceBin:
    """The :class:`DistanceBin` of a canonical label: ``all``, ``ge<k>`` (k ≥ 1), ``eq<k>``."""
    match = _BIN.fullmatch(label)
    if match is None:
        raise ValueError(f"bad distance bin {label!r}: expected all, ge<k> or eq<k>")
    if match[2] is not None:
        return DistanceBin(int(match[2]), exact=True)
    distance_bin = DistanceBin(int(match[1] or 0))
    if distance_bin.label != label:
        raise ValueError(f"bad distance bin {label!r}: write {distance_bin.label!r}")
    return distance_bin


def bin_order(label: str) -> tuple[int, int]:
    distance_bin = parse_bin(label)
    return (int(distance_bin.exact), distance_bin.distance)


def bin_title(label: str) -> str:
    """How a bin is shown in tables: ``All``, ``≥k``, ``=k``."""
    distance_bin = parse_bin(label)
    if label == "all":
        return "All"
    return f"{'=' if distance_bin.exact else '≥'}{distance_bin.distance}"
