"""chrF (Popović 2015) through sacreBLEU, as a registered metric: character n-grams up to 6
and β = 2 by default (chrF2); ``word_order=2`` gives chrF++."""

from __future__ import annotations

import numpy as np
from sacrebleu.metrics import CHRF

from phenomt.core.metrics.base import SacrebleuMetric, register


@register
class Chrf(SacrebleuMetric):
    """sacreBLEU's chrF; the statistics are its per-sentence n-gram match counts."""

    name = "chrf"
    label = "chrF"
    columns = ("sacrebleu_chrf_statistics",)

    def __init__(self, word_order: int = 0, lowercase: bool = False) -> None:
        self.metric = CHRF(word_order=word_order, lowercase=lowercase)

    def scores(self, totals: np.ndarray) -> np.ndarray:
        """sacreBLEU's ``_compute_f_score`` on every row at once (its default effective-order
        averaging; eps smoothing takes the row-by-row path)."""
        chrf = self.metric
        if chrf.eps_smoothing:
            return super().scores(totals)
        rows = np.atleast_2d(np.asarray(totals, dtype=np.float64))
        hyp, ref, match = (rows[:, k:3 * chrf.order:3] for k in range(3))
        valid = (hyp > 0) & (ref > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            precision = np.where(hyp > 0, match / hyp, 0.0)
            recall = np.where(ref > 0, match / ref, 0.0)
            orders = valid.sum(axis=1)
            avg_p = np.where(orders > 0, (precision * valid).sum(axis=1) / orders, 0.0)
            avg_r = np.where(orders > 0, (recall * valid).sum(axis=1) / orders, 0.0)
            factor = chrf.beta ** 2
            value = 100 * (1 + factor) * avg_p * avg_r / (factor * avg_p + avg_r)
        return np.where(avg_p + avg_r > 0, value, 0.0)
