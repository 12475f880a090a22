"""Translation Edit Rate (Snover et al. 2006) through sacreBLEU, as a registered metric:
edits (insertions, deletions, substitutions and shifts) per reference word, in percent; lower
is better."""

from __future__ import annotations

from sacrebleu.metrics import TER

from phenomt.core.metrics.base import SacrebleuMetric, register


@register
class Ter(SacrebleuMetric):
    """sacreBLEU's TER; the statistics are each sentence's edits and reference length."""

    name = "ter"
    label = "TER"
    columns = ("edits", "ref_length")
    higher_is_better = False

    def __init__(self, normalized: bool = False, case_sensitive: bool = False) -> None:
        self.metric = TER(normalized=normalized, case_sensitive=case_sensitive)
