"""DA-Transformer: the DAG dynamic programs against brute force, decoding, graph inputs."""

import itertools
import math

import pytest

from tests.conftest import require_fairseq

require_fairseq()  # first: fairseq needs torch, so a missing torch fails under CI too
torch = pytest.importorskip("torch")

from phenomt.fairseq_ext.dat import (  # noqa: E402
    graph_input,
    graph_lengths_for,
    place_glanced,
)
from phenomt.fairseq_ext.dat_dp import (  # noqa: E402
    NEG,
    dag_best_path,
    dag_decode,
    dag_log_likelihood,
    emission_scores,
    link_log_probs,
)


def _paths(graph_length: int, target_length: int):
    """Every path 0 = a_1 < .. < a_M = L - 1 (brute force)."""
    for middle in itertools.combinations(range(1, graph_length - 1), target_length - 2):
        yield (0, *middle, graph_length - 1)


def _path_score(emissions, links, path) -> float:
    score = sum(float(emissions[v, i]) for i, v in enumerate(path))
    return score + sum(float(links[u, v]) for u, v in itertools.pairwise(path))


def _random_graph(seed: int = 0):
    """A padded batch: (L, M) = (5, 3), (4, 2), (5, 5) over a 6-word vocabulary."""
    generator = torch.Generator().manual_seed(seed)
    graph_lengths = torch.tensor([5, 4, 5])
    target_lengths = torch.tensor([3, 2, 5])
    logits = torch.randn(3, 5, 6, generator=generator, requires_grad=True)
    link_scores = torch.randn(3, 5, 5, generator=generator, requires_grad=True)
    targets = torch.randint(0, 6, (3, 5), generator=generator)
    targets[1, 2:] = 0  # padding past the target length
    targets[0, 3:] = 0
    emissions = emission_scores(logits, targets)
    links = link_log_probs(link_scores, graph_lengths)
    return logits, link_scores, emissions, links, graph_lengths, target_lengths


def test_link_log_probs_normalise_forward_links_only():
    links = link_log_probs(torch.zeros(1, 4, 4), torch.tensor([3]))
    probs = links.exp()
    # From vertex 0: vertices 1 and 2 (3 is padding); from 1: only 2; from 2: nothing.
    assert probs[0, 0].tolist() == pytest.approx([0, 0.5, 0.5, 0])
    assert probs[0, 1].tolist() == pytest.approx([0, 0, 1, 0])
    assert torch.all(links[0, 2] == NEG) and torch.all(links[0, 3] == NEG)


def test_dag_loss_matches_brute_force_enumeration():
    _, _, emissions, links, graph_lengths, target_lengths = _random_graph()
    result = dag_log_likelihood(emissions, links, graph_lengths, target_lengths).detach()
    for b in range(3):
        scores = [_path_score(emissions[b].detach(), links[b].detach(), path)
                  for path in _paths(int(graph_lengths[b]), int(target_lengths[b]))]
        expected = math.log(sum(math.exp(s) for s in scores))
        assert float(result[b]) == pytest.approx(expected, abs=1e-5)
    # (5, 3) has C(3, 1) = 3 paths; (5, 5) only the identity path.
    assert len(list(_paths(5, 3))) == 3 and len(list(_paths(5, 5))) == 1


def test_dag_loss_gradients_are_finite_with_padding():
    logits, link_scores, emissions, links, graph_lengths, target_lengths = _random_graph(1)
    loss = -dag_log_likelihood(emissions, links, graph_lengths, target_lengths).sum()
    loss.backward()
    assert torch.isfinite(logits.grad).all() and torch.isfinite(link_scores.grad).all()
    assert logits.grad.abs().sum() > 0 and link_scores.grad.abs().sum() > 0


def test_likelihoods_of_all_outputs_sum_to_one():
    """Every path ends at the last vertex, so P(Y) summed over all lengths and words is 1."""
    length = 5
    logits = torch.zeros(1, length, 2)  # middle vertices emit word 0 or 1 with 0.5 each
    logits[0, 0] = torch.tensor([50.0, -50.0])  # the first vertex always emits word 0
    logits[0, -1] = torch.tensor([-50.0, 50.0])  # the last vertex always emits word 1
    links = link_log_probs(torch.randn(1, length, length), torch.tensor([length]))
    total = 0.0
    for target_length in range(2, length + 1):
        for middle in itertools.product([0, 1], repeat=target_length - 2):
            targets = torch.tensor([[0, *middle, 1]])
            total += float(dag_log_likelihood(emission_scores(logits, targets), links,
                                              torch.tensor([length]),
                                              torch.tensor([target_length])).exp())
    assert total == pytest.approx(1.0, rel=1e-5)


