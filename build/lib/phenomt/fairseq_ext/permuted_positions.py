"""PERPOSEMB: a Transformer whose encoder reads position p with the positional embedding of σ(p).

Registered names (load with ``--user-dir src/phenomt/fairseq_ext``):

* model ``transformer_permuted_positions``;
* architectures ``transformer_permuted_positions`` (Transformer base),
  ``transformer_permuted_positions_iwslt_de_en`` and ``transformer_permuted_positions_tiny``.

The permutation is the required option ``--position-permutation "11,5,9,..."`` (σ in one-line
notation, 0-based). It is stored with the model's arguments, so ``fairseq-generate`` restores it
from the checkpoint. Only the encoder changes; the decoder keeps ordinary positions. Learned
(``--encoder-learned-pos``) and sinusoidal positional embeddings both work.

Positions are counted from each sentence's first non-padding token (fairseq left-pads source
sentences; ``fairseq.utils.make_positions`` numbers tokens from ``padding_idx + 1``). Position
p (0-based) with p < len(σ) gets the embedding of position σ(p); positions from len(σ) on, such
as the end-of-sentence token of a sentence of exactly len(σ) words, keep their own; padding
keeps the padding embedding (zero). A shorter sentence still reads its positions through σ, so
it may use embeddings of positions beyond its length. σ acts on model tokens: for the exact
counterpart of the PERMUTED setting of ``phenomt.ldd.locality``, do not split the source into
subwords.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from fairseq import utils
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import (
    TransformerModel,
    base_architecture,
    tiny_architecture,
    transformer_iwslt_de_en,
)
from fairseq.modules import LearnedPositionalEmbedding, SinusoidalPositionalEmbedding
from torch import Tensor, nn

from phenomt.core.permutation import format_permutation, parse_permutation, validate_permutation

MODEL_NAME = "transformer_permuted_positions"


class PermutedPositionalEmbedding(nn.Module):
    """Wraps a fairseq positional embedding so that position p reads the row of σ(p)."""

    def __init__(self, inner: nn.Module, permutation: Sequence[int], padding_idx: int):
        super().__init__()
        if not isinstance(inner, LearnedPositionalEmbedding | SinusoidalPositionalEmbedding):
            raise TypeError(f"cannot permute a {type(inner).__name__}")
        perm = validate_permutation(permutation)
        if len(perm) > inner.max_positions:
            raise ValueError(f"a permutation of {len(perm)} positions exceeds the "
                             f"{inner.max_positions} the positional embedding has")
        self.inner = inner
        self.padding_idx = padding_idx
        self.max_positions = inner.max_positions
        self.onnx_trace = False
        # Derived from the model's arguments, so not saved in the state dict.
        self.register_buffer("permutation", torch.tensor(perm, dtype=torch.long),
                             persistent=False)

    def extra_repr(self) -> str:
        return f"permutation={format_permutation(self.permutation.tolist())}"

    def permuted_positions(self, tokens: Tensor) -> Tensor:
        """fairseq position numbers for ``tokens`` (bsz x len), permuted by σ.

        Padding stays ``padding_idx``; the p-th token (0-based) of a sentence gets
        ``padding_idx + 1 + σ(p)`` for p < len(σ), else ``padding_idx + 1 + p``.
        """
        positions = utils.make_positions(tokens, self.padding_idx)
        first = self.padding_idx + 1
        index = positions - first  # 0-based within the sentence; -1 on padding
        size = self.permutation.numel()
        inside = (index >= 0) & (index < size)
        mapped = self.permutation[index.clamp(0, size - 1)] + first
        return torch.where(inside, mapped, positions)

    def _sinusoidal_table(self, rows: int) -> Tensor:
        """The sinusoidal table with at least ``rows`` rows, grown as fairseq's module does."""
        inner = self.inner
        if rows > inner.weights.size(0):
            inner.weights = SinusoidalPositionalEmbedding.get_embedding(
                rows, inner.embedding_dim, inner.padding_idx).to(inner.weights)
        return inner.weights

    def forward(self, input: Tensor, incremental_state=None, positions=None) -> Tensor:
        """Positional embeddings (bsz x len x dim) for the source tokens ``input``."""
        if incremental_state is not None or positions is not None:
            raise ValueError("permuted positions are for the encoder: whole sentences only")
        permuted = self.permuted_positions(input)
        if isinstance(self.inner, LearnedPositionalEmbedding):
            return F.embedding(permuted, self.inner.weight, self.padding_idx)
        rows = int(permuted.max()) + 1 if permuted.numel() else 0
        return F.embedding(permuted, self._sinusoidal_table(rows)).detach()


@register_model(MODEL_NAME)
class PermutedPositionsTransformerModel(TransformerModel):
    """fairseq's Transformer with :class:`PermutedPositionalEmbedding` in the encoder."""

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--position-permutation", type=str, metavar="PERM",
                            help="σ as comma-separated 0-based positions, e.g. '2,0,3,1': "
                                 "encoder position p uses the positional embedding of σ(p)")

    @classmethod
    def build_model(cls, args, task):
        text = getattr(args, "position_permutation", None)
        if not text:
            raise ValueError(f"{MODEL_NAME} needs --position-permutation")
        perm = parse_permutation(text)
        if getattr(args, "no_token_positional_embeddings", False):
            raise ValueError(f"{MODEL_NAME} cannot permute positional embeddings that are "
                             "switched off (--no-token-positional-embeddings)")
        model = super().build_model(args, task)
        encoder = model.encoder
        encoder.embed_positions = PermutedPositionalEmbedding(
            encoder.embed_positions, perm, encoder.padding_idx)
        return model


@register_model_architecture(MODEL_NAME, MODEL_NAME)
def permuted_positions_base(args):
    base_architecture(args)


@register_model_architecture(MODEL_NAME, f"{MODEL_NAME}_iwslt_de_en")
def permuted_positions_iwslt_de_en(args):
    transformer_iwslt_de_en(args)


@register_model_architecture(MODEL_NAME, f"{MODEL_NAME}_tiny")
def permuted_positions_tiny(args):
    tiny_architecture(args)
