"""Order-agnostic cross entropy (OaXE; Du et al., 2021): ``--criterion phenomt_oaxe``.

Cross entropy punishes a NAT model that predicts the right words in another order. OaXE
takes the cross entropy under the best order instead: per sentence, the negative
log-probability matrix ``C[i, j] = -log P(y_j | position i)`` (decoder positions x reference
tokens) is solved as an assignment problem (Hungarian algorithm), and each position is
trained towards the reference token assigned to it.

Because the log loss is very sensitive to references the model cannot reach, the paper
truncates the loss: an assignment whose probability is below a threshold is dropped
(``--oaxe-skip-threshold``, 0 keeps everything). The paper also starts from a model trained
with ordinary cross entropy, which is what "+OaXE" means here: fine-tune a trained CMLM or
GLAT checkpoint with this criterion (see ``phenomt.nat.recipes``).

The criterion works with any model whose output follows fairseq's ``nat_loss`` convention
(a ``word_ins`` entry with logits, targets and the mask of predicted positions). Only
predicted positions holding real words are reordered; ``<s>`` and ``</s>`` stay in place.
"""

import math
from dataclasses import dataclass, field

import numpy as np
import torch
from fairseq import utils
from fairseq.criterions import register_criterion
from fairseq.criterions.nat_loss import (
    LabelSmoothedDualImitationCriterion,
    LabelSmoothedDualImitationCriterionConfig,
)
from fairseq.logging import metrics
from scipy.optimize import linear_sum_assignment
from torch import Tensor


def best_assignment(cost: np.ndarray) -> np.ndarray:
    """For a square cost matrix (positions x tokens), the token index given to each position.

    The assignment minimises the total cost, i.e. maximises the sentence log-probability.
    """
    rows, cols = linear_sum_assignment(cost)
    assigned = np.empty(cost.shape[0], dtype=np.int64)
    assigned[rows] = cols
    return assigned


def order_agnostic_targets(lprobs: Tensor, targets: Tensor, free: Tensor) -> Tensor:
    """Reorder each sentence's reference tokens among its ``free`` positions.

    ``lprobs`` is ``[B, T, V]`` (log-probabilities), ``targets`` and ``free`` are ``[B, T]``.
    The tokens at free positions are permuted to the best assignment; other positions keep
    their reference token.
    """
    # cost[b, i, j] = -log P(targets[b, j] | position i): one gather for the whole batch.
    index = targets.unsqueeze(1).expand(-1, targets.size(1), -1)
    cost = (-lprobs.detach().float().gather(-1, index)).cpu().numpy()
    reordered = targets.clone()
    free_cpu = free.cpu().numpy()
    for b in range(targets.size(0)):
        positions = np.flatnonzero(free_cpu[b])
        if positions.size < 2:
            continue
        assigned = best_assignment(cost[b][np.ix_(positions, positions)])
        source = torch.as_tensor(positions[assigned], device=targets.device)
        reordered[b, torch.as_tensor(positions, device=targets.device)] = targets[b, source]
    return reordered


def confident(lprobs: Tensor, targets: Tensor, threshold: float) -> Tensor:
    """``[B, T]`` mask of positions whose target probability is at least ``threshold``."""
    if threshold <= 0:
        return torch.ones_like(targets, dtype=torch.bool)
    target_lprobs = lprobs.detach().gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return target_lprobs >= math.log(threshold)


@dataclass
class OrderAgnosticCrossEntropyConfig(LabelSmoothedDualImitationCriterionConfig):
    oaxe_skip_threshold: float = field(
        default=0.15,
        metadata={"help": "drop an assigned token from the loss when the model gives it a "
                          "probability below this (OaXE loss truncation); 0 keeps all"},
    )


class _ReorderedOutputs:
    """Calls the model and rewrites its ``word_ins`` targets and mask with OaXE.

    ``nat_loss`` then computes the (label-smoothed) cross entropy on the rewritten entry,
    so the length loss and the logging stay exactly those of ``nat_loss``.
    """

    def __init__(self, model, criterion: "OrderAgnosticCrossEntropy"):
        self.model = model
        self.criterion = criterion

    def __call__(self, *args, **kwargs):
        outputs = self.model(*args, **kwargs)
        self.criterion.rewrite(outputs["word_ins"])
        return outputs


@register_criterion("phenomt_oaxe", dataclass=OrderAgnosticCrossEntropyConfig)
class OrderAgnosticCrossEntropy(LabelSmoothedDualImitationCriterion):
    def __init__(self, task, label_smoothing: float, oaxe_skip_threshold: float):
        super().__init__(task, label_smoothing)
        self.skip_threshold = oaxe_skip_threshold
        dictionary = task.target_dictionary
        self.special = (dictionary.pad(), dictionary.bos(), dictionary.eos())
        self._counts = (0, 0)

    def rewrite(self, word_ins: dict) -> None:
        """Swap in the best-order targets and leave out low-confidence assignments.

        A dropped position leaves the loss entirely, label smoothing included.
        """
        targets, predicted = word_ins["tgt"], word_ins["mask"]
        free = predicted.clone()
        for token in self.special:
            free &= targets.ne(token)
        lprobs = torch.log_softmax(word_ins["out"].detach().float(), dim=-1)
        reordered = order_agnostic_targets(lprobs, targets, free)
        kept = confident(lprobs, reordered, self.skip_threshold) | ~free
        word_ins["tgt"] = reordered
        word_ins["mask"] = predicted & kept
        self._counts = (int((free & kept).sum()), int(free.sum()))

    def forward(self, model, sample, reduce=True):
        loss, sample_size, logging_output = super().forward(
            _ReorderedOutputs(model, self), sample, reduce=reduce)
        logging_output["oaxe_kept"], logging_output["oaxe_free"] = self._counts
        return loss, sample_size, logging_output

    @staticmethod
    def reduce_metrics(logging_outputs) -> None:
        LabelSmoothedDualImitationCriterion.reduce_metrics(logging_outputs)
        kept = utils.item(sum(log.get("oaxe_kept", 0) for log in logging_outputs))
        free = utils.item(sum(log.get("oaxe_free", 0) for log in logging_outputs))
        if free:
            # Share of reordered tokens that survive the loss truncation.
            metrics.log_scalar("oaxe_kept", kept / free, free, round=3)