def test_best_path_matches_brute_force_argmax():
    _, _, emissions, links, graph_lengths, target_lengths = _random_graph(2)
    path = dag_best_path(emissions, links, graph_lengths, target_lengths)
    for b in range(3):
        candidates = list(_paths(int(graph_lengths[b]), int(target_lengths[b])))
        best = max(candidates, key=lambda p, b=b: _path_score(emissions[b].detach(),
                                                             links[b].detach(), p))
        m = int(target_lengths[b])
        assert tuple(path[b, :m].tolist()) == best
        assert path[b, m:].tolist() == [0] * (path.size(1) - m)


def _hand_made_graph():
    """Vertex 0 -> 1 is the likelier link, but vertex 2's token is far more certain.

    Tokens: 0 = <s>, 1 = "a", 2 = "b", 3 = </s>. Links from 0: 1 (0.6), 2 (0.3), 3 (0.1);
    from 1: 2 (0.2), 3 (0.8); from 2: 3 (1.0). Vertex 1 emits "a" with 0.4, vertex 2 emits
    "b" with 0.9.
    """
    probs = torch.tensor([[
        [0.97, 0.01, 0.01, 0.01],
        [0.20, 0.40, 0.20, 0.20],
        [0.03, 0.04, 0.90, 0.03],
        [0.01, 0.01, 0.01, 0.97],
    ]])
    links = torch.full((1, 4, 4), NEG)
    links[0, 0, 1:] = torch.tensor([0.6, 0.3, 0.1]).log()
    links[0, 1, 2:] = torch.tensor([0.2, 0.8]).log()
    links[0, 2, 3] = 0.0
    return probs.log(), links, torch.tensor([4])


def test_greedy_decoding_follows_the_likeliest_links():
    token_log_probs, links, lengths = _hand_made_graph()
    decoded = dag_decode(token_log_probs, links, lengths, "greedy")
    assert decoded.vertices[0].tolist() == [0, 1, 3]
    assert decoded.tokens[0].tolist() == [0, 1, 3]
    assert decoded.lengths.tolist() == [3]
    assert decoded.scores[0, 1] == pytest.approx(math.log(0.4))


def test_lookahead_decoding_weighs_the_next_token():
    # 0.6 * 0.4 = 0.24 for vertex 1 against 0.3 * 0.9 = 0.27 for vertex 2.
    token_log_probs, links, lengths = _hand_made_graph()
    decoded = dag_decode(token_log_probs, links, lengths, "lookahead")
    assert decoded.vertices[0].tolist() == [0, 2, 3]
    assert decoded.tokens[0].tolist() == [0, 2, 3]


def test_decoding_pads_a_batch_of_different_lengths():
    token_log_probs, links, _ = _hand_made_graph()
    batch_probs = token_log_probs.expand(2, -1, -1)
    batch_links = torch.cat([links, link_log_probs(torch.zeros(1, 4, 4), torch.tensor([2]))])
    decoded = dag_decode(batch_probs, batch_links, torch.tensor([4, 2]), "greedy")
    assert decoded.lengths.tolist() == [3, 2]
    assert decoded.vertices.tolist() == [[0, 1, 3], [0, 1, 0]]
    assert decoded.tokens[1, 2] == 0 and decoded.scores[1, 2] == 0


def test_unknown_strategy_is_rejected():
    token_log_probs, links, lengths = _hand_made_graph()
    with pytest.raises(ValueError, match="unknown DAG decoding strategy"):
        dag_decode(token_log_probs, links, lengths, "beam")


def test_graph_lengths_scale_the_source_and_fit_the_target():
    sources = torch.tensor([3, 10, 1])
    assert graph_lengths_for(sources, 8, cap=1024).tolist() == [24, 80, 8]
    assert graph_lengths_for(sources, 8, cap=50).tolist() == [24, 50, 8]
    assert graph_lengths_for(sources, 0.1, cap=1024).tolist() == [2, 2, 2]
    targets = torch.tensor([30, 5, 9])
    assert graph_lengths_for(sources, 8, 1024, targets).tolist() == [30, 80, 9]


def test_graph_input_and_glanced_tokens():
    tokens = graph_input(torch.tensor([5, 3]), bos=0, eos=2, unk=3, pad=1)
    assert tokens.tolist() == [[0, 3, 3, 3, 2], [0, 3, 2, 1, 1]]
    targets = torch.tensor([[0, 7, 8, 2], [0, 2, 1, 1]])
    path = torch.tensor([[0, 1, 3, 4], [0, 2, 0, 0]])
    revealed = torch.tensor([[False, False, True, False], [False, False, False, False]])
    glanced = place_glanced(tokens, targets, path, revealed)
    assert glanced.tolist() == [[0, 3, 3, 8, 2], [0, 3, 2, 1, 1]]
