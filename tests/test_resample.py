"""Sentence bootstrap and paired tests (phenomt.core.metrics.resample), on cases whose answer
follows by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from phenomt.core.metrics import resample
from phenomt.core.metrics.base import get, score_files
from phenomt.core.metrics.redundancy import bootstrap_record, measure_score, score_sentences

RATIO = resample.ratio(0, 1)


def test_weights_draw_n_sentences_per_resample_and_repeat_with_the_seed():
    weights = resample.resample_weights(7, samples=50, seed=3)
    assert weights.shape == (50, 7)
    assert (weights.sum(axis=1) == 7).all()
    assert (weights == resample.resample_weights(7, samples=50, seed=3)).all()
    assert (weights != resample.resample_weights(7, samples=50, seed=4)).any()


def test_weights_are_uniform_draws_with_replacement():
    # each sentence is drawn n / n = 1 time per resample on average, and a resample of 4
    # sentences repeats one or more of them in 1 - 4!/4^4 = 90.6% of draws
    weights = resample.resample_weights(4, samples=20000, seed=1)
    assert weights.mean(axis=0) == pytest.approx([1, 1, 1, 1], abs=0.03)
    assert (weights.max(axis=1) > 1).mean() == pytest.approx(1 - 24 / 256, abs=0.01)


def test_several_scores_share_one_set_of_resamples():
    stats = np.array([[1, 2], [0, 3], [2, 2], [1, 5]], dtype=float)
    both = resample.bootstrap_scores(stats, {"ratio": RATIO, "inverse": resample.ratio(1, 0)},
                                     samples=200, seed=9)
    assert both["ratio"] == resample.bootstrap(stats, RATIO, samples=200, seed=9)
    assert both["inverse"].value == pytest.approx(12 / 4)


@pytest.mark.parametrize("n, samples", [(0, 10), (3, 0)])
def test_weights_refuse_an_empty_corpus_or_no_resamples(n, samples):
    with pytest.raises(ValueError):
        resample.resample_weights(n, samples)


def test_a_single_sentence_has_no_spread():
    # every resample of one sentence is that sentence: 2 / 5
    interval = resample.bootstrap([[2, 5]], RATIO, samples=100)
    assert interval == resample.Interval(0.4, 0.4, 0.4)


def test_sentences_with_one_ratio_give_a_point_interval():
    # 1/2, 2/4, 3/6: any pooling is 1/2
    interval = resample.bootstrap([[1, 2], [2, 4], [3, 6]], RATIO, samples=200)
    assert (interval.value, interval.low, interval.high) == pytest.approx((0.5, 0.5, 0.5))


def test_the_interval_holds_the_pooled_value_and_spans_the_sentences():
    stats = [[0, 4], [4, 4], [1, 4], [3, 4]]          # pooled 8/16
    interval = resample.bootstrap(stats, RATIO, samples=500, seed=1)
    assert interval.value == 0.5
    assert 0.0 <= interval.low < 0.5 < interval.high <= 1.0


def test_identical_systems_differ_by_nothing_with_p_one():
    stats = [[0, 4], [4, 4], [1, 4]]
    comparison = resample.paired_bootstrap(stats, stats, RATIO, samples=300)
    assert comparison.difference == 0.0
    assert (comparison.low, comparison.high) == (0.0, 0.0)
    assert comparison.p == 1.0
    assert not comparison.significant()


def test_a_system_better_on_every_sentence_by_the_same_margin():
    # a: 1/2 on each sentence, b: 0: every resample differs by exactly 0.5, so no centred
    # difference reaches 0.5 and p is the smallest possible, 1 / (samples + 1).
    a, b = [[1, 2]] * 5, [[0, 2]] * 5
    comparison = resample.paired_bootstrap(a, b, RATIO, samples=99)
    assert (comparison.a, comparison.b, comparison.difference) == (0.5, 0.0, 0.5)
    assert (comparison.low, comparison.high) == pytest.approx((0.5, 0.5))
    assert comparison.p == pytest.approx(1 / 100)
    assert comparison.significant()


def test_paired_resampling_cancels_what_the_systems_share():
    # Sentence difficulty varies a lot, the systems differ by one count on every sentence:
    # pairing keeps the difference's interval narrow and away from zero.
    rng = np.random.default_rng(0)
    hard = rng.integers(0, 20, size=200)
    a = np.stack([hard + 1, np.full(200, 25)], axis=1)
    b = np.stack([hard, np.full(200, 25)], axis=1)
    comparison = resample.paired_bootstrap(a, b, RATIO, samples=300)
    assert comparison.difference == pytest.approx(1 / 25)
    assert comparison.low == pytest.approx(1 / 25) and comparison.high == pytest.approx(1 / 25)
    assert comparison.p < 0.01


def test_paired_bootstrap_refuses_unpaired_corpora():
    with pytest.raises(ValueError, match="2 against 3"):
        resample.paired_bootstrap([[1, 2]] * 2, [[1, 2]] * 3, RATIO)


def test_a_ratio_without_denominator_is_nan():
    assert math.isnan(RATIO(np.array([0.0, 0.0])))


def test_paired_t_test_over_seeds_by_hand():
    # differences 2, 3, 1: mean 2, sd 1, t = 2 / (1 / sqrt 3) = sqrt 12, 2 degrees of freedom;
    # the t(2) CDF is 1/2 + t / (2 sqrt(t^2 + 2)), so p = 1 - sqrt 12 / sqrt 14 = 0.0742.
    test = resample.paired_seed_test([20, 22, 24], [18, 19, 23])
    assert test.difference == pytest.approx(2.0)
    assert (test.mean_a, test.std_a) == pytest.approx((22.0, 2.0))
    assert test.p == pytest.approx(1 - math.sqrt(12 / 14))
    assert test.seeds == 3


def test_seed_test_edge_cases():
    assert resample.paired_seed_test([3, 4], [3, 4]).p == 1.0     # no difference at all
    assert resample.paired_seed_test([5, 6], [3, 4]).p == 0.0     # the same gain each time
    assert resample.paired_seed_test([5], [3]).p is None          # one seed: no test
    with pytest.raises(ValueError):
        resample.paired_seed_test([1, 2], [1])


def test_bleu_of_summed_sentence_statistics_is_sacrebleus_corpus_bleu():
    hyps = ["the cat sat on the mat", "a dog barks loudly", "hello there"]
    refs = ["the cat sat on a mat", "the dog barks", "hello there friend"]
    import sacrebleu

    bleu = get("bleu")
    interval = resample.bootstrap(bleu.statistics(hyps, refs), bleu.score, samples=200)
    assert round(interval.value, 2) == round(sacrebleu.corpus_bleu(hyps, [refs]).score, 2)
    assert interval.low <= interval.value <= interval.high


def test_score_files_with_bootstrap_keeps_the_sentence_statistics(tmp_path):
    (tmp_path / "h").write_text("a b c d\nx y\n", encoding="utf-8")
    (tmp_path / "r").write_text("a b c d\nx z\n", encoding="utf-8")
    record = score_files(get("bleu"), tmp_path / "h", tmp_path / "r", samples=50, seed=2)
    # hyp_len, ref_len, correct 1-4, total 1-4
    assert record["statistics"]["rows"] == [[4, 4, 4, 3, 2, 1, 4, 3, 2, 1],
                                            [2, 2, 1, 0, 0, 0, 2, 1, 0, 0]]
    assert record["bootstrap"]["samples"] == 50
    low, high = record["ci"]
    assert low <= record["score"] <= high
    plain = score_files(get("bleu"), tmp_path / "h", tmp_path / "r")
    assert plain["ci"] is None and "statistics" not in plain
    assert plain["score"] == record["score"]


def test_redundancy_bootstrap_record_by_hand():
    # "a a b c": one continuous pair of 3; "the cat the cat": two discontinuous pairs of 3;
    # "x y": none of 1. CRR 1/7, DRR 2/7. Source and reference repeat no word, so nothing
    # is exempt.
    hyps = [s.split() for s in ("a a b c", "the cat the cat", "x y")]
    srcs = [s.split() for s in ("s t u v", "d e f g", "q r")]
    refs = [s.split() for s in ("a b c d", "the cat sat", "x y z")]
    results = score_sentences(hyps, srcs, refs)
    record = bootstrap_record(results, samples=300, seed=1)
    assert record["statistics"]["rows"] == [[1, 0, 3], [0, 2, 3], [0, 0, 1]]
    totals = np.array(record["statistics"]["rows"]).sum(axis=0)
    assert measure_score("crr")(totals) == pytest.approx(1 / 7)
    assert measure_score("redundancy")(totals) == pytest.approx(3 / 7)
    low, high = record["crr_ci"]
    assert low <= 1 / 7 <= high and high <= 1 / 3 + 1e-12


def test_randomization_of_identical_systems_gives_p_one():
    stats = np.array([[1, 2], [0, 3], [2, 2]], dtype=float)
    assert resample.paired_randomization(stats, stats, RATIO, trials=99, seed=1) == 1.0


def test_randomization_p_by_hand_on_two_sentences():
    # a scores 1/1 on both sentences, b 0/1: the ratio difference is 1 - 0 = 1. Swapping
    # sentences gives a - b in {1, 0, 0, -1} with probability 1/4 each, so |d| >= 1 in half
    # of the trials: p -> (1 + trials/2) / (trials + 1), about 0.5.
    a = np.array([[1, 1], [1, 1]], dtype=float)
    b = np.array([[0, 1], [0, 1]], dtype=float)
    p = resample.paired_randomization(a, b, RATIO, trials=20000, seed=3)
    assert p == pytest.approx(0.5, abs=0.01)
    assert p == resample.paired_randomization(a, b, RATIO, trials=20000, seed=3)


def test_randomization_finds_a_consistent_difference():
    rng = np.random.default_rng(0)
    a = np.column_stack([rng.integers(5, 10, 200), np.full(200, 10)]).astype(float)
    b = a.copy()
    b[:, 0] -= 2  # every sentence of b has two hits fewer
    assert resample.paired_randomization(a, b, RATIO, trials=999, seed=2) == 1 / 1000
    with pytest.raises(ValueError, match="200 against 199"):
        resample.paired_randomization(a, b[:-1], RATIO)


# --------------------------------------------------------------------------- designs, families

def test_holm_adjusts_within_the_family_and_skips_untested():
    from phenomt.core.metrics.resample import holm

    # sorted 0.01, 0.03, 0.04 of m = 3: 3 x 0.01, max(0.03, 2 x 0.03), max(0.06, 1 x 0.04)
    assert holm([0.01, 0.04, 0.03, None]) == pytest.approx([0.03, 0.06, 0.06, None])
    assert holm([0.5, 0.9]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == [] and holm([None]) == [None]


def test_holm_leaves_undefined_p_values_out_of_the_family():
    import math

    from phenomt.core.metrics.resample import holm

    # a NaN p (an undefined difference) is no test: m = 2 for 0.01 and 0.02, whatever the
    # NaN's place, and the NaN stays NaN instead of raising the others to 1
    for pvalues, tested in (([math.nan, 0.01, 0.02], [1, 2]), ([0.01, math.nan, 0.02], [0, 2]),
                            ([0.01, 0.02, math.nan], [0, 1])):
        adjusted = holm(pvalues)
        assert [adjusted[i] for i in tested] == pytest.approx([0.02, 0.02])
        assert math.isnan(next(a for i, a in enumerate(adjusted) if i not in tested))


def test_cluster_weights_keep_a_cluster_together():
    from phenomt.core.metrics.resample import cluster_weights

    weights = cluster_weights(["s1", "s2", "s1", "s2", "s3"], samples=50, seed=3)
    assert weights.shape == (50, 5)
    assert (weights[:, 0] == weights[:, 2]).all() and (weights[:, 1] == weights[:, 3]).all()
    # three clusters drawn three times: the draw counts of s1, s2, s3 add up to 3
    assert (weights[:, 0] + weights[:, 1] + weights[:, 4] == 3).all()


def test_hierarchical_weights_are_products_of_seed_and_sentence_draws():
    from phenomt.core.metrics.resample import hierarchical_weights, resample_weights

    weights = hierarchical_weights(2, 3, samples=20, seed=7)
    seeds, sentences = resample_weights(2, 20, 7), resample_weights(3, 20, 8)
    assert weights.shape == (20, 6)
    assert weights[5, 1 * 3 + 2] == seeds[5, 1] * sentences[5, 2]
    assert (weights.sum(axis=1) == 6).all()  # 2 seeds x 3 sentences drawn


def test_bootstrap_equivalence_reads_both_tails_against_the_margin():
    from phenomt.core.metrics.resample import Comparison, bootstrap_equivalence

    inside = Comparison(1, 1, 0.0, -0.4, 0.4, 1.0, spread=np.linspace(-0.5, 0.5, 99))
    assert bootstrap_equivalence(inside, 1.0).p == pytest.approx(1 / 100)
    assert bootstrap_equivalence(inside, 1.0).shown()
    # 50 of 99 resampled differences at or above +0.25: p = (1 + 50) / 100
    wide = Comparison(1, 1, 0.25, 0, 0.5, 1.0, spread=np.array([0.0] * 49 + [0.5] * 50))
    assert bootstrap_equivalence(wide, 0.25).p == pytest.approx(51 / 100)
    assert not bootstrap_equivalence(wide, 0.25).shown()
    with pytest.raises(ValueError, match="margin must be positive"):
        bootstrap_equivalence(inside, 0)


def test_seed_equivalence_is_two_one_sided_t_tests():
    from scipy.stats import t

    from phenomt.core.metrics.resample import seed_equivalence

    # differences 0.1, -0.1, 0: mean 0, se 0.1 / sqrt(3); p = P(T_2 > 1 / se)
    close = seed_equivalence([10.1, 9.9, 10.0], [10.0, 10.0, 10.0], 1.0)
    assert close.p == pytest.approx(t.sf(1 / (0.1 / np.sqrt(3)), 2)) and close.shown()
    far = seed_equivalence([12.0, 12.1, 11.9], [10.0, 10.0, 10.0], 1.0)
    assert far.p > 0.99 and not far.shown()
    assert seed_equivalence([1.0], [1.0], 1.0).p == 1.0  # one seed proves nothing


def test_significance_clusters_cut_only_where_everything_above_beats_everything_below():
    from phenomt.core.metrics.resample import significance_clusters

    scores = {"A": 30.0, "B": 29.5, "C": 20.0, "D": 19.0}
    wins = {("A", "C"), ("A", "D"), ("B", "C"), ("B", "D")}
    assert significance_clusters(scores, lambda x, y: (x, y) in wins) == [["A", "B"],
                                                                          ["C", "D"]]
    # B is not above D: no cut can separate B from D, so all four share a cluster
    wins.discard(("B", "D"))
    assert significance_clusters(scores, lambda x, y: (x, y) in wins) == [["A", "B", "C",
                                                                           "D"]]


def test_interval_methods_percentile_and_sacrebleu():
    from phenomt.core.metrics.resample import interval_of

    values = np.arange(40, dtype=float)
    # sacreBLEU: sorted, 1/40 from each end (indices 1 and 38): mean 19.5 +- 18.5
    assert interval_of(values, "sacrebleu") == pytest.approx((1.0, 38.0))
    assert interval_of(values, "percentile") == pytest.approx(
        tuple(np.percentile(values, [2.5, 97.5])))
    with pytest.raises(ValueError, match="unknown interval method"):
        interval_of(values, "normal")


def test_one_resampler_serves_every_system_metric_and_slice_alike():
    """The shared engine gives, cell by cell, what the one-pair functions give on the same
    resamples: systems scored together or alone, a slice by its rows, every system against
    the baseline at once or one by one."""
    from phenomt.core.metrics.resample import Resampler, paired_bootstrap

    bleu, crr = get("bleu"), get("crr")
    refs = ["the cat sat on the mat today", "a dog ran in the park", "it rains a lot here",
            "we like green tea", "the sun is up now", "birds sing at dawn"] * 5
    hyps = [[r.replace("the", "a") for r in refs], [r[::-1] for r in refs],
            [" ".join(r.split()[:-1]) for r in refs]]
    srcs = [f"q {r}" for r in refs]
    engine = Resampler(len(refs), samples=200, seed=5)
    for metric in (bleu, crr):
        stats = [metric.statistics(h, refs, srcs) for h in hyps]
        rows = [1, 2, 3, 7, 11, 20, 29]
        observed, values = engine.resampled_many(metric.score, stats, rows)
        for k, system in enumerate(stats):
            alone = engine.resampled(metric.score, system, rows)
            assert observed[k] == alone[0] and np.array_equal(values[k], alone[1],
                                                              equal_nan=True)
        # every resample of the slice counts the full resample's draws of its rows (the
        # batch BLEU and sacreBLEU's own can differ in the last digits: 100.00000000000004)
        np.testing.assert_allclose(values[0], np.array(
            [metric.score(w[rows] @ stats[0][rows]) for w in engine.weights]), rtol=1e-12,
            atol=0, equal_nan=True)
        full_obs, full = engine.resampled_many(metric.score, stats)
        together = engine.compare_all(full_obs, full, base=0)
        one_pair = paired_bootstrap(stats[1], stats[0], metric.score, samples=200, seed=5)
        assert together[1].p == pytest.approx(one_pair.p)
        assert (together[1].low, together[1].high) == pytest.approx((one_pair.low,
                                                                     one_pair.high))
        assert together[0].p == 1.0 and together[0].difference == 0.0
        assert engine.intervals(full)[2] == pytest.approx(engine.interval(full[2]))


def test_vectorised_scores_equal_the_row_by_row_scores():
    """Each metric's scores() gives score()'s number on every row, zeros and empties
    included (sacreBLEU's own arithmetic row by row is the reference)."""
    refs = ["the cat sat on the mat", "a b", "x", "one two three four five"]
    hyps = ["the cat sat on a mat", "", "x y", "one two three"]
    for name in ("bleu", "chrf", "ter"):
        metric = get(name)
        stats = metric.statistics(hyps, refs)
        rows = np.vstack([stats, stats.cumsum(axis=0), np.zeros((1, stats.shape[1]))])
        assert metric.scores(rows) == pytest.approx([metric.score(r) for r in rows],
                                                    abs=1e-9)
