"""Glancing Transformer (GLAT; Qian et al., 2021) as a fairseq model: ``--arch phenomt_glat``.

Training makes two decoder passes. The first, without gradient, predicts the whole target
from the decoder input (the uniformly copied source embeddings). Its Hamming distance ``d``
to the reference decides how many reference tokens to reveal: ``round(ratio * d)`` tokens at
random positions replace the copied embeddings in the decoder input of the second pass,
which is trained on the positions that stay hidden. The glancing ratio anneals linearly
(0.5 to 0.3 over training by default). Decoding is one parallel pass, as in any
fully non-autoregressive model.

Train with ``--task phenomt_translation_nat --noise full_mask --criterion nat_loss``: the
task tells the model the update number (for the annealing) and ``full_mask`` gives the
decoder input ``<s> <unk> .. <unk> </s>``, where ``<unk>`` marks a hidden position.
"""

from __future__ import annotations

import torch
from fairseq.models import register_model, register_model_architecture
from fairseq.models.nat import NATransformerModel
from fairseq.models.nat.nonautoregressive_transformer import (
    NATransformerDecoder,
    _uniform_assignment,
    base_architecture,
)
from fairseq.modules.transformer_sentence_encoder import init_bert_params
from torch import Tensor

# Qian et al. (2021) anneal the glancing ratio from 0.5 to 0.3 over training.
GLAT_RATIO_START = 0.5
GLAT_RATIO_END = 0.3


def add_glancing_args(parser, start: float, end: float) -> None:
    """Command-line options of the glancing schedule, shared by GLAT and DA-Transformer.

    Defaults are filled in by the architecture functions, as fairseq expects.
    """
    parser.add_argument("--glance-ratio-start", type=float,
                        help=f"glancing ratio at the first update (default {start})")
    parser.add_argument("--glance-ratio-end", type=float,
                        help=f"glancing ratio after the annealing (default {end})")
    parser.add_argument("--glance-anneal-steps", type=int,
                        help="updates over which the ratio moves linearly from start to end "
                             "(default: --max-update, i.e. the whole training)")


def glancing_defaults(args, start: float, end: float) -> None:
    """Fill in the glancing options the command line left out."""
    args.glance_ratio_start = getattr(args, "glance_ratio_start", start)
    args.glance_ratio_end = getattr(args, "glance_ratio_end", end)
    args.glance_anneal_steps = getattr(args, "glance_anneal_steps", None)


def glancing_ratio(step: int, start: float, end: float, anneal_steps: int) -> float:
    """The ratio at update ``step``: linear from ``start`` to ``end``, then constant."""
    if anneal_steps <= 0:
        return end
    progress = min(max(step, 0) / anneal_steps, 1.0)
    return start + (end - start) * progress


def anneal_steps_from_args(args) -> int:
    """``--glance-anneal-steps``, else the length of training (``--max-update``)."""
    steps = getattr(args, "glance_anneal_steps", None)
    if steps is None:
        steps = getattr(args, "max_update", 0) or 0
    return int(steps)


def glancing_count(distance: Tensor, ratio: float) -> Tensor:
    """Number of reference tokens to reveal: ``ratio * distance``, rounded half up."""
    return torch.floor(distance.float() * ratio + 0.5).long()


def sample_positions(candidates: Tensor, counts: Tensor) -> Tensor:
    """Choose ``counts[b]`` positions uniformly at random among ``candidates[b]``.

    ``candidates`` is a ``[B, T]`` boolean mask; the result is a mask inside it. Counts
    larger than the number of candidates reveal every candidate.
    """
    noise = torch.rand(candidates.shape, device=candidates.device)
    # Non-candidates sort after every candidate, so the first ``count`` ranks are candidates.
    noise = noise.masked_fill(~candidates, 2.0)
    ranks = noise.argsort(dim=1).argsort(dim=1)
    return (ranks < counts.unsqueeze(1)) & candidates


def glance(decoder_input: Tensor, targets: Tensor, predictions: Tensor, hidden: int,
           ratio: float) -> Tensor:
    """The decoder input of the second pass: some hidden positions get the reference token.

    ``hidden`` is the token id that marks a hidden position in ``decoder_input`` (``<unk>``).
    The Hamming distance counts the hidden positions where ``predictions`` (the first pass's
    argmax) differ from ``targets``.
    """
    candidates = decoder_input.eq(hidden)
    distance = (predictions.ne(targets) & candidates).sum(dim=1)
    revealed = sample_positions(candidates, glancing_count(distance, ratio))
    return torch.where(revealed, targets, decoder_input)


def copy_positions(src_masks: Tensor, tgt_masks: Tensor) -> Tensor:
    """For each target position, the source position whose embedding it copies: target
    position j of a sentence of T tokens reads source token round(j (S-1)/(T-1)) of S.

    Source tokens are counted from each sentence's first non-padding position, so left- and
    right-padded batches copy the same tokens. fairseq's own copy counts from position 0, which
    assumes right padding, while its translation tasks pad sources on the left: a sentence then
    copies padding, and what it copies depends on the longest sentence of its batch (fairseq
    issue #1316). A model trained that way memorises batch-dependent inputs and decodes its
    own training data badly in any other batch.
    """
    first = src_masks.long().argmax(dim=1, keepdim=True)  # first True: the first real token
    positions = _uniform_assignment(src_masks.sum(1), tgt_masks.sum(1)) + first
    return positions.masked_fill(~tgt_masks, 0)


