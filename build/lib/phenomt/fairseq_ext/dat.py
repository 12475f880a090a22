"""Directed Acyclic Transformer (DA-Transformer; Huang et al., 2022): ``--arch phenomt_dat``.

The decoder has ``L = upsample_scale x source length`` positions (8 in the paper). Each
position is a vertex of a directed acyclic graph: it predicts a token distribution and, from
its hidden state, link (transition) scores to every later vertex. A translation is a path
from the first to the last vertex; training maximises the likelihood summed over all paths
(:mod:`dat_dp`), so the model need not commit to one alignment of target tokens to
positions.

Glancing training follows DA-Transformer: a first pass without gradient finds the most
probable path of the reference (Viterbi), the Hamming distance between the tokens predicted
on that path and the reference sets how many reference tokens to reveal, and those tokens
are placed in the decoder input at their vertices on the path. The DAG loss of the second
pass covers the whole reference. The ratio anneals linearly, 0.5 to 0.1 by default
(the paper anneals over 200k of 300k updates: ``--glance-anneal-steps 200000``).

Decoding is a single pass: ``greedy`` (most probable link from each vertex) or
``lookahead`` (link and next token together), chosen by ``--dat-decode-strategy`` and
changeable at generation time with
``--model-overrides "{'dat_decode_strategy': 'lookahead'}"``.

Train with ``--task phenomt_translation_nat --noise full_mask --criterion nat_loss``; the
model returns its DAG loss to ``nat_loss`` ready-made, as fairseq's CRF NAT does (the logs
show it as ``word_ins``; ``nll_loss`` stays 0).

Deviations from the paper, for a small CPU-friendly implementation:
- one link head on the decoder states, as in the paper's formulation; the reference code's
  multi-head gated links with extra positional features are not used;
- if ``upsample_scale x source length`` is shorter than a training target, the graph is
  lengthened to the target length so that a path exists (the reference code filters such
  pairs out of the data instead).
"""

from __future__ import annotations

import math

import torch
from fairseq.iterative_refinement_generator import DecoderOut
from fairseq.models import register_model, register_model_architecture
from fairseq.models.nat import NATransformerModel
from fairseq.models.nat.nonautoregressive_transformer import (
    NATransformerDecoder,
    base_architecture,
)
from torch import Tensor, nn

from .dat_dp import (
    dag_best_path,
    dag_decode,
    dag_log_likelihood,
    emission_scores,
    link_log_probs,
)
from .glat import (
    GlancingModel,
    add_glancing_args,
    glancing_count,
    glancing_defaults,
    sample_positions,
)

# Huang et al. (2022): graph size 8x the source, glancing ratio 0.5 annealed to 0.1.
DAT_UPSAMPLE_SCALE = 8.0
DAT_RATIO_START = 0.5
DAT_RATIO_END = 0.1


def graph_lengths_for(source_lengths: Tensor, scale: float, cap: int,
                      target_lengths: Tensor | None = None) -> Tensor:
    """Number of vertices per sentence: ``scale x source length``, at least 2, at most ``cap``.

    With ``target_lengths`` (training), never shorter than the target, so a path exists.
    """
    lengths = torch.floor(source_lengths.float() * scale).long().clamp(min=2, max=cap)
    if target_lengths is not None:
        lengths = torch.maximum(lengths, target_lengths)
    return lengths


def graph_input(lengths: Tensor, bos: int, eos: int, unk: int, pad: int) -> Tensor:
    """Decoder input ``<s> <unk> .. <unk> </s>`` of each graph's length, right-padded."""
    index = torch.arange(int(lengths.max()), device=lengths.device)[None, :]
    tokens = torch.full((lengths.size(0), index.size(1)), unk, dtype=torch.long,
                        device=lengths.device)
    tokens = tokens.masked_fill(index >= lengths[:, None], pad)
    tokens[:, 0] = bos
    return tokens.scatter(1, (lengths - 1).unsqueeze(1), eos)


def place_glanced(decoder_input: Tensor, targets: Tensor, path: Tensor,
                  revealed: Tensor) -> Tensor:
    """Write the ``revealed`` reference tokens into the decoder input at their path vertices."""
    current = decoder_input.gather(1, path)
    return decoder_input.scatter(1, path, torch.where(revealed, targets, current))


class DAGDecoder(NATransformerDecoder):
    """NAT decoder that also scores links between its positions."""

    def __init__(self, args, dictionary, embed_tokens, no_encoder_attn=False):
        super().__init__(args, dictionary, embed_tokens, no_encoder_attn=no_encoder_attn)
        dim = args.decoder_embed_dim
        self.link_query = nn.Linear(dim, dim)
        self.link_key = nn.Linear(dim, dim)

    def graph(self, decoder_input: Tensor, encoder_out, graph_lengths: Tensor
              ) -> tuple[Tensor, Tensor]:
        """Token logits ``[B, L, V]`` and link log-probabilities ``[B, L, L]``."""
        features, _ = self.extract_features(decoder_input, encoder_out=encoder_out,
                                            embedding_copy=False)
        query, key = self.link_query(features), self.link_key(features)
        link_scores = query.float() @ key.float().transpose(1, 2) / math.sqrt(query.size(-1))
        return self.output_layer(features), link_log_probs(link_scores, graph_lengths)


