"""fairseq options of the non-autoregressive models: CMLM, GLAT, their "+OaXE" and DAT.

Every recipe is a plain ``{option_name_with_underscores: value}`` dict for
:func:`phenomt.core.nmt.fairseq_options`, at two scales:

- ``demo``: a tiny Transformer (2+2 layers, 128 dimensions, the size of the default AR
  config) that trains in minutes on a 2-core CPU;
- ``paper``: Wang et al., "On the Information Redundancy in Non-Autoregressive Translation",
  Section 2 and Appendix B.1: transformer-base, 300k updates and a batch size of 480K (its unit
  unstated; read as tokens per update),
  "+OaXE" fine-tuned for 10 epochs, and Table 6's learning rate, dropout and label smoothing
  per model (checked against ``phenomt/core/papers/wang_nat.tsv`` by the tests). What the
  paper leaves to its unreleased scripts (warm-up, weight decay, Adam, gradient clipping, the
  DAT graph size and glancing schedule) comes from the fairseq NAT examples and the models'
  own papers, as noted at each value. Table 6's model sizes (87M-90M) depend on a vocabulary
  the paper does not give; ours is the teacher's.

The paper decodes with an ensemble of its 5 best checkpoints (by validation BLEU); the
pipeline instead averages the weights of the best ``nat.average`` checkpoints into one model
(``phenomt nat average``), which decodes as a single model at a single model's cost.

Decoding is fully non-autoregressive: one decoder pass (``--iter-decode-max-iter 0``),
length beam 1 except CMLM (5), greedy graph decoding for DAT.

"+OaXE" models are fine-tuned from a trained CMLM or GLAT checkpoint with the OaXE criterion
(:func:`finetune_options`). They use ``--finetune-from-model CKPT``: on the first launch
fairseq loads only the weights (optimizer, scheduler, meters and data position reset, the
update count restarts at 0); on a relaunch it resumes from the fine-tuning run's own
``checkpoint_last.pt``. The one-shot equivalent is
``--restore-file CKPT --reset-optimizer --reset-lr-scheduler --reset-meters
--reset-dataloader``, which would restart from CKPT on every relaunch.

No fairseq import happens here; the models live in ``phenomt/fairseq_ext`` (``--user-dir``).
"""

from __future__ import annotations

import math
from typing import Any

from phenomt.core.nmt import USER_DIR

NAT_MODELS = ("cmlm", "cmlm_oaxe", "glat", "glat_oaxe", "dat")
SCALES = ("demo", "paper")
PAPER_TOKENS_PER_UPDATE = 480_000

