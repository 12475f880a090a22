"""Translation Edit Rate (Snover et al. 2006) through sacreBLEU, as a registered metric:
edits (insertions, deletions, substitutions and shifts) per reference word, in percent; lower
is better."""

from __future__ import annotations

import numpy as np
from sacrebleu.metrics import TER

from phenomt.core.metrics.base import SacrebleuMetric, register


@register
class Ter(SacrebleuMetric):
    """sacreBLEU's TER; the statistics are each sentence's edits and reference length."""

    name = "ter"
    label = "TER"
    columns = ("edits", "ref_length")
    higher_is_better = False
    bounds = (0.0, None)

    def __init__(self, normalized: bool = False, case_sensitive: bool = False) -> None:
        self.metric = TER(normalized=normalized, case_sensitive=case_sensitive)

    def scores(self, totals: np.ndarray) -> np.ndarray:
        """sacreBLEU's TER of every row at once: edits per reference word, in percent (an
        empty reference counts 100 with edits, 0 without)."""
        rows = np.atleast_2d(np.asarray(totals, dtype=np.float64))
        edits, length = rows[:, 0], rows[:, 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where(length > 0, edits / length, np.where(edits > 0, 1.0, 0.0))
        return 100 * rate