@register_model("phenomt_dat")
class DATransformerModel(GlancingModel):
    """DA-Transformer: DAG decoder, DAG loss with glancing, greedy/lookahead decoding."""

    decoder_class = DAGDecoder

    @property
    def allow_length_beam(self) -> bool:
        return False  # the graph size is fixed by the source length

    @property
    def allow_ensemble(self) -> bool:
        return False

    @staticmethod
    def add_args(parser):
        NATransformerModel.add_args(parser)
        add_glancing_args(parser, start=DAT_RATIO_START, end=DAT_RATIO_END)
        parser.add_argument("--dat-upsample-scale", type=float,
                            help=f"graph size = this x source length (default "
                                 f"{DAT_UPSAMPLE_SCALE:g})")
        parser.add_argument("--dat-decode-strategy", choices=["greedy", "lookahead"],
                            help="how to walk the graph at inference (default greedy)")

    def _graph_lengths(self, src_tokens: Tensor, target_lengths: Tensor | None = None) -> Tensor:
        source_lengths = src_tokens.ne(self.encoder.padding_idx).sum(dim=1)
        return graph_lengths_for(source_lengths, self.args.dat_upsample_scale,
                                 self.decoder.max_positions(), target_lengths)

    def _glanced_input(self, decoder_input: Tensor, encoder_out, graph_lengths: Tensor,
                       tgt_tokens: Tensor, target_lengths: Tensor, ratio: float) -> Tensor:
        """Reveal reference tokens on the most probable path (first pass, no gradient)."""
        with torch.no_grad():
            logits, links = self.decoder.graph(decoder_input, encoder_out, graph_lengths)
            emissions = emission_scores(logits, tgt_tokens)
            path = dag_best_path(emissions, links, graph_lengths, target_lengths)
            predicted = logits.argmax(dim=-1).gather(1, path)
        # <s> and </s> sit on the first and last vertex and are already in the input.
        words = tgt_tokens.ne(self.pad) & tgt_tokens.ne(self.bos) & tgt_tokens.ne(self.eos)
        distance = (predicted.ne(tgt_tokens) & words).sum(dim=1)
        revealed = sample_positions(words, glancing_count(distance, ratio))
        return place_glanced(decoder_input, tgt_tokens, path, revealed)

    def forward(self, src_tokens, src_lengths, prev_output_tokens, tgt_tokens, **kwargs):
        encoder_out = self.encoder(src_tokens, src_lengths=src_lengths, **kwargs)
        target_lengths = tgt_tokens.ne(self.pad).sum(dim=1)
        graph_lengths = self._graph_lengths(src_tokens, target_lengths)
        decoder_input = graph_input(graph_lengths, self.bos, self.eos, self.unk, self.pad)
        ratio = self.current_glancing_ratio()
        if self.training and ratio > 0:
            decoder_input = self._glanced_input(decoder_input, encoder_out, graph_lengths,
                                                tgt_tokens, target_lengths, ratio)
        logits, links = self.decoder.graph(decoder_input, encoder_out, graph_lengths)
        log_likelihood = dag_log_likelihood(emission_scores(logits, tgt_tokens), links,
                                            graph_lengths, target_lengths)
        # Per-token negative log-likelihood, averaged over sentences (as DA-Transformer).
        dag_loss = -(log_likelihood / target_lengths.float()).mean()
        outputs = {"word_ins": {"loss": dag_loss, "factor": 1.0}}
        # The length predictor is unused unless asked for (nat_loss would log 0/0 for a
        # factor of 0); legacy_ddp gives its parameters zero gradients.
        if self.decoder.length_loss_factor > 0:
            length_out = self.decoder.forward_length(normalize=False, encoder_out=encoder_out)
            outputs["length"] = {
                "out": length_out,
                "tgt": self.decoder.forward_length_prediction(length_out, encoder_out,
                                                              tgt_tokens),
                "factor": self.decoder.length_loss_factor,
            }
        return outputs

    def initialize_output_tokens(self, encoder_out, src_tokens):
        graph_lengths = self._graph_lengths(src_tokens)
        tokens = graph_input(graph_lengths, self.bos, self.eos, self.unk, self.pad)
        return DecoderOut(output_tokens=tokens,
                          output_scores=torch.zeros(tokens.shape, device=tokens.device),
                          attn=None, step=0, max_step=0, history=None)

    def forward_decoder(self, decoder_out, encoder_out, decoding_format=None, **kwargs):
        decoder_input = decoder_out.output_tokens
        graph_lengths = decoder_input.ne(self.pad).sum(dim=1)
        logits, links = self.decoder.graph(decoder_input, encoder_out, graph_lengths)
        decoded = dag_decode(torch.log_softmax(logits.float(), dim=-1), links, graph_lengths,
                             self.args.dat_decode_strategy)
        tokens, scores = self._finish(decoded.tokens, decoded.scores, decoded.lengths)
        history = decoder_out.history
        if history is not None:
            history.append(tokens.clone())
        return decoder_out._replace(output_tokens=tokens, output_scores=scores.type_as(
            decoder_out.output_scores), attn=None, history=history)

    def _finish(self, tokens: Tensor, scores: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        """Pad past each path's end and pin ``<s>``/``</s>`` on its first and last vertex."""
        index = torch.arange(tokens.size(1), device=tokens.device)[None, :]
        tokens = tokens.masked_fill(index >= lengths[:, None], self.pad)
        tokens[:, 0] = self.bos
        tokens = tokens.scatter(1, (lengths - 1).unsqueeze(1), self.eos)
        return tokens, scores.masked_fill(index >= lengths[:, None], 0.0)


@register_model_architecture("phenomt_dat", "phenomt_dat")
def dat_base_architecture(args) -> None:
    """Transformer-base sizes with the DA-Transformer graph and glancing defaults."""
    args.dat_upsample_scale = getattr(args, "dat_upsample_scale", DAT_UPSAMPLE_SCALE)
    args.dat_decode_strategy = getattr(args, "dat_decode_strategy", "greedy")
    # The graph size comes from the source length, so no length predictor is trained.
    args.length_loss_factor = getattr(args, "length_loss_factor", 0.0)
    glancing_defaults(args, start=DAT_RATIO_START, end=DAT_RATIO_END)
    base_architecture(args)
