"""GLAT: revealed-token counts, position sampling, ratio annealing, the decoder input."""

from argparse import Namespace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("fairseq")

from phenomt.fairseq_ext.glat import (  # noqa: E402
    anneal_steps_from_args,
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
