"""GLAT: revealed-token counts, position sampling, ratio annealing, the decoder input."""

from argparse import Namespace

import pytest

from tests.conftest import require_fairseq

require_fairseq()  # first: fairseq needs torch, so a missing torch fails under CI too
torch = pytest.importorskip("torch")

from phenomt.fairseq_ext.glat import (  # noqa: E402
    GlancingDecoder,
    anneal_steps_from_args,
    copy_positions,
    glance,
    glancing_count,
    glancing_ratio,
    sample_positions,
)

UNK = 3


def test_glancing_count_is_ratio_times_distance_rounded_half_up():
    distance = torch.tensor([4, 5, 0, 3, 10])
    assert glancing_count(distance, 0.5).tolist() == [2, 3, 0, 2, 5]
    assert glancing_count(distance, 0.3).tolist() == [1, 2, 0, 1, 3]
    assert glancing_count(distance, 0.0).tolist() == [0, 0, 0, 0, 0]


def test_ratio_anneals_linearly_from_start_to_end():
    assert glancing_ratio(0, 0.5, 0.3, 1000) == pytest.approx(0.5)
    assert glancing_ratio(250, 0.5, 0.3, 1000) == pytest.approx(0.45)
    assert glancing_ratio(500, 0.5, 0.3, 1000) == pytest.approx(0.4)
    assert glancing_ratio(1000, 0.5, 0.3, 1000) == pytest.approx(0.3)
    assert glancing_ratio(5000, 0.5, 0.3, 1000) == pytest.approx(0.3)
    assert glancing_ratio(10, 0.5, 0.3, 0) == pytest.approx(0.3)


def test_anneal_steps_default_to_the_whole_training():
    assert anneal_steps_from_args(Namespace(glance_anneal_steps=None, max_update=300)) == 300
    assert anneal_steps_from_args(Namespace(glance_anneal_steps=200, max_update=300)) == 200
    assert anneal_steps_from_args(Namespace(glance_anneal_steps=None, max_update=0)) == 0


def test_sample_positions_picks_exactly_count_candidates():
    torch.manual_seed(0)
    candidates = torch.tensor([[False, True, True, True, True, False],
                               [False, True, True, False, False, False],
                               [False, True, True, True, False, False]])
    for _ in range(20):
        chosen = sample_positions(candidates, torch.tensor([2, 5, 0]))
        assert chosen.sum(1).tolist() == [2, 2, 0]  # 5 > 2 candidates: all of them
        assert not (chosen & ~candidates).any()


def test_sample_positions_is_uniform_over_candidates():
    torch.manual_seed(1)
    candidates = torch.tensor([[False, True, True, True, True]])
    counts = torch.zeros(5)
    for _ in range(2000):
        counts += sample_positions(candidates, torch.tensor([1]))[0].float()
    assert counts[0] == 0
    assert counts[1:].min() > 400 and counts[1:].max() < 600


def test_glance_reveals_ratio_times_hamming_distance_reference_tokens():
    torch.manual_seed(2)
    # <s>=0 </s>=2 <pad>=1 <unk>=3; six hidden positions, four predicted wrong.
    decoder_input = torch.tensor([[0, UNK, UNK, UNK, UNK, UNK, UNK, 2, 1]])
    targets = torch.tensor([[0, 10, 11, 12, 13, 14, 15, 2, 1]])
    predictions = torch.tensor([[0, 10, 11, 9, 9, 9, 9, 2, 5]])
    for _ in range(20):
        glanced = glance(decoder_input, targets, predictions, UNK, ratio=0.5)
        revealed = glanced.ne(decoder_input)
        assert int(revealed.sum()) == 2  # 0.5 x 4 wrong predictions
        assert torch.equal(glanced[revealed], targets[revealed])
        assert glanced[0, 0] == 0 and glanced[0, 7] == 2 and glanced[0, 8] == 1
    # The pad position's wrong prediction does not count: 0.5 x (4 + 0) is still 2.
    assert int(glance(decoder_input, targets, predictions, UNK, 1.0).ne(decoder_input).sum()) == 4


def test_glance_with_a_perfect_first_pass_reveals_nothing():
    decoder_input = torch.tensor([[0, UNK, UNK, 2]])
    targets = torch.tensor([[0, 7, 8, 2]])
    assert torch.equal(glance(decoder_input, targets, targets, UNK, 0.5), decoder_input)


def test_copy_positions_count_from_the_first_real_source_token():
    # Sources of 3 and 5 tokens in a batch of width 5; targets of 5 and 3 tokens (+1 pad).
    # Target j of T reads source round(j * (S-1)/(T-1)): S=3, T=5 -> 0 0.5 1 1.5 2 -> 0 0 1 2 2
    # (torch rounds half to even); S=5, T=3 -> 0 2 4.
    tgt = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    right = torch.tensor([[True] * 3 + [False] * 2, [True] * 5])
    left = torch.tensor([[False] * 2 + [True] * 3, [True] * 5])
    assert copy_positions(right, tgt).tolist() == [[0, 0, 1, 2, 2], [0, 2, 4, 0, 0]]
    # left padding shifts the first sentence's positions past its two pads
    assert copy_positions(left, tgt).tolist() == [[2, 2, 3, 4, 4], [0, 2, 4, 0, 0]]


def test_a_sentence_copies_the_same_embeddings_whatever_its_batch():
    decoder = GlancingDecoder.__new__(GlancingDecoder)  # forward_copying_source uses no state
    source = torch.arange(1.0, 4.0).view(1, 3, 1)  # embeddings 1, 2, 3 of a 3-token source
    alone = decoder.forward_copying_source(source, torch.ones(1, 3, dtype=torch.bool),
                                           torch.ones(1, 4, dtype=torch.bool))
    padded = torch.cat([torch.zeros(1, 2, 1), source], dim=1)  # left-padded in a wider batch
    mask = torch.tensor([[False, False, True, True, True]])
    batched = decoder.forward_copying_source(padded, mask, torch.ones(1, 4, dtype=torch.bool))
    assert alone.flatten().tolist() == batched.flatten().tolist() == [1.0, 2.0, 2.0, 3.0]
