"""Doc-Transformer (Zhang et al., 2018): a Transformer that also reads the previous source
sentences of the document.

Training and decoding with fairseq
----------------------------------
Data. Binarize the sentence pairs as usual, then the context side (``phenomt doc context``:
line i = the previous two source sentences of its document, empty at a document start; same
tokenization and BPE as the source) with the *source* dictionary into the same directory::

    fairseq-preprocess -s zh -t en --trainpref P/train --validpref P/valid --testpref P/test \\
        --destdir BIN [--srcdict/--tgtdict of step 1 when BIN holds step 2's data]
    fairseq-preprocess --only-source -s ctx --srcdict BIN/dict.zh.txt --destdir BIN \\
        --trainpref P/train --validpref P/valid --testpref P/test

The second call reads ``P/train.ctx`` etc. and writes ``BIN/{train,valid,test}.ctx-None.ctx.*``
and ``BIN/dict.ctx.txt`` (checked to equal the source dictionary). Always pass ``-s``/``-t`` to
fairseq-train and fairseq-generate: fairseq's guess of the pair may pick the context files.

Step 1, sentence-level parameters: the ordinary Transformer on sentence pairs, no plugin::

    fairseq-train BIN1 -s zh -t en --task translation --arch transformer [SIZES] \\
        --save-dir S1 [optimiser options]

Step 2, document-level parameters only, from step 1's checkpoint, on document data with its
context. The architecture must be step 1's counterpart (``transformer`` -> ``doc_transformer``,
``transformer_tiny`` -> ``doc_transformer_tiny``) with the same ``[SIZES]``::

    fairseq-train BIN2 -s zh -t en --user-dir src/phenomt/fairseq_ext \\
        --task translation_doc --arch doc_transformer [SIZES] \\
        --doc-freeze-sentence-params --finetune-from-model S1/checkpoint_best.pt \\
        --save-dir S2 [optimiser options] [--context-encoder-layers N]

``--finetune-from-model`` loads step 1's weights and resets optimiser, scheduler, meters and
data iterator on the first launch; a restart resumes from ``S2/checkpoint_last.pt``. The
sentence-level checkpoint lacks the document-level tensors, which keep their initialisation
(:meth:`DocTransformerModel.load_state_dict`). ``--doc-freeze-sentence-params`` sets
``requires_grad=False`` on every other parameter; fairseq's optimiser then skips them.

Decoding: the test split needs its context binarized as above; the task passes it::

    fairseq-generate BIN2 -s zh -t en --user-dir src/phenomt/fairseq_ext \\
        --task translation_doc --path S2/checkpoint_best.pt --gen-subset test [--beam 5 ...]

``--context-suffix`` (default ``ctx``) names the context side. fairseq-interactive has no
context side and is not supported.

The model
---------
* A context encoder (``--context-encoder-layers`` self-attention layers, default: as many as
  the source encoder; 1 in ``doc_transformer_tiny``) reads the previous sentences, embedded by
  the source encoder's (shared) embeddings.
* Every encoder layer gets a context-attention sublayer between self-attention and the
  feed-forward network; every decoder layer one between self-attention and encoder-decoder
  attention. Each is a usual residual sublayer whose output c is mixed with its input h (the
  previous sublayer's output) by a learnt gate: ``λ = σ(W[h; c] + b)``, output
  ``h + λ ⊙ (c − h) = (1 − λ) ⊙ h + λ ⊙ c``. Closed gates (λ = 0, :meth:`set_context_gate`)
  give exactly the sentence-level Transformer.
* Document-level parameters: the context encoder, the context-attention sublayers and the
  gates (:func:`is_document_parameter`); everything else is sentence-level.

Simplifications: the gated sublayer keeps fairseq's residual + layer-norm form inside the gate
(post-norm or pre-norm as the model is configured), so that a closed gate is the identity;
fairseq's optional NormFormer / head-scaling / cross-self-attention variants and activation
checkpointing are rejected rather than supported; a context longer than
``--max-source-positions`` keeps its last tokens; a document's first sentence has an empty
context, which the context encoder reads as ``</s>`` alone.
"""

