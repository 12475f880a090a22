"""``--task phenomt_translation_nat``: fairseq's ``translation_lev`` plus the update number.

``translation_lev`` never tells the model which update it is at, but glancing models
(GLAT, DA-Transformer) anneal their glancing ratio over training. This task passes the
update number to the model before every training step; everything else (data, noise,
the iterative-refinement generator used for single-pass decoding) is ``translation_lev``.
"""

from dataclasses import dataclass

from fairseq.tasks import register_task
from fairseq.tasks.translation_lev import (
    TranslationLevenshteinConfig,
    TranslationLevenshteinTask,
)


@dataclass
class NATranslationConfig(TranslationLevenshteinConfig):
    """Same options as ``translation_lev`` (``--noise``, data and length limits)."""


@register_task("phenomt_translation_nat", dataclass=NATranslationConfig)
class NATranslationTask(TranslationLevenshteinTask):
    """Non-autoregressive translation whose models see the current update number."""

    cfg: NATranslationConfig

    def train_step(self, sample, model, criterion, optimizer, update_num, ignore_grad=False):
        model.set_num_updates(update_num)
        return super().train_step(sample, model, criterion, optimizer, update_num,
                                  ignore_grad=ignore_grad)
