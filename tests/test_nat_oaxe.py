"""OaXE: the best-order assignment, loss truncation and the criterion's loss value."""

import itertools
import math
from types import SimpleNamespace

import pytest

from tests.conftest import require_fairseq

np = pytest.importorskip("numpy")
require_fairseq()  # first: fairseq needs torch, so a missing torch fails under CI too
torch = pytest.importorskip("torch")

from fairseq.data import Dictionary  # noqa: E402

from phenomt.fairseq_ext.oaxe import (  # noqa: E402
    OrderAgnosticCrossEntropy,
    best_assignment,
    confident,
    order_agnostic_targets,
)

BOS, PAD, EOS, UNK = 0, 1, 2, 3
A, B, C = 4, 5, 6


def test_best_assignment_on_a_hand_made_3x3_case():
    # Position 0 fits token 2, position 1 token 0, position 2 token 1 (total 0.6).
    cost = np.array([[2.0, 1.0, 0.1],
                     [0.2, 3.0, 2.0],
                     [1.0, 0.3, 2.0]])
    assert best_assignment(cost).tolist() == [2, 0, 1]
    brute = min(itertools.permutations(range(3)),
                key=lambda p: sum(cost[i, p[i]] for i in range(3)))
    assert list(brute) == [2, 0, 1]


def _lprobs(rows: list[dict[int, float]], vocab: int = 8):
    """Log-probabilities ``[1, T, V]``: the given probabilities, the rest spread evenly."""
    table = torch.zeros(1, len(rows), vocab)
    for t, row in enumerate(rows):
        rest = (1.0 - sum(row.values())) / (vocab - len(row))
        table[0, t] = rest
        for token, p in row.items():
            table[0, t, token] = p
    return table.log()


# <s> a b c </s>, but the model says "c a b": position 1 -> c, 2 -> a, 3 -> b.
TARGETS = torch.tensor([[BOS, A, B, C, EOS, PAD]])
ROWS = [{BOS: 0.9}, {C: 0.8, A: 0.05}, {A: 0.7, B: 0.1}, {B: 0.1, C: 0.05}, {EOS: 0.9},
        {PAD: 0.5}]


def test_targets_are_reordered_among_free_positions_only():
    lprobs = _lprobs(ROWS)
    free = torch.tensor([[False, True, True, True, False, False]])
    reordered = order_agnostic_targets(lprobs, TARGETS, free)
    assert reordered.tolist() == [[BOS, C, A, B, EOS, PAD]]
    # Without free positions nothing moves.
    none_free = torch.zeros_like(free)
    assert torch.equal(order_agnostic_targets(lprobs, TARGETS, none_free), TARGETS)


def test_skip_rule_drops_assignments_below_the_threshold():
    lprobs = _lprobs(ROWS)
    reordered = torch.tensor([[BOS, C, A, B, EOS, PAD]])
    # Assigned probabilities: 0.9, 0.8, 0.7, 0.1, 0.9, 0.5.
    assert confident(lprobs, reordered, 0.15).tolist() == [[True, True, True, False, True, True]]
    assert confident(lprobs, reordered, 0.75).tolist() == [[True, True, False, False, True,
                                                             False]]
    assert confident(lprobs, reordered, 0.0).all()


def _criterion(threshold: float) -> OrderAgnosticCrossEntropy:
    dictionary = Dictionary()
    for word in ("a", "b", "c", "d"):
        dictionary.add_symbol(word)
    assert (dictionary.bos(), dictionary.pad(), dictionary.eos(), dictionary.unk()) == (
        BOS, PAD, EOS, UNK)
    task = SimpleNamespace(target_dictionary=dictionary, source_dictionary=dictionary)
    return OrderAgnosticCrossEntropy(task, label_smoothing=0.0, oaxe_skip_threshold=threshold)


class _FixedModel:
    """Stands in for a NAT model: fixed output, every non-special position predicted."""

    def __init__(self, logits):
        self.logits = logits

    def __call__(self, src_tokens, src_lengths, prev_output_tokens, tgt_tokens):
        return {"word_ins": {"out": self.logits, "tgt": tgt_tokens,
                             "mask": prev_output_tokens.eq(UNK), "ls": 0.0, "nll_loss": True}}


def _sample():
    return {"nsentences": 1, "ntokens": 5, "target": TARGETS,
            "prev_target": torch.tensor([[BOS, UNK, UNK, UNK, EOS, PAD]]),
            "net_input": {"src_tokens": torch.tensor([[BOS, A, EOS]]),
                          "src_lengths": torch.tensor([3])}}


@pytest.mark.parametrize(("threshold", "kept"), [(0.0, [0.8, 0.7, 0.1]), (0.15, [0.8, 0.7])])
def test_criterion_loss_is_cross_entropy_under_the_best_order(threshold, kept):
    logits = _lprobs(ROWS).requires_grad_(True)  # log-probabilities are valid logits
    loss, _, logging_output = _criterion(threshold)(_FixedModel(logits), _sample())
    expected = sum(-math.log(p) for p in kept) / len(kept)
    assert float(loss.detach()) == pytest.approx(expected, rel=1e-5)
    assert (logging_output["oaxe_kept"], logging_output["oaxe_free"]) == (len(kept), 3)
    loss.backward()
    # A skipped assignment gets no gradient at all.
    trained = bool(logits.grad[0, 3].abs().sum() > 0)
    assert trained == (threshold == 0.0)


def test_plain_cross_entropy_would_be_larger():
    """Sanity check of the motivation: XE in the reference order costs far more."""
    lprobs = _lprobs(ROWS)
    xe = -sum(float(lprobs[0, t, TARGETS[0, t]]) for t in (1, 2, 3)) / 3
    oaxe = -(math.log(0.8) + math.log(0.7) + math.log(0.1)) / 3
    assert oaxe < xe