import contextlib
import itertools
import logging
import os
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch
from fairseq import utils
from fairseq.data import ConcatDataset, FairseqDataset, LanguagePairDataset, data_utils
from fairseq.models import register_model, register_model_architecture
from fairseq.models.transformer import (
    TransformerConfig,
    TransformerDecoderBase,
    TransformerEncoderBase,
    TransformerModel,
    base_architecture,
    tiny_architecture,
)
from fairseq.modules import FairseqDropout, LayerNorm, MultiheadAttention
from fairseq.modules.transformer_layer import (
    TransformerDecoderLayerBase,
    TransformerEncoderLayerBase,
)
from fairseq.tasks import register_task
from fairseq.tasks.translation import TranslationConfig, TranslationTask
from torch import Tensor, nn

logger = logging.getLogger(__name__)

MODEL_NAME = "doc_transformer"
TASK_NAME = "translation_doc"
# Submodule names that hold document-level parameters.
DOCUMENT_MODULES = frozenset({"context_encoder", "context_attention"})
# fairseq options whose layer variants the document layers do not implement.
_UNSUPPORTED_OPTIONS = ("cross_self_attention", "scale_attn", "scale_heads", "scale_fc",
                        "scale_resids", "checkpoint_activations", "offload_activations")


def is_document_parameter(name: str) -> bool:
    """Whether the parameter (or buffer) ``name`` belongs to the document-level modules."""
    return any(part in DOCUMENT_MODULES for part in name.split("."))


class ContextMemory(NamedTuple):
    """The context encoder's output: states ``(ctx_len, batch, dim)``, padding ``(batch,
    ctx_len)`` (True on padding)."""

    states: Tensor
    padding_mask: Tensor


def _residual_sublayer(x: Tensor, norm: nn.Module, normalize_before: bool,
                       dropout: nn.Module, body: Callable[[Tensor], tuple[Tensor, Any]]
                       ) -> tuple[Tensor, Any]:
    """fairseq's residual sublayer: ``norm(x + dropout(body(x)))`` (post-norm) or
    ``x + dropout(body(norm(x)))`` (pre-norm). Returns the output and ``body``'s extra."""
    residual = x
    if normalize_before:
        x = norm(x)
    x, extra = body(x)
    x = dropout(x)
    x = residual + x
    if not normalize_before:
        x = norm(x)
    return x, extra


class ContextGate(nn.Module):
    """Mixes a sublayer input h with the context sublayer's output c:
    ``λ = σ(W[h; c] + b)``, output ``h + λ ⊙ (c − h)``.

    ``forced`` pins λ to a constant (0 closes the gate: the output is h exactly).
    """

    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(2 * dim, dim)
        self.forced: float | None = None

    def forward(self, h: Tensor, c: Tensor) -> Tensor:
        if self.forced is None:
            gate = torch.sigmoid(self.proj(torch.cat([h, c], dim=-1)))
        else:
            gate = torch.full_like(h, self.forced)
        return h + gate * (c - h)


class ContextAttention(nn.Module):
    """A gated sublayer that attends from the layer's states to the context memory."""

    def __init__(self, embed_dim: int, context_dim: int, heads: int, cfg: TransformerConfig,
                 normalize_before: bool):
        super().__init__()
        self.attn = MultiheadAttention(embed_dim, heads, kdim=context_dim, vdim=context_dim,
                                       dropout=cfg.attention_dropout,
                                       encoder_decoder_attention=True)
        self.layer_norm = LayerNorm(embed_dim, export=cfg.export)
        self.dropout_module = FairseqDropout(cfg.dropout, module_name=type(self).__name__)
        self.gate = ContextGate(embed_dim)
        self.normalize_before = normalize_before

    def forward(self, x: Tensor, memory: ContextMemory,
                incremental_state: dict[str, dict[str, Tensor | None]] | None = None
                ) -> Tensor:
        def attend(query: Tensor) -> tuple[Tensor, None]:
            # static_kv: while decoding, the projected context is computed once and cached.
            out, _ = self.attn(query=query, key=memory.states, value=memory.states,
                               key_padding_mask=memory.padding_mask,
                               incremental_state=incremental_state, static_kv=True,
                               need_weights=False)
            return out, None

        context, _ = _residual_sublayer(x, self.layer_norm, self.normalize_before,
                                        self.dropout_module, attend)
        return self.gate(x, context)