_DEMO_ARCHITECTURE = {
    "encoder_layers": 2, "decoder_layers": 2,
    "encoder_embed_dim": 128, "decoder_embed_dim": 128,
    "encoder_ffn_embed_dim": 256, "decoder_ffn_embed_dim": 256,
    "encoder_attention_heads": 4, "decoder_attention_heads": 4,
}
# transformer-base, which is also every NAT architecture's default, spelled out.
_PAPER_ARCHITECTURE = {
    "encoder_layers": 6, "decoder_layers": 6,
    "encoder_embed_dim": 512, "decoder_embed_dim": 512,
    "encoder_ffn_embed_dim": 2048, "decoder_ffn_embed_dim": 2048,
    "encoder_attention_heads": 8, "decoder_attention_heads": 8,
}
# What every NAT recipe shares (the fairseq NAT examples' settings).
_COMMON = {
    "share_all_embeddings": True,
    "encoder_learned_pos": True,
    "decoder_learned_pos": True,
    "apply_bert_init": True,
    "optimizer": "adam",
    "adam_betas": "(0.9,0.98)",
    "lr_scheduler": "inverse_sqrt",
    "warmup_init_lr": 1e-7,
    "weight_decay": 0.01,
    "dropout": 0.1,
    "ddp_backend": "legacy_ddp",
    "fixed_validation_seed": 7,
    "no_epoch_checkpoints": True,
    "log_format": "simple",
    "num_workers": 0,
}
_SCALE = {
    "demo": {"lr": 0.001, "warmup_updates": 400, "max_update": 1200, "max_tokens": 4096,
             "log_interval": 50},
    "paper": {"lr": 0.0005, "warmup_updates": 10000, "max_update": 300_000,
              "max_tokens": 8192, "log_interval": 100, "stop_min_lr": 1e-9,
              "save_interval_updates": 10000, "keep_interval_updates": 10},
}
_MODEL = {
    # Ghazvininejad et al. (2019): fairseq's CMLM, random masking; the plugin's task for its
    # length beam, which fairseq's own generator cannot run on a GPU (nat_task.py).
    "cmlm": {"task": "phenomt_translation_nat", "noise": "random_mask",
             "arch": "cmlm_transformer",
             "criterion": "nat_loss", "label_smoothing": 0.1},
    # Qian et al. (2021): full masking (all hidden), copied source input, glancing.
    "glat": {"task": "phenomt_translation_nat", "noise": "full_mask", "arch": "phenomt_glat",
             "criterion": "nat_loss", "label_smoothing": 0.1, "activation_fn": "gelu",
             "pred_length_offset": True, "length_loss_factor": 0.1},
    # Huang et al. (2022): 8x graph, no label smoothing, strong gradient clipping.
    "dat": {"task": "phenomt_translation_nat", "noise": "full_mask", "arch": "phenomt_dat",
            "criterion": "nat_loss", "label_smoothing": 0.0, "activation_fn": "gelu",
            "dat_upsample_scale": 8, "clip_norm": 0.1, "max_target_positions": 1024},
}
# The DAT decoder runs on 8x as many positions as the source and the DAG loss materialises
# [batch, graph, graph] and [batch, graph, vocabulary] tensors: smaller batches keep one
# process within a few GB (about 3.5 GB on CPU at 2048 tokens and an 8k vocabulary); the
# update frequency makes up for it at paper scale.
_DEMO_MODEL = {"dat": {"max_tokens": 2048}}
# Table 6 of Wang et al. sets learning rate, dropout and label smoothing per model; the
# scale's lr (5e-4) and the common dropout (0.1) are overridden where it differs. Warm-up is
# not in the paper: 10k updates (fairseq's CMLM example), 4k for GLAT (Qian et al.'s release).
_PAPER_MODEL = {
    "cmlm": {"lr": 0.0007, "dropout": 0.0},
    "glat": {"warmup_updates": 4000, "dropout": 0.0},
    # Table 6: DAT keeps dropout 0.1 and lr 5e-4. Glancing anneals 0.5 -> 0.1 over the first
    # 200k of 300k updates (Huang et al.).
    "dat": {"max_tokens": 2048, "glance_anneal_steps": 200_000},
}
# Du et al. (2021) fine-tune with OaXE from cross-entropy-trained models: all target
# positions hidden, loss truncation at probability 0.15 (their released recipe). At paper
# scale Table 6 gives lr 5e-6, dropout 0.0 and label smoothing 0.1, and Appendix B.1 10
# epochs, not a number of updates: the base recipe's max_update is dropped (train_options).
# One checkpoint per epoch (and no interval ones) leaves ten to choose the best from. The
# 500 warm-up updates are ours (the paper gives none).
_OAXE = {
    "demo": {"criterion": "phenomt_oaxe", "noise": "full_mask", "oaxe_skip_threshold": 0.15,
             "label_smoothing": 0.1, "lr": 0.0002, "warmup_updates": 50, "max_update": 300},
    "paper": {"criterion": "phenomt_oaxe", "noise": "full_mask", "oaxe_skip_threshold": 0.15,
              "label_smoothing": 0.1, "lr": 5e-6, "dropout": 0.0, "warmup_updates": 500,
              "max_epoch": 10, "no_epoch_checkpoints": False},
}
# Options of the base recipe an OaXE fine-tuning must not inherit, per scale: the paper
# bounds it by epochs, and fairseq would stop at whichever limit comes first.
_OAXE_DROP = {"demo": (), "paper": ("max_update", "save_interval_updates",
                                    "keep_interval_updates")}


def _check(model: str, scale: str) -> None:
    if model not in NAT_MODELS:
        raise ValueError(f"unknown NAT model {model!r}; expected one of {', '.join(NAT_MODELS)}")
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; expected one of {', '.join(SCALES)}")


def base_model(model: str) -> str | None:
    """The model a "+OaXE" model is fine-tuned from (``None`` if trained from scratch)."""
    _check(model, "demo")
    return model.removesuffix("_oaxe") if model.endswith("_oaxe") else None


def needs_user_dir(model: str) -> bool:
    """Whether fairseq needs ``--user-dir``: every NAT model runs the plugins' task."""
    _check(model, "demo")
    return True


def update_freq(max_tokens: int, gpus: int = 1,
                tokens_per_update: int = PAPER_TOKENS_PER_UPDATE) -> int:
    """``--update-freq`` giving at least ``tokens_per_update`` tokens per update."""
    if max_tokens <= 0 or gpus <= 0:
        raise ValueError("max_tokens and gpus must be positive")
    return max(1, math.ceil(tokens_per_update / (max_tokens * gpus)))


