"""The mechanisms the NAT overfitting tests rely on, checked against their definitions.

OaXE: the criterion's loss equals the brute-force minimum over all orders of the reference
words, on model outputs whose best order is not the reference's. GLAT: one training step
through the task shows the second decoder pass ``round(ratio * d)`` reference words, ``d``
the first pass's mistakes, and nothing with ratio 0.

Seen failing on broken plugins (``tests/mutants/sitecustomize.py``): with the Hungarian
assignment replaced by the identity (``oaxe-identity``) the OaXE loss test fails; with the
glancing ratio forced to 0 (``glat-ratio-0``) or to 1 (``glat-ratio-1``) the glancing tests
with any other ratio fail.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from tests.conftest import require_fairseq

np = pytest.importorskip("numpy")
require_fairseq()  # first: fairseq needs torch, so a missing torch fails under CI too
torch = pytest.importorskip("torch")

from fairseq.data import Dictionary  # noqa: E402

from phenomt.fairseq_ext import oaxe  # noqa: E402
from tests.mechanisms import (  # noqa: E402
    brute_force_order_cost,
    expected_glancing_ratio,
    in_order_cost,
    observe_glancing,
)
from tests.nat_helpers import build_model, encode  # noqa: E402

pytestmark = pytest.mark.fairseq

BOS, PAD, EOS, UNK = 0, 1, 2, 3
VOCAB = 12  # the four specials and eight words, 4..11


def _criterion() -> oaxe.OrderAgnosticCrossEntropy:
    dictionary = Dictionary()
    for word in "abcdefgh":
        dictionary.add_symbol(word)
    assert (dictionary.bos(), dictionary.pad(), dictionary.eos(), dictionary.unk()) == (
        BOS, PAD, EOS, UNK)
    task = SimpleNamespace(target_dictionary=dictionary, source_dictionary=dictionary)
    # No truncation and no smoothing: the loss is exactly the mean cross entropy of the
    # assigned words.
    return oaxe.OrderAgnosticCrossEntropy(task, label_smoothing=0.0, oaxe_skip_threshold=0.0)


class _FixedModel:
    """A NAT model's output fixed in advance; every position marked <unk> is predicted."""

    def __init__(self, logits):
        self.logits = logits

    def __call__(self, src_tokens, src_lengths, prev_output_tokens, tgt_tokens):
        return {"word_ins": {"out": self.logits, "tgt": tgt_tokens,
                             "mask": prev_output_tokens.eq(UNK), "ls": 0.0, "nll_loss": True}}


def _batch(sentences: list[list[int]]):
    """``<s> words </s>`` right-padded, and the fully hidden decoder input."""
    width = max(map(len, sentences)) + 2
    rows = [[BOS, *words, EOS] + [PAD] * (width - len(words) - 2) for words in sentences]
    targets = torch.tensor(rows)
    hidden = targets.masked_fill(targets.gt(EOS), UNK)
    return targets, hidden


def _loss(logits, targets, hidden) -> float:
    sample = {"nsentences": targets.size(0), "ntokens": int(targets.ne(PAD).sum()),
              "target": targets, "prev_target": hidden,
              "net_input": {"src_tokens": targets, "src_lengths": targets.ne(PAD).sum(1)}}
    loss, _, logging_output = _criterion()(_FixedModel(logits), sample)
    assert logging_output["oaxe_kept"] == logging_output["oaxe_free"] == int(hidden.eq(UNK).sum())
    return float(loss)


def _definitions(logits, sentences) -> tuple[float, float]:
    """The mean cross entropy under the best order (brute force) and in the reference order."""
    lprobs = torch.log_softmax(logits.float(), dim=-1)
    best = in_order = 0.0
    for b, words in enumerate(sentences):
        positions = list(range(1, len(words) + 1))
        best += brute_force_order_cost(lprobs[b], positions, words)
        in_order += in_order_cost(lprobs[b], positions, words)
    n = sum(map(len, sentences))
    return best / n, in_order / n


# Three sentences of 6, 5 and 4 words (one word twice); the model puts each sentence's words
# in a rotated order: position i is most confident of the word i + 1 places on.
SENTENCES = [[4, 5, 6, 7, 8, 9], [10, 11, 4, 5, 6], [7, 8, 7, 9]]


