"""``--task phenomt_translation_nat``: fairseq's ``translation_lev`` plus the update number
and a length beam that runs on a GPU.

``translation_lev`` never tells the model which update it is at, but glancing models
(GLAT, DA-Transformer) anneal their glancing ratio over training. This task passes the
update number to the model before every training step.

Decoding is fairseq's iterative-refinement generator, except how a length beam (CMLM's
``--iter-decode-with-beam 5``) keeps the best candidate: fairseq 0.12 compares the candidates'
scores with ``np.argmax`` over a list of tensors, which fails for CUDA tensors ("can't convert
cuda:0 device type tensor to numpy", seen on an H100 by ``make gpu-check``).
:class:`LengthBeamGenerator` decodes the candidates with fairseq's own steps and compares
them in torch.
"""

from dataclasses import dataclass

import torch
from fairseq.iterative_refinement_generator import IterativeRefinementGenerator
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

    def build_generator(self, models, args, **unused):
        generator = super().build_generator(models, args, **unused)
        generator.__class__ = LengthBeamGenerator  # the same settings, our generate()
        return generator


class _LengthCandidates:
    """A model as fairseq's generator sees it when each sentence arrives ``k`` times (one row
    per length candidate): the encoder runs once per sentence and its output is repeated, and
    the rows start from the model's own ``k`` length candidates (``regenerate_length_beam``,
    whose rows are ordered sentence by sentence, as ``repeat_interleave`` orders them)."""

    def __init__(self, model, k: int):
        self._model, self._k = model, k
        self._encoded = None

    def __getattr__(self, name):
        return getattr(self._model, name)

    def forward_encoder(self, inputs):
        src_tokens, src_lengths = inputs
        sentences = src_tokens[:: self._k], src_lengths[:: self._k]
        encoded = self._model.forward_encoder(list(sentences))
        self._encoded = encoded, sentences[0]
        rows = torch.arange(sentences[0].size(0), device=src_tokens.device)
        return self._model.encoder.reorder_encoder_out(
            encoded, rows.repeat_interleave(self._k))

    def initialize_output_tokens(self, encoder_out, src_tokens):
        encoded, sentences = self._encoded
        first = self._model.initialize_output_tokens(encoded, sentences)
        return self._model.regenerate_length_beam(first, self._k)


class LengthBeamGenerator(IterativeRefinementGenerator):
    """fairseq's generator; with a length beam of ``k``, each sentence is decoded as ``k``
    rows by fairseq's own steps (beam 1 over :class:`_LengthCandidates`) and the row with the
    highest mean log-probability is kept (the first on a tie, as fairseq keeps it)."""

    @torch.no_grad()
    def generate(self, models, sample, prefix_tokens=None, constraints=None):
        k = self.beam_size
        if k <= 1 or self.reranking:
            return super().generate(models, sample, prefix_tokens, constraints)
        net_input = sample["net_input"]
        rows = {**sample, "net_input": {
            **net_input,
            "src_tokens": net_input["src_tokens"].repeat_interleave(k, 0),
            "src_lengths": net_input["src_lengths"].repeat_interleave(k, 0)}}
        self.beam_size = 1
        try:
            finalized = super().generate([_LengthCandidates(models[0], k), *models[1:]], rows,
                                         prefix_tokens, constraints)
        finally:
            self.beam_size = k
        best = []
        for start in range(0, len(finalized), k):
            candidates = finalized[start:start + k]
            scores = torch.stack([hypos[0]["score"] for hypos in candidates])
            best.append(candidates[int(scores.argmax())])
        return best