def paper_batch(max_tokens: int, gpus: int = 1,
                tokens_per_update: int = PAPER_TOKENS_PER_UPDATE) -> tuple[int, int]:
    """``(max_tokens, update_freq)`` for ``tokens_per_update`` tokens an update on ``gpus``.

    The update frequency is the smallest that reaches the budget with at most ``max_tokens``
    per batch; the batch cap is then lowered to the fewest tokens that still reach it, so
    that rounding the frequency up does not overshoot (8 GPUs at 8,192 tokens would make
    524k, not the paper's 480k).
    """
    freq = update_freq(max_tokens, gpus, tokens_per_update)
    return math.ceil(tokens_per_update / (freq * gpus)), freq


def train_options(model: str, scale: str = "demo", gpus: int = 1) -> dict[str, Any]:
    """fairseq-train options of a model trained from scratch (or of a "+OaXE" fine-tuning,
    without the checkpoint to start from: see :func:`finetune_options`).

    ``gpus`` only matters at paper scale, where it sets ``--update-freq`` and the batch cap
    (:func:`paper_batch`).
    """
    _check(model, scale)
    base = base_model(model) or model
    options: dict[str, Any] = {
        **_COMMON,
        **(_DEMO_ARCHITECTURE if scale == "demo" else _PAPER_ARCHITECTURE),
        **_SCALE[scale],
        **_MODEL[base],
    }
    if scale == "paper":
        options.update(_PAPER_MODEL.get(base, {}))
        options["max_tokens"], options["update_freq"] = paper_batch(options["max_tokens"], gpus)
    else:
        options.update(_DEMO_MODEL.get(base, {}))
    if base != model:
        for key in _OAXE_DROP[scale]:
            options.pop(key, None)
        options.update(_OAXE[scale])
        if base == "glat":
            # Fine-tune in the decoding condition (every position hidden), like the paper's
            # fully masked CMLM; positional glancing would fight the order-free loss.
            options.update(glance_ratio_start=0.0, glance_ratio_end=0.0)
    if needs_user_dir(model):
        options["user_dir"] = USER_DIR
    return options


def finetune_options(model: str, checkpoint: str, scale: str = "demo",
                     gpus: int = 1) -> dict[str, Any]:
    """fairseq-train options of a "+OaXE" model, starting from ``checkpoint`` of its base."""
    if base_model(model) is None:
        raise ValueError(f"{model!r} is trained from scratch, not fine-tuned")
    return {**train_options(model, scale, gpus), "finetune_from_model": checkpoint}


def generate_options(model: str) -> dict[str, Any]:
    """fairseq-generate options: fully non-autoregressive, single-pass decoding."""
    _check(model, "demo")
    base = base_model(model) or model
    options: dict[str, Any] = {
        "task": _MODEL[base]["task"],
        "iter_decode_max_iter": 0,
        "iter_decode_eos_penalty": 0,
        # Length beam: CMLM decodes 5 length candidates and keeps the best.
        "iter_decode_with_beam": 5 if model == "cmlm" else 1,
        "beam": 1,
    }
    if model == "dat":
        # Read back by fairseq with ast.literal_eval; "lookahead" is the other strategy.
        options["model_overrides"] = '{"dat_decode_strategy": "greedy"}'
    if needs_user_dir(model):
        options["user_dir"] = USER_DIR
    return options


NAT_DATA = ("raw", "distilled")
AR_SYSTEM = "ar"
# The teacher decoding greedily: a second AR row of the speed table only.
AR_GREEDY = "ar_greedy"
AR_SYSTEMS = (AR_SYSTEM, AR_GREEDY)
SYSTEM_LABELS = {AR_SYSTEM: "AR teacher", AR_GREEDY: "AR teacher, greedy", "cmlm": "CMLM",
                 "cmlm_oaxe": "CMLM+OaXE", "glat": "GLAT", "glat_oaxe": "GLAT+OaXE",
                 "dat": "DAT"}

def parse_nat_system(system: str) -> tuple[str, str]:
    """``cmlm_oaxe.distilled`` → ``("cmlm_oaxe", "distilled")``; ``ar`` → ``("ar", "raw")``
    (``ar_greedy`` likewise).

    The AR teacher is trained on the raw data.
    """
    if system in AR_SYSTEMS:
        return system, "raw"
    model, _, data = system.partition(".")
    if model not in NAT_MODELS or data not in NAT_DATA:
        raise ValueError(f"not a NAT system: {system!r} (expected <model>.<raw|distilled>)")
    return model, data
