"""What the NAT plugins' training mechanisms do, measured from outside the plugin code.

``tests/test_overfit_mechanisms.py`` (OaXE and GLAT on hand-made inputs) and the GLAT
overfitting test (``tests/test_overfit.py``, on its trained model) use these to check the
mechanisms against their definitions, computed here independently of the plugins' helpers:

- OaXE's loss is the cross entropy under the best order: the minimum, over all orders of each
  sentence's reference words, of the mean negative log-probability (by brute force);
- GLAT's second decoder pass sees ``round(ratio * d)`` reference words, ``d`` being the
  first pass's wrong predictions among the hidden positions (Qian et al., 2021), with the
  ratio annealed linearly from 0.5 to 0.3 over training.

torch is imported inside the functions: ``tests/overfit.py`` imports no torch.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

#: Qian et al.'s glancing schedule, which the GLAT recipe keeps (no ratio options).
GLAT_RATIO_START, GLAT_RATIO_END = 0.5, 0.3


def brute_force_order_cost(lprobs, positions: list[int], tokens: list[int]) -> float:
    """The smallest total ``-log P(token | position)`` over every way of giving each of
    ``positions`` one of ``tokens`` (each token once); ``lprobs`` is ``[T, V]``."""
    if len(tokens) > 7:
        raise ValueError("brute force over more than 7! orders is too slow")
    return min(-sum(float(lprobs[p, t]) for p, t in zip(positions, order, strict=True))
               for order in itertools.permutations(tokens))


def in_order_cost(lprobs, positions: list[int], tokens: list[int]) -> float:
    """Total ``-log P(token | position)`` in the reference's own order."""
    return -sum(float(lprobs[p, t]) for p, t in zip(positions, tokens, strict=True))


def expected_glancing_ratio(update: int, anneal_steps: int, start: float = GLAT_RATIO_START,
                            end: float = GLAT_RATIO_END) -> float:
    """The ratio at ``update``: linear from ``start`` to ``end`` over ``anneal_steps``."""
    if anneal_steps <= 0:
        return end
    return start + (end - start) * min(update / anneal_steps, 1.0)


def expected_revealed(ratio: float, distance: int) -> int:
    """Reference words the second pass sees: ``ratio * distance`` rounded to the nearest
    integer (callers choose ratios whose products are never exactly half-way)."""
    return math.floor(ratio * distance + 0.5)


@dataclass
class Glancing:
    """One training step of a glancing model, per sentence of the batch."""

    hidden: list[int]  # positions the decoder input hides (<unk>)
    distance: list[int]  # hidden positions whose first-pass prediction is wrong
    revealed: list[int]  # hidden positions left out of the loss (shown to the second pass)
    passes: int  # decoder passes of the step: 2 when it glances

    def expected(self, ratio: float) -> list[int]:
        return [expected_revealed(ratio, d) for d in self.distance]


class _NoOptimizer:
    def backward(self, loss) -> None:
        pass


def observe_glancing(task: Any, model: Any, sample: dict, update: int) -> Glancing:
    """Run ``task.train_step`` (no parameter changes) on ``sample`` at update ``update`` and
    record what the model glanced: the first decoder pass's predictions (a hook on the
    decoder) and the positions the loss is computed on (the model's ``word_ins`` mask)."""
    import torch

    outputs: list = []
    seen: dict = {}

    def record(module, args, output):
        outputs.append(output.detach())

    def criterion(model, sample):
        net_input = sample["net_input"]
        out = model(net_input["src_tokens"], net_input["src_lengths"], sample["prev_target"],
                    sample["target"])
        seen["input"], seen["mask"] = sample["prev_target"], out["word_ins"]["mask"]
        return out["word_ins"]["out"].sum() * 0.0, 1, {}

    handle = model.decoder.register_forward_hook(record)
    try:
        task.train_step(sample, model, criterion, _NoOptimizer(), update)
    finally:
        handle.remove()
    hidden = seen["input"].eq(task.target_dictionary.unk())
    if len(outputs) >= 2:
        wrong = outputs[0].argmax(-1).ne(sample["target"]) & hidden
    else:  # no first pass: nothing to compare with
        wrong = torch.zeros_like(hidden)
    revealed = hidden & ~seen["mask"]
    return Glancing(hidden.sum(1).tolist(), wrong.sum(1).tolist(), revealed.sum(1).tolist(),
                    len(outputs))


def load_checkpoint(path: str, data_bin: str) -> tuple[Any, Any, Any]:
    """A checkpoint of the pipeline's training, in-process: ``(model, task, cfg)``, the
    plugins registered by importing them (not through ``--user-dir``)."""
    from fairseq import checkpoint_utils

    import phenomt.fairseq_ext  # noqa: F401  (registers the plugins)

    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [path], arg_overrides={"data": data_bin})
    return models[0], task, cfg


def training_batch(task: Any, size: int) -> dict:
    """The first ``size`` sentence pairs of the task's training data, as one batch."""
    task.load_dataset("train")
    dataset = task.dataset("train")
    return dataset.collater([dataset[i] for i in range(min(size, len(dataset)))])
