"""chrF (Popović 2015) through sacreBLEU, as a registered metric: character n-grams up to 6
and β = 2 by default (chrF2); ``word_order=2`` gives chrF++."""

from __future__ import annotations

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
