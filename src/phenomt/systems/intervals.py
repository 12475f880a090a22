"""The intervals the given-systems records and tables report: percentile intervals of a
sentence (or document) bootstrap, clipped to the range of their score, each with whether it
contains the point estimate and, when not, why.

A percentile interval (:mod:`phenomt.core.metrics.resample`) lies within the range of the
resampled scores, so clipping only guards against rounding; sacreBLEU's mean ± half-width,
which these intervals replace, could leave it (BLEU 0.62 [-4.68, 30.59] on a test set with one
1 MB hypothesis line). A percentile interval need not contain the score itself, though: with a
handful of resamples, or a skewed bootstrap distribution (the score of the summed statistics is
not the mean of the resampled scores), the resampled scores can all lie on one side of it.
Such an interval is kept as it is and flagged (``ci_contains_score`` false, ``ci_reason``);
the tables mark its cell with :data:`MARK` and say why in a note.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

#: The range of every score with an interval in the systems records (None: unbounded above):
#: BLEU and chrF in percent, TER in percent of reference words (above 100 when a hypothesis
#: needs more edits than its reference has words), the redundancy ratios and L-All as shares.
SCORE_RANGES: dict[str, tuple[float, float | None]] = {
    "bleu": (0.0, 100.0), "chrf": (0.0, 100.0), "ter": (0.0, None),
    "crr": (0.0, 1.0), "drr": (0.0, 1.0), "redundancy": (0.0, 1.0), "l_all": (0.0, 1.0)}

#: The range of a difference of two shares (a paired test of CRR, DRR or L-All).
DIFFERENCE_RANGE = (-1.0, 1.0)

#: Below this many resamples an interval that misses the score is put down to their number.
FEW_RESAMPLES = 100

#: The tables' mark of an interval that does not contain its score.
MARK = "‡"

#: Relative tolerance of the containment check: a bootstrap of identical sentences gives
#: resampled scores equal to the score up to the rounding of their sums.
_TOLERANCE = 1e-9


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def contains(score: float, low: float, high: float) -> bool:
    """Whether ``low <= score <= high``, up to rounding."""
    slack = _TOLERANCE * max(1.0, abs(score))
    return low - slack <= score <= high + slack


def reason(score: float, low: float, high: float, samples: int, confidence: float,
           method: str = "percentile") -> str:
    """Why an interval does not contain its score: too few resamples; for a percentile
    interval, nearly all resampled scores on one side of it; for sacreBLEU's form, its
    centre, the resamples' mean, lying away from the score (no share of resamples follows)."""
    if samples < FEW_RESAMPLES:
        return (f"interval does not contain the score: only {samples} "
                f"resample{'s' if samples != 1 else ''}")
    side = "above" if low > score else "below"
    if method == "sacrebleu":
        return (f"interval does not contain the score: sacreBLEU's interval is centred on the "
                f"mean of the {samples} resampled scores, which lies {side} it (a skewed "
                "bootstrap distribution)")
    return (f"interval does not contain the score: at least {100 * (1 + confidence) / 2:g}% of "
            f"the {samples} resampled scores lie {side} it (a skewed bootstrap distribution)")


def checked_interval(score: float | None, low: float | None, high: float | None, *,
                     bounds: tuple[float | None, float | None], samples: int,
                     confidence: float = 0.95, method: str = "percentile") -> dict:
    """A percentile interval clipped to ``bounds`` (either may be None), as the record fields
    ``ci_low``, ``ci_high``, ``ci_contains_score`` (None without an interval or a score) and
    ``ci_reason`` (None unless the interval misses the score)."""
    if not (_finite(low) and _finite(high)):
        return {"ci_low": None, "ci_high": None, "ci_contains_score": None, "ci_reason": None}
    lower, upper = bounds
    low, high = float(low), float(high)
    if lower is not None:
        low, high = max(low, lower), max(high, lower)
    if upper is not None:
        low, high = min(low, upper), min(high, upper)
    if not _finite(score):
        return {"ci_low": low, "ci_high": high, "ci_contains_score": None, "ci_reason": None}
    inside = contains(float(score), low, high)
    return {"ci_low": low, "ci_high": high, "ci_contains_score": inside,
            "ci_reason": None if inside else reason(float(score), low, high, samples,
                                                    confidence, method)}


def flagged(entry: Mapping | None, prefix: str = "ci") -> bool:
    """Whether a record entry's interval (``<prefix>_contains_score``) misses its score."""
    return bool(entry) and entry.get(f"{prefix}_contains_score") is False


def mark(cell: str | None, entry: Mapping | None, prefix: str = "ci") -> str | None:
    """A table cell with :data:`MARK` appended when its interval misses its score."""
    if cell is None or not flagged(entry, prefix):
        return cell
    return f"{cell} {MARK}"


def notes(misses: Iterable[tuple[str, str]]) -> list[str]:
    """The tables' notes on intervals that do not contain their score: ``misses`` are
    (what, reason) pairs, e.g. ("newstest2021.de-en mine BLEU", "interval does not ...");
    one note per reason, naming every interval it applies to."""
    by_reason: dict[str, list[str]] = {}
    for what, why in misses:
        by_reason.setdefault(why, []).append(what)
    return [f"{MARK} {why[0].upper()}{why[1:]}: {', '.join(dict.fromkeys(whats))}."
            for why, whats in by_reason.items()]


def describe(samples: int, seed: int, unit: str = "sentence",
             confidence: float = 0.95) -> str:
    """How the intervals were made, for a table's notes."""
    return (f"{100 * confidence:g}% percentile intervals of a {unit} bootstrap ({samples} "
            f"resamples, seed {seed}) clipped to the score's range; {MARK} marks an interval "
            "that does not contain its score")


def check_record_interval(value: float | None, interval: Sequence[float] | None, key: str,
                          samples: int, confidence: float = 0.95) -> dict:
    """:func:`checked_interval` of a record that keeps its interval as ``[low, high]`` (LTCR's
    ``intervals``), for the score ``key`` of :data:`SCORE_RANGES`."""
    low, high = interval if interval else (None, None)
    return checked_interval(value, low, high, bounds=SCORE_RANGES[key], samples=samples,
                            confidence=confidence)