class _ReadsContext:
    """A layer that reads the context memory its stack sets for one forward call: fairseq's
    layer loops pass fixed arguments only, so the memory travels beside them."""

    context: ContextMemory | None = None

    def _memory(self) -> ContextMemory:
        if self.context is None:
            raise RuntimeError(f"{type(self).__name__} runs only inside a document-level "
                               "encoder or decoder, which provide the context")
        return self.context


@contextlib.contextmanager
def _context_for(layers: Iterable[nn.Module], memory: ContextMemory) -> Iterator[None]:
    """Give ``layers`` the context memory for the duration of the block."""
    layers = list(layers)
    for layer in layers:
        layer.context = memory
    try:
        yield
    finally:
        for layer in layers:
            layer.context = None


class DocEncoderLayer(_ReadsContext, TransformerEncoderLayerBase):
    """Encoder layer: self-attention, gated context attention, feed-forward network."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__(cfg)
        self.context_attention = ContextAttention(
            self.embed_dim, cfg.encoder.embed_dim, cfg.encoder.attention_heads, cfg,
            self.normalize_before)

    def _feed_forward(self, x: Tensor) -> tuple[Tensor, None]:
        x = self.activation_dropout_module(self.activation_fn(self.fc1(x)))
        return self.fc2(x), None

    def forward(self, x: Tensor, encoder_padding_mask: Tensor | None,
                attn_mask: Tensor | None = None) -> Tensor:
        if attn_mask is not None:  # fairseq's encoders never pass one
            raise NotImplementedError("the document-level encoder layer takes no attn_mask")

        def self_attend(h: Tensor) -> tuple[Tensor, None]:
            out, _ = self.self_attn(query=h, key=h, value=h,
                                    key_padding_mask=encoder_padding_mask, need_weights=False)
            return out, None

        x, _ = _residual_sublayer(x, self.self_attn_layer_norm, self.normalize_before,
                                  self.dropout_module, self_attend)
        x = self.context_attention(x, self._memory())
        x, _ = _residual_sublayer(x, self.final_layer_norm, self.normalize_before,
                                  self.dropout_module, self._feed_forward)
        return x


class DocDecoderLayer(_ReadsContext, TransformerDecoderLayerBase):
    """Decoder layer: self-attention, gated context attention, encoder-decoder attention,
    feed-forward network."""

    def __init__(self, cfg: TransformerConfig, no_encoder_attn: bool = False):
        super().__init__(cfg, no_encoder_attn=no_encoder_attn)
        self.context_attention = ContextAttention(
            self.embed_dim, cfg.encoder.embed_dim, cfg.decoder.attention_heads, cfg,
            self.normalize_before)

    def _feed_forward(self, x: Tensor) -> tuple[Tensor, None]:
        x = self.activation_dropout_module(self.activation_fn(self.fc1(x)))
        return self.fc2(x), None

    def forward(self, x: Tensor, encoder_out: Tensor | None = None,
                encoder_padding_mask: Tensor | None = None,
                incremental_state: dict[str, dict[str, Tensor | None]] | None = None,
                prev_self_attn_state: list[Tensor] | None = None,
                prev_attn_state: list[Tensor] | None = None,
                self_attn_mask: Tensor | None = None,
                self_attn_padding_mask: Tensor | None = None,
                need_attn: bool = False, need_head_weights: bool = False
                ) -> tuple[Tensor, Tensor | None, None]:
        if prev_self_attn_state is not None or prev_attn_state is not None:
            raise NotImplementedError("preset attention states are not supported")
        need_attn = need_attn or need_head_weights

        def self_attend(h: Tensor) -> tuple[Tensor, None]:
            out, _ = self.self_attn(query=h, key=h, value=h,
                                    key_padding_mask=self_attn_padding_mask,
                                    incremental_state=incremental_state, need_weights=False,
                                    attn_mask=self_attn_mask)
            return out, None

        def attend_source(h: Tensor) -> tuple[Tensor, Tensor | None]:
            return self.encoder_attn(query=h, key=encoder_out, value=encoder_out,
                                     key_padding_mask=encoder_padding_mask,
                                     incremental_state=incremental_state, static_kv=True,
                                     need_weights=need_attn or (not self.training
                                                                and self.need_attn),
                                     need_head_weights=need_head_weights)

        x, _ = _residual_sublayer(x, self.self_attn_layer_norm, self.normalize_before,
                                  self.dropout_module, self_attend)
        x = self.context_attention(x, self._memory(), incremental_state)
        attn = None
        if self.encoder_attn is not None and encoder_out is not None:
            x, attn = _residual_sublayer(x, self.encoder_attn_layer_norm,
                                         self.normalize_before, self.dropout_module,
                                         attend_source)
        x, _ = _residual_sublayer(x, self.final_layer_norm, self.normalize_before,
                                  self.dropout_module, self._feed_forward)
        return x, attn, None


class ContextEncoder(nn.Module):
    """Self-attention layers over the embedded previous sentences."""

    def __init__(self, cfg: TransformerConfig, num_layers: int):
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"the context encoder needs at least one layer, got {num_layers}")
        self.layers = nn.ModuleList(TransformerEncoderLayerBase(cfg) for _ in range(num_layers))
        self.layer_norm = (LayerNorm(cfg.encoder.embed_dim, export=cfg.export)
                           if cfg.encoder.normalize_before else None)

    def forward(self, x: Tensor, padding_mask: Tensor) -> Tensor:
        """``x``: embedded context ``(ctx_len, batch, dim)``; returns the same shape."""
        for layer in self.layers:
            x = layer(x, encoder_padding_mask=padding_mask)
        if self.layer_norm is not None:
            x = self.layer_norm(x)
        return x


class DocTransformerEncoder(TransformerEncoderBase):
    """fairseq's Transformer encoder with document layers and a context encoder.

    Its output adds ``context_out`` ``[(ctx_len, batch, dim)]`` and ``context_padding_mask``
    ``[(batch, ctx_len)]`` for the decoder.
    """

    def __init__(self, cfg: TransformerConfig, dictionary, embed_tokens: nn.Embedding):
        super().__init__(cfg, dictionary, embed_tokens)
        self.context_encoder: ContextEncoder | None = None

    def build_encoder_layer(self, cfg: TransformerConfig) -> DocEncoderLayer:
        return DocEncoderLayer(cfg)

    def build_context_encoder(self, num_layers: int) -> None:
        self.context_encoder = ContextEncoder(self.cfg, num_layers)

    def encode_context(self, ctx_tokens: Tensor) -> ContextMemory:
        """Embed the context with the source embeddings and run the context encoder."""
        if self.context_encoder is None:
            raise RuntimeError("build_context_encoder() was not called")
        padding_mask = ctx_tokens.eq(self.padding_idx)
        x, _ = self.forward_embedding(ctx_tokens)
        x = x * (1 - padding_mask.unsqueeze(-1).type_as(x))
        return ContextMemory(self.context_encoder(x.transpose(0, 1), padding_mask),
                             padding_mask)

    def forward(self, src_tokens: Tensor, src_lengths: Tensor | None = None,
                return_all_hiddens: bool = False, token_embeddings: Tensor | None = None,
                ctx_tokens: Tensor | None = None, ctx_lengths: Tensor | None = None
                ) -> dict[str, list[Tensor]]:
        """fairseq's encoder output for ``src_tokens`` with ``ctx_tokens`` ``(batch,
        ctx_len)`` as context (``ctx_lengths`` is accepted for fairseq's batches, unused)."""
        if ctx_tokens is None:
            raise ValueError(f"{MODEL_NAME} needs the previous sentences (ctx_tokens): train "
                             f"and decode with --task {TASK_NAME}")
        memory = self.encode_context(ctx_tokens)
        with _context_for(self.layers, memory):
            out = self.forward_scriptable(src_tokens, src_lengths, return_all_hiddens,
                                          token_embeddings)
        out["context_out"] = [memory.states]
        out["context_padding_mask"] = [memory.padding_mask]
        return out

    def reorder_encoder_out(self, encoder_out: dict[str, list[Tensor]], new_order: Tensor
                            ) -> dict[str, list[Tensor]]:
        """Reorder the batch (beam search), the context included."""
        out = super().reorder_encoder_out(encoder_out, new_order)
        out["context_out"] = [t.index_select(1, new_order) for t in encoder_out["context_out"]]
        out["context_padding_mask"] = [t.index_select(0, new_order)
                                       for t in encoder_out["context_padding_mask"]]
        return out


def context_memory(encoder_out: Mapping[str, list[Tensor]] | None) -> ContextMemory:
    """The context memory stored in a :class:`DocTransformerEncoder` output."""
    if not encoder_out or not encoder_out.get("context_out"):
        raise ValueError("the encoder output holds no context: use the document-level encoder")
    return ContextMemory(encoder_out["context_out"][0], encoder_out["context_padding_mask"][0])


class DocTransformerDecoder(TransformerDecoderBase):
    """fairseq's Transformer decoder whose layers also attend to the context."""

    def build_decoder_layer(self, cfg: TransformerConfig, no_encoder_attn: bool = False
                            ) -> DocDecoderLayer:
        return DocDecoderLayer(cfg, no_encoder_attn)

    def extract_features(self, prev_output_tokens: Tensor,
                         encoder_out: dict[str, list[Tensor]] | None,
                         incremental_state: dict[str, dict[str, Tensor | None]] | None = None,
                         full_context_alignment: bool = False,
                         alignment_layer: int | None = None,
                         alignment_heads: int | None = None) -> tuple[Tensor, dict]:
        with _context_for(self.layers, context_memory(encoder_out)):
            return self.extract_features_scriptable(
                prev_output_tokens, encoder_out, incremental_state, full_context_alignment,
                alignment_layer, alignment_heads)


@register_model(MODEL_NAME)
class DocTransformerModel(TransformerModel):
    """Doc-Transformer: fairseq's Transformer plus context encoder, context attention and
    gates (see the module docstring)."""

    @classmethod
    def add_args(cls, parser) -> None:
        super().add_args(parser)
        parser.add_argument("--context-encoder-layers", type=int, metavar="N",
                            help="layers of the context encoder")
        parser.add_argument("--doc-freeze-sentence-params", action="store_true",
                            help="train only the document-level parameters (step 2)")

    @classmethod
    def build_model(cls, args, task) -> "DocTransformerModel":
        doc_transformer_base(args)
        for name in _UNSUPPORTED_OPTIONS:
            if getattr(args, name, False):
                raise ValueError(f"{MODEL_NAME} does not support --{name.replace('_', '-')}")
        model = super().build_model(args, task)
        model.encoder.build_context_encoder(args.context_encoder_layers)
        if args.doc_freeze_sentence_params:
            model.freeze_sentence_parameters()
        return model

    @classmethod
    def build_encoder(cls, args, src_dict, embed_tokens) -> DocTransformerEncoder:
        return DocTransformerEncoder(TransformerConfig.from_namespace(args), src_dict,
                                     embed_tokens)

    @classmethod
    def build_decoder(cls, args, tgt_dict, embed_tokens) -> DocTransformerDecoder:
        cfg = TransformerConfig.from_namespace(args)
        return DocTransformerDecoder(cfg, tgt_dict, embed_tokens,
                                     no_encoder_attn=cfg.no_cross_attention)

    def forward(self, src_tokens: Tensor, src_lengths: Tensor, prev_output_tokens: Tensor,
                return_all_hiddens: bool = True, features_only: bool = False,
                alignment_layer: int | None = None, alignment_heads: int | None = None,
                ctx_tokens: Tensor | None = None, ctx_lengths: Tensor | None = None):
        encoder_out = self.encoder(src_tokens, src_lengths=src_lengths,
                                   return_all_hiddens=return_all_hiddens,
                                   ctx_tokens=ctx_tokens, ctx_lengths=ctx_lengths)
        return self.decoder(prev_output_tokens, encoder_out=encoder_out,
                            features_only=features_only, alignment_layer=alignment_layer,
                            alignment_heads=alignment_heads, src_lengths=src_lengths,
                            return_all_hiddens=return_all_hiddens)

    def document_parameter_names(self) -> list[str]:
        return [name for name, _ in self.named_parameters() if is_document_parameter(name)]

    def freeze_sentence_parameters(self) -> None:
        """Step 2: only the document-level parameters keep ``requires_grad``."""
        frozen = 0
        for name, param in self.named_parameters():
            if not is_document_parameter(name):
                param.requires_grad_(False)
                frozen += param.numel()
        trainable = sum(p.numel() for p in self.parameters() if p.requires_grad)
        logger.info("sentence-level parameters frozen: %d; document-level trained: %d",
                    frozen, trainable)

    def set_context_gate(self, value: float | None) -> None:
        """Pin every gate's λ to ``value`` (0: closed, the sentence-level model); None lets
        the gates compute λ again."""
        if value is not None and not 0.0 <= value <= 1.0:
            raise ValueError(f"a gate value lies in [0, 1], got {value}")
        for module in self.modules():
            if isinstance(module, ContextGate):
                module.forced = value

    def load_state_dict(self, state_dict, strict: bool = True, model_cfg=None, args=None):
        """Load a checkpoint; a sentence-level one (no document-level tensor at all, e.g.
        step 1's Transformer) leaves the document-level parameters as initialised."""
        if not any(is_document_parameter(name) for name in state_dict):
            own = {k: v for k, v in self.state_dict().items() if is_document_parameter(k)}
            filled = OrderedDict(state_dict)
            filled.update(own)
            metadata = getattr(state_dict, "_metadata", None)
            if metadata is not None:
                filled._metadata = metadata  # keeps fairseq's per-module state versions
            logger.info("sentence-level checkpoint: %d document-level tensors keep their "
                        "initial values", len(own))
            state_dict = filled
        return super().load_state_dict(state_dict, strict=strict, model_cfg=model_cfg,
                                       args=args)


def _context_defaults(args) -> None:
    if getattr(args, "context_encoder_layers", None) is None:
        args.context_encoder_layers = args.encoder_layers
    args.doc_freeze_sentence_params = getattr(args, "doc_freeze_sentence_params", False)


@register_model_architecture(MODEL_NAME, MODEL_NAME)
def doc_transformer_base(args) -> None:
    """Transformer base (fairseq's ``transformer``) plus the context encoder."""
    base_architecture(args)
    _context_defaults(args)


@register_model_architecture(MODEL_NAME, f"{MODEL_NAME}_tiny")
def doc_transformer_tiny(args) -> None:
    """fairseq's ``transformer_tiny`` plus a one-layer context encoder (tests, smoke runs)."""
    if getattr(args, "context_encoder_layers", None) is None:
        args.context_encoder_layers = 1
    tiny_architecture(args)
    _context_defaults(args)


# --- data ---------------------------------------------------------------------------------

class ContextPairDataset(FairseqDataset):
    """A :class:`LanguagePairDataset` whose batches also carry each sentence's context
    (``net_input["ctx_tokens"]``, ``net_input["ctx_lengths"]``), padded like the source."""

    def __init__(self, pairs: LanguagePairDataset, context, max_context_tokens: int):
        super().__init__()
        if len(pairs) != len(context):
            raise ValueError(f"{len(context)} context lines for {len(pairs)} sentence pairs")
        self.pairs = pairs
        self.context = context
        self.max_context_tokens = max_context_tokens

    def __getitem__(self, index: int) -> dict[str, Any]:
        tokens = self.context[index]
        if tokens.numel() > self.max_context_tokens:  # keep the nearest sentences
            tokens = tokens[-self.max_context_tokens:]
        return {**self.pairs[index], "context": tokens}

    def __len__(self) -> int:
        return len(self.pairs)

    def collater(self, samples: list[dict[str, Any]], pad_to_length=None) -> dict[str, Any]:
        batch = self.pairs.collater(samples, pad_to_length=pad_to_length)
        if not batch:
            return batch
        by_id = {int(sample["id"]): sample["context"] for sample in samples}
        rows = [by_id[int(i)] for i in batch["id"]]  # the pair collater sorts the batch
        dictionary = self.pairs.src_dict
        batch["net_input"]["ctx_tokens"] = data_utils.collate_tokens(
            rows, dictionary.pad(), dictionary.eos(), left_pad=self.pairs.left_pad_source)
        batch["net_input"]["ctx_lengths"] = torch.tensor([row.numel() for row in rows])
        return batch

    # Batching and filtering follow the sentence pair; the context adds memory beyond
    # --max-tokens (about `size` source sentences a pair).
    @property
    def sizes(self):
        return self.pairs.sizes

    def num_tokens(self, index: int) -> int:
        return self.pairs.num_tokens(index)

    def num_tokens_vec(self, indices):
        return self.pairs.num_tokens_vec(indices)

    def size(self, index: int):
        return self.pairs.size(index)

    def ordered_indices(self):
        return self.pairs.ordered_indices()

    def filter_indices_by_size(self, indices, max_sizes):
        return self.pairs.filter_indices_by_size(indices, max_sizes)

    def get_batch_shapes(self):
        return self.pairs.get_batch_shapes()

    @property
    def supports_prefetch(self) -> bool:
        return self.pairs.supports_prefetch and getattr(self.context, "supports_prefetch",
                                                        False)

    def prefetch(self, indices) -> None:
        self.pairs.prefetch(indices)
        self.context.prefetch(indices)

    @property
    def can_reuse_epoch_itr_across_epochs(self) -> bool:
        return self.pairs.can_reuse_epoch_itr_across_epochs

    def set_epoch(self, epoch: int) -> None:
        super().set_epoch(epoch)
        self.pairs.set_epoch(epoch)


@dataclass
class DocTranslationConfig(TranslationConfig):
    context_suffix: str = field(default="ctx", metadata={
        "help": "language suffix of the binarized context side (fairseq-preprocess "
                "--only-source -s SUFFIX --srcdict <the source dictionary>)"})


@register_task(TASK_NAME, dataclass=DocTranslationConfig)
class DocTranslationTask(TranslationTask):
    """``translation`` plus a context side: the previous source sentences of every pair."""

    cfg: DocTranslationConfig

    @classmethod
    def setup_task(cls, cfg: DocTranslationConfig, **kwargs) -> "DocTranslationTask":
        if cfg.source_lang is None or cfg.target_lang is None:
            raise ValueError(f"--task {TASK_NAME} needs --source-lang and --target-lang: "
                             "fairseq's guess could pick the context files")
        task = super().setup_task(cfg, **kwargs)
        dict_path = os.path.join(utils.split_paths(cfg.data)[0],
                                 f"dict.{cfg.context_suffix}.txt")
        if (os.path.exists(dict_path)
                and cls.load_dictionary(dict_path).symbols != task.src_dict.symbols):
            raise ValueError(f"{dict_path} differs from the source dictionary: binarize the "
                             "context with --srcdict <the source dictionary>")
        return task

    def _data_path(self, split: str, epoch: int) -> str:
        """The shard ``split`` is read from, as :class:`TranslationTask` chooses it."""
        paths = utils.split_paths(self.cfg.data)
        if split != self.cfg.train_subset:
            paths = paths[:1]
        return paths[(epoch - 1) % len(paths)]

    def _load_context_part(self, data_path: str, name: str):
        src, tgt, ctx = self.cfg.source_lang, self.cfg.target_lang, self.cfg.context_suffix
        for prefix in (f"{name}.{src}-{tgt}.{ctx}", f"{name}.{ctx}-None.{ctx}"):
            part = data_utils.load_indexed_dataset(os.path.join(data_path, prefix),
                                                   self.src_dict, self.cfg.dataset_impl)
            if part is not None:
                return part
        return None

    def load_context(self, split: str, epoch: int = 1, combine: bool = False):
        """The binarized context of ``split`` (and of ``split1``, ``split2``… with
        ``combine``, as the sentence pairs are combined)."""
        data_path = self._data_path(split, epoch)
        parts = []
        for k in itertools.count():
            part = self._load_context_part(data_path, split + (str(k) if k > 0 else ""))
            if part is None:
                break
            parts.append(part)
            if not combine:
                break
        if not parts:
            raise FileNotFoundError(
                f"no context for {split} in {data_path}: expected "
                f"{split}.{self.cfg.context_suffix}-None.{self.cfg.context_suffix}.idx")
        return parts[0] if len(parts) == 1 else ConcatDataset(parts)

    def load_dataset(self, split: str, epoch: int = 1, combine: bool = False, **kwargs):
        super().load_dataset(split, epoch=epoch, combine=combine, **kwargs)
        context = self.load_context(split, epoch, combine)
        self.datasets[split] = ContextPairDataset(self.datasets[split], context,
                                                  self.cfg.max_source_positions)