class GlancingDecoder(NATransformerDecoder):
    """NAT decoder whose input mixes copied source embeddings and revealed reference tokens.

    A position whose input token is ``<unk>`` is hidden and gets the uniformly copied source
    embedding (with ``--src-embedding-copy``); any other token (a revealed reference token,
    ``<s>``, ``</s>``) gets its own word embedding.
    """

    def forward_copying_source(self, src_embeds: Tensor, src_masks: Tensor,
                               tgt_masks: Tensor) -> Tensor:
        positions = copy_positions(src_masks, tgt_masks)
        return torch.gather(src_embeds, 1, positions.unsqueeze(-1).expand(
            *positions.size(), src_embeds.size(-1)))

    def forward_embedding(self, prev_output_tokens: Tensor, states: Tensor | None = None):
        if states is not None:
            words = self.embed_scale * self.embed_tokens(prev_output_tokens)
            if self.project_in_dim is not None:
                words = self.project_in_dim(words)
            shown = prev_output_tokens.ne(self.unk).unsqueeze(-1)
            states = torch.where(shown, words, states)
        return super().forward_embedding(prev_output_tokens, states)


class GlancingModel(NATransformerModel):
    """What GLAT and DA-Transformer share: a decoder class of their own (BERT-initialised
    like fairseq's NAT models) and a glancing ratio annealed with the update count."""

    decoder_class: type[NATransformerDecoder]

    def __init__(self, args, encoder, decoder):
        super().__init__(args, encoder, decoder)
        self.num_updates = 0

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens):
        decoder = cls.decoder_class(args, tgt_dict, embed_tokens)
        if getattr(args, "apply_bert_init", False):
            decoder.apply(init_bert_params)
        return decoder

    def set_num_updates(self, num_updates: int) -> None:
        self.num_updates = num_updates
        super().set_num_updates(num_updates)

    def current_glancing_ratio(self) -> float:
        return glancing_ratio(self.num_updates, self.args.glance_ratio_start,
                              self.args.glance_ratio_end, anneal_steps_from_args(self.args))


@register_model("phenomt_glat")
class GlancingTransformerModel(GlancingModel):
    """GLAT: a vanilla NAT (copied source input, length prediction) with glancing training."""

    decoder_class = GlancingDecoder

    @staticmethod
    def add_args(parser):
        NATransformerModel.add_args(parser)
        add_glancing_args(parser, start=GLAT_RATIO_START, end=GLAT_RATIO_END)

    def forward(self, src_tokens, src_lengths, prev_output_tokens, tgt_tokens, **kwargs):
        encoder_out = self.encoder(src_tokens, src_lengths=src_lengths, **kwargs)
        length_out = self.decoder.forward_length(normalize=False, encoder_out=encoder_out)
        length_tgt = self.decoder.forward_length_prediction(length_out, encoder_out, tgt_tokens)

        decoder_input = prev_output_tokens
        ratio = self.current_glancing_ratio()
        if self.training and ratio > 0:
            with torch.no_grad():
                first_pass = self.decoder(normalize=False, prev_output_tokens=prev_output_tokens,
                                          encoder_out=encoder_out)
            decoder_input = glance(prev_output_tokens, tgt_tokens, first_pass.argmax(-1),
                                   self.unk, ratio)
        word_ins_out = self.decoder(normalize=False, prev_output_tokens=decoder_input,
                                    encoder_out=encoder_out)
        return {
            "word_ins": {
                "out": word_ins_out,
                "tgt": tgt_tokens,
                # Loss on the positions that stayed hidden, as in GLAT.
                "mask": decoder_input.eq(self.unk),
                "ls": self.args.label_smoothing,
                "nll_loss": True,
            },
            "length": {
                "out": length_out,
                "tgt": length_tgt,
                "factor": self.decoder.length_loss_factor,
            },
        }

    def forward_decoder(self, decoder_out, encoder_out, decoding_format=None, **kwargs):
        """One parallel pass that fills the hidden positions.

        Unlike fairseq's vanilla NAT, ``<s>`` and ``</s>`` stay as given: the model is only
        trained on hidden positions, so what it predicts at the ends is meaningless.
        """
        tokens = decoder_out.output_tokens
        hidden = tokens.eq(self.unk)
        scores, predicted = self.decoder(normalize=True, prev_output_tokens=tokens,
                                         encoder_out=encoder_out,
                                         step=decoder_out.step).max(-1)
        tokens = torch.where(hidden, predicted, tokens)
        scores = torch.where(hidden, scores, decoder_out.output_scores)
        history = decoder_out.history
        if history is not None:
            history.append(tokens.clone())
        return decoder_out._replace(output_tokens=tokens, output_scores=scores, attn=None,
                                    history=history)


@register_model_architecture("phenomt_glat", "phenomt_glat")
def glat_base_architecture(args) -> None:
    """Transformer-base sizes; GLAT's decoder input is the copied source embeddings."""
    args.src_embedding_copy = getattr(args, "src_embedding_copy", True)
    glancing_defaults(args, start=GLAT_RATIO_START, end=GLAT_RATIO_END)
    base_architecture(args)