def _rotated_logits(seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    width = max(map(len, SENTENCES)) + 2
    logits = torch.randn(len(SENTENCES), width, VOCAB, generator=generator)
    for b, words in enumerate(SENTENCES):
        for i in range(len(words)):
            logits[b, i + 1, words[(i + 1) % len(words)]] += 4.0
    return logits


def test_oaxe_loss_is_the_brute_force_minimum_over_orders():
    logits = _rotated_logits()
    targets, hidden = _batch(SENTENCES)
    best, in_order = _definitions(logits, SENTENCES)
    # The data tells the orders apart: the reference order costs far more than the best.
    assert in_order > best + 1.0
    assert _loss(logits, targets, hidden) == pytest.approx(best, rel=1e-5)


@pytest.mark.parametrize("seed", range(20))
def test_oaxe_loss_matches_brute_force_on_random_outputs(seed):
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, 7, (3,), generator=generator).tolist()
    sentences = [torch.randint(4, VOCAB, (n,), generator=generator).tolist() for n in lengths]
    targets, hidden = _batch(sentences)
    logits = 3.0 * torch.randn(len(sentences), targets.size(1), VOCAB, generator=generator)
    best, _ = _definitions(logits, sentences)
    assert _loss(logits, targets, hidden) == pytest.approx(best, rel=1e-5)


def test_identity_assignment_gives_the_reference_order_loss(monkeypatch):
    """With the assignment replaced by the identity (a broken OaXE), the criterion returns
    the reference-order cross entropy, which the tests above tell from the minimum."""

    def identity(cost):
        return np.arange(cost.shape[0]), np.arange(cost.shape[0])

    monkeypatch.setattr(oaxe, "linear_sum_assignment", identity)
    logits = _rotated_logits()
    targets, hidden = _batch(SENTENCES)
    best, in_order = _definitions(logits, SENTENCES)
    loss = _loss(logits, targets, hidden)
    assert loss == pytest.approx(in_order, rel=1e-5)
    assert loss != pytest.approx(best, rel=1e-2)


# --- GLAT: how many reference words a training step shows ----------------------------------

SOURCES = ["haus baum katze hund auto buch tisch stuhl fisch vogel",
           "hund auto buch tisch stuhl fisch blume stein",
           "katze hund auto buch tisch stuhl fisch vogel blume"]
TARGETS = ["hauss baums katzes hunds autos buchs tischs stuhls fischs vogels",
           "hunds autos buchs tischs stuhls fischs blumes steins",
           "katzes hunds autos buchs tischs stuhls fischs vogels blumes"]


def _glat(tmp_path, *options: str):
    torch.manual_seed(0)
    model, task = build_model(tmp_path, "phenomt_glat", "--dropout", "0", *options)
    src = encode(task, SOURCES)
    target = encode(task, TARGETS, side="tgt")
    sample = {"net_input": {"src_tokens": src,
                            "src_lengths": src.ne(task.source_dictionary.pad()).sum(1)},
              "target": target, "nsentences": len(SOURCES), "ntokens": int(target.numel())}
    return model, task, sample


# Ratios chosen so that ratio x distance is never exactly half-way between two integers.
@pytest.mark.parametrize("ratio", [0.2, 0.6, 1.0])
def test_glat_shows_ratio_times_distance_reference_words(tmp_path, ratio):
    model, task, sample = _glat(tmp_path, "--glance-ratio-start", str(ratio),
                                "--glance-ratio-end", str(ratio))
    step = observe_glancing(task, model, sample, update=10)
    assert step.passes == 2, "no first decoder pass: the model did not glance"
    assert min(step.distance) >= 6  # an untrained model: most predictions are wrong
    assert step.revealed == step.expected(ratio)
    assert all(r > 0 for r in step.revealed)


def test_glat_ratio_anneals_with_the_update_number_the_task_passes(tmp_path):
    # The recipe's schedule, 0.5 -> 0.3, over 100 updates: 0.4 at update 50.
    model, task, sample = _glat(tmp_path, "--glance-anneal-steps", "100")
    ratio = expected_glancing_ratio(50, 100)
    assert ratio == pytest.approx(0.4)
    step = observe_glancing(task, model, sample, update=50)
    assert step.revealed == step.expected(ratio)
    assert step.expected(ratio) != step.expected(0.5) != step.expected(0.3)


def test_glat_with_ratio_zero_shows_nothing(tmp_path):
    model, task, sample = _glat(tmp_path, "--glance-ratio-start", "0",
                                "--glance-ratio-end", "0")
    step = observe_glancing(task, model, sample, update=10)
    assert step.revealed == [0, 0, 0]
    assert step.passes == 1  # no first pass is needed either
    assert math.prod(step.hidden) > 0
