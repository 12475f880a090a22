"""Sentence-bootstrap intervals and paired tests for any corpus metric whose score is a
function of per-sentence statistics summed over the corpus: BLEU (sacreBLEU's n-gram counts,
the registered BLEU's statistics), CRR and DRR (pair counts over |Y| - 1).

A resample draws n sentences with replacement; it is stored as a row of multinomial weights
(how often each sentence was drawn), so the resampled corpus statistics of every resample are
one matrix product and the resamples of two systems on the same sentences are the same rows
(a paired bootstrap, Koehn 2004). Intervals are percentile intervals. The p-value of a
difference is two-sided, from the bootstrap distribution of the difference centred on zero
(the null of no difference); ">=" makes identical systems get p = 1. Over seeds (a handful of
trained models per setting) the paired test is Student's paired t-test (scipy).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from phenomt.core.io import InputError

DEFAULT_SAMPLES = 1000
DEFAULT_SEED = 12345
CONFIDENCE = 0.95
ALPHA = 0.05
#: A slice of fewer sentences (a challenge set, a bucket) gets an interval but no test:
#: resampling a handful of sentences understates the spread, down to an interval of width 0
#: for one sentence.
MIN_INTERVAL_SENTENCES = 10

Score = Callable[[np.ndarray], float]
"""A corpus score from one vector of summed sentence statistics."""


@dataclass(frozen=True)
class Interval:
    """A corpus score and its bootstrap percentile interval."""

    value: float
    low: float
    high: float

    def as_list(self) -> list[float]:
        return [self.low, self.high]


@dataclass(frozen=True)
class Comparison:
    """System a against system b on the same sentences: a - b, its paired-bootstrap
    interval and two-sided p."""

    a: float
    b: float
    difference: float
    low: float
    high: float
    p: float
    #: the resampled differences (for an equivalence test); not part of the record
    spread: np.ndarray | None = field(default=None, repr=False, compare=False)

    def significant(self, alpha: float = ALPHA) -> bool:
        return self.p < alpha

    def as_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "difference": self.difference,
                "difference_ci": [self.low, self.high], "p_bootstrap": self.p}


def ratio(numerator: int, denominator: int) -> Score:
    """The score ``sum(column numerator) / sum(column denominator)``; NaN when the summed
    denominator is 0. Its ``batch`` attribute scores a matrix of totals at once."""
    def score(totals: np.ndarray) -> float:
        return float(totals[numerator] / totals[denominator]) if totals[denominator] else np.nan

    def batch(totals: np.ndarray) -> np.ndarray:
        rows = np.atleast_2d(totals)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(rows[:, denominator] != 0,
                            rows[:, numerator] / rows[:, denominator], np.nan)
    score.batch = batch  # type: ignore[attr-defined]
    return score


def batch_scores(score: Score, totals: np.ndarray) -> np.ndarray:
    """``score`` of every row of ``totals``: at once where the score can (a registered
    metric's :meth:`~phenomt.core.metrics.base.Metric.scores`, a :func:`ratio`'s ``batch``),
    else row by row."""
    batch = getattr(score, "batch", None) or getattr(getattr(score, "__self__", None),
                                                     "scores", None)
    if batch is not None:
        return np.asarray(batch(totals), dtype=np.float64)
    return np.array([score(row) for row in totals], dtype=np.float64)


def record_statistics(record: Mapping[str, Any], path: str | Path,
                      columns: Sequence[str] | None = None,
                      missing: str = "no per-sentence statistics: score it with --samples N"
                      ) -> np.ndarray:
    """The per-unit statistics a score record keeps (``phenomt score ... --samples N``: one
    row per sentence), as ``len(columns)`` columns when the record must name exactly those;
    an error naming the file (``missing``) when it has none or others."""
    stats = record.get("statistics")
    if not stats or (columns is not None and stats.get("columns") != list(columns)):
        raise InputError(path, missing)
    rows = np.asarray(stats["rows"], dtype=np.float64)
    return rows if columns is None else rows.reshape(-1, len(columns))


def resample_indices(n: int, samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED,
                     size: int | None = None) -> np.ndarray:
    """``samples`` x ``size`` (default ``n``) indices drawn uniformly with replacement from
    ``range(n)``: the draws behind :func:`resample_weights` (the same seed, the same draws),
    for units that are summed whole (documents) or samples smaller than the corpus."""
    if n < 1:
        raise ValueError("cannot resample an empty corpus")
    if samples < 1:
        raise ValueError(f"samples must be positive, got {samples}")
    return np.random.default_rng(seed).integers(0, n, size=(samples, size or n))


def resample_weights(n: int, samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED
                     ) -> np.ndarray:
    """``samples`` x ``n`` draw counts: row r says how often resample r drew each sentence
    (n draws with replacement, uniform: a multinomial row, counted from drawn indices, which
    is some ten times faster than numpy's multinomial for thousands of sentences)."""
    drawn = resample_indices(n, samples, seed) + n * np.arange(samples)[:, None]
    return np.bincount(drawn.ravel(), minlength=samples * n).reshape(samples, n)


def _statistics(stats: Sequence | np.ndarray) -> np.ndarray:
    array = np.asarray(stats, dtype=np.float64)
    if array.ndim != 2 or len(array) == 0:
        raise ValueError(f"expected one row of statistics per sentence, got shape {array.shape}")
    return array


def _scores(weights: np.ndarray, stats: np.ndarray, score: Score) -> np.ndarray:
    return batch_scores(score, weights @ stats)


def _percentiles(values: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1 - confidence) / 2 * 100
    finite = values[np.isfinite(values)]
    if len(finite) == 0:
        return np.nan, np.nan
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap(stats: Sequence | np.ndarray, score: Score, *, samples: int = DEFAULT_SAMPLES,
              seed: int = DEFAULT_SEED, confidence: float = CONFIDENCE) -> Interval:
    """The corpus score of ``stats`` (one row per sentence) with its percentile interval."""
    return bootstrap_scores(stats, {"score": score}, samples=samples, seed=seed,
                            confidence=confidence)["score"]


def bootstrap_scores(stats: Sequence | np.ndarray, scores: Mapping[str, Score], *,
                     samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED,
                     confidence: float = CONFIDENCE) -> dict[str, Interval]:
    """:func:`bootstrap` of several scores of the same statistics (CRR, DRR and their sum)
    over the same resamples, drawn once."""
    array = _statistics(stats)
    resampled = resample_weights(len(array), samples, seed) @ array
    found = {}
    for name, score in scores.items():
        low, high = _percentiles(batch_scores(score, resampled), confidence)
        found[name] = Interval(float(score(array.sum(axis=0))), low, high)
    return found


def paired_bootstrap(stats_a: Sequence | np.ndarray, stats_b: Sequence | np.ndarray,
                     score: Score, *, samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED,
                     confidence: float = CONFIDENCE) -> Comparison:
    """Score of a minus score of b, both resampled with the same sentences."""
    a, b = _statistics(stats_a), _statistics(stats_b)
    if len(a) != len(b):
        raise ValueError(f"paired test on {len(a)} against {len(b)} sentences")
    return paired_test(a, b, score, resample_weights(len(a), samples, seed),
                       confidence=confidence)


def paired_randomization(stats_a: Sequence | np.ndarray, stats_b: Sequence | np.ndarray,
                         score: Score, *, trials: int = 10_000, seed: int = DEFAULT_SEED,
                         batch: int = 500) -> float:
    """Two-sided p of score(a) - score(b) by paired approximate randomization (Riezler &
    Maxwell 2005): each trial swaps the two systems' statistics of every sentence with
    probability 1/2; p = (1 + trials with |difference| >= |observed|) / (trials + 1), so
    identical systems get p = 1. A trial's summed statistics are one matrix product (swapping
    sentence i moves b_i - a_i from b's total to a's), some ten times faster than scipy's
    permutation_test, whose paired resampling loops in Python."""
    return paired_randomization_scores(stats_a, stats_b, {"score": score}, trials=trials,
                                       seed=seed, batch=batch)["score"]


def paired_randomization_scores(stats_a: Sequence | np.ndarray, stats_b: Sequence | np.ndarray,
                                scores: Mapping[str, Score], *, trials: int = 10_000,
                                seed: int = DEFAULT_SEED, batch: int = 500) -> dict[str, float]:
    """:func:`paired_randomization` of several scores of the same statistics (CRR, DRR and
    their sum) over the same trials, drawn once: each score's p is the one its own call would
    give."""
    a, b = _statistics(stats_a), _statistics(stats_b)
    if len(a) != len(b):
        raise ValueError(f"paired test on {len(a)} against {len(b)} sentences")
    if trials < 1:
        raise ValueError(f"trials must be positive, got {trials}")
    total_a, total_b, moved = a.sum(axis=0), b.sum(axis=0), b - a
    observed = {name: abs(score(total_a) - score(total_b)) for name, score in scores.items()}
    extreme = dict.fromkeys(scores, 0)
    rng = np.random.default_rng(seed)
    for start in range(0, trials, batch):
        swaps = rng.integers(0, 2, size=(min(batch, trials - start), len(a))).astype(np.float64)
        shift = swaps @ moved
        for name, score in scores.items():
            differences = np.abs(batch_scores(score, total_a + shift)
                                 - batch_scores(score, total_b - shift))
            # a tolerance, so that a tie is not lost to float rounding of the sums (a NaN
            # difference is never as extreme)
            extreme[name] += int(np.count_nonzero(differences >= observed[name] - 1e-12))
    return {name: (1 + count) / (trials + 1) for name, count in extreme.items()}


@dataclass(frozen=True)
class SeedTest:
    """Paired t-test of per-seed scores (seed i of a against seed i of b)."""

    mean_a: float
    mean_b: float
    std_a: float
    std_b: float
    difference: float
    p: float | None
    seeds: int

    def as_dict(self) -> dict:
        return {"mean_a": self.mean_a, "mean_b": self.mean_b, "std_a": self.std_a,
                "std_b": self.std_b, "difference": self.difference, "p_seeds": self.p,
                "seeds": self.seeds}


def paired_seed_test(a: Sequence[float], b: Sequence[float]) -> SeedTest:
    """Means, sample standard deviations and the paired t-test p over seeds (None with fewer
    than two seeds). Equal differences on every seed have no spread: p = 1 when they are all
    zero and 0 otherwise (the t statistic is infinite)."""
    from scipy.stats import ttest_rel

    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(x) != len(y) or len(x) == 0:
        raise ValueError(f"paired test on {len(x)} against {len(y)} seeds")
    diff = x - y
    if len(x) < 2:
        p = None
    elif np.allclose(diff, diff[0]):
        p = 1.0 if np.isclose(diff[0], 0.0) else 0.0
    else:
        p = float(ttest_rel(x, y).pvalue)
    ddof = 1 if len(x) > 1 else 0
    return SeedTest(float(x.mean()), float(y.mean()), float(x.std(ddof=ddof)),
                    float(y.std(ddof=ddof)), float(diff.mean()), p, len(x))


# --------------------------------------------------------------------------- designs

def cluster_weights(clusters: Sequence[Any], samples: int = DEFAULT_SAMPLES,
                    seed: int = DEFAULT_SEED) -> np.ndarray:
    """``samples`` x ``len(clusters)`` weights of a cluster bootstrap: the clusters (the
    distinct labels, e.g. a source sentence translated by several seeds, or a document) are
    drawn with replacement and every unit gets its cluster's draw count. Units of one cluster
    are never separated, so their correlation widens the interval as it should."""
    labels, index = np.unique(np.asarray(clusters, dtype=object).astype(str),
                              return_inverse=True)
    return resample_weights(len(labels), samples, seed)[:, index]


def cluster_sums(stats: Sequence | np.ndarray, clusters: Sequence[Any] | None) -> np.ndarray:
    """The rows of each cluster summed (clusters in order of first appearance); the rows
    themselves without clusters. A test that swaps or draws rows one by one (approximate
    randomization) treats a cluster as one unit on these sums."""
    array = _statistics(stats)
    if clusters is None:
        return array
    if len(clusters) != len(array):
        raise ValueError(f"{len(clusters)} cluster labels for {len(array)} rows")
    labels = [str(c) for c in clusters]
    order = {label: k for k, label in enumerate(dict.fromkeys(labels))}
    sums = np.zeros((len(order), array.shape[1]), dtype=np.float64)
    np.add.at(sums, [order[label] for label in labels], array)
    return sums


def hierarchical_weights(groups: int, units: int, samples: int = DEFAULT_SAMPLES,
                         seed: int = DEFAULT_SEED) -> np.ndarray:
    """Weights of a two-level bootstrap over ``groups`` (training seeds) and ``units``
    (sentences) for rows stacked group by group (row ``g * units + j``): each resample draws
    the groups with replacement and, independently, the sentences; a row's weight is the
    product of the two counts. Its spread covers both the variation between training runs
    and between test sentences."""
    if groups < 1:
        raise ValueError("cannot resample no groups")
    outer = resample_weights(groups, samples, seed)
    inner = resample_weights(units, samples, seed + 1)
    return (outer[:, :, None] * inner[:, None, :]).reshape(samples, groups * units)


def paired_test(stats_a: Sequence | np.ndarray, stats_b: Sequence | np.ndarray, score: Score,
                weights: np.ndarray, *, confidence: float = CONFIDENCE) -> Comparison:
    """:func:`paired_bootstrap` with given resample weights (a cluster or hierarchical design,
    or weights shared with other comparisons of the same test set)."""
    a, b = _statistics(stats_a), _statistics(stats_b)
    if len(a) != len(b) or weights.shape[1] != len(a):
        raise ValueError(f"paired test on {len(a)} against {len(b)} rows with weights for "
                         f"{weights.shape[1]}")
    score_a, score_b = score(a.sum(axis=0)), score(b.sum(axis=0))
    observed = score_a - score_b
    spread = _scores(weights, a, score) - _scores(weights, b, score)
    spread = spread[np.isfinite(spread)]
    low, high = _percentiles(spread, confidence)
    return Comparison(float(score_a), float(score_b), float(observed), low, high,
                      _p_value(spread, observed), spread=spread)


def _p_value(spread: np.ndarray, observed: float) -> float:
    """Two-sided p of ``observed`` against the centred resampled differences; NaN when the
    observed difference itself is undefined (a score without a defined value)."""
    if not np.isfinite(observed):
        return float("nan")
    centred = spread - spread.mean() if len(spread) else spread
    return float((1 + np.sum(np.abs(centred) >= abs(observed))) / (len(spread) + 1))


# --------------------------------------------------------------------------- several tests

def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of the p-values of one family of tests (None: not
    tested, left out of the family). Adjusted p_(i) = max over j <= i of
    min(1, (m - j + 1) p_(j)) in ascending order; it controls the family-wise error rate
    under any dependence between the tests. A NaN p (a test whose observed difference is
    undefined) is no test either: it stays NaN and is left out of the family, so it neither
    sets the order nor raises the others' adjusted p."""
    tested = [(p, i) for i, p in enumerate(pvalues) if p is not None and not math.isnan(p)]
    m = len(tested)
    adjusted: list[float | None] = [None if p is None else float("nan") for p in pvalues]
    running = 0.0
    for rank, (p, index) in enumerate(sorted(tested)):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[index] = running
    return adjusted


# --------------------------------------------------------------------------- equivalence

@dataclass(frozen=True)
class Equivalence:
    """Two one-sided tests (TOST) of |a - b| < ``margin``: p is the larger of the two
    one-sided p-values; equivalence is shown when p < alpha, which is the same as the
    (1 - 2 alpha) interval of the difference lying inside (-margin, margin)."""

    difference: float
    margin: float
    p: float

    def shown(self, alpha: float = ALPHA) -> bool:
        return self.p < alpha


def bootstrap_equivalence(comparison: Comparison, margin: float) -> Equivalence:
    """TOST from a paired bootstrap's distribution of the difference: p_lower is the share of
    resampled differences at or below -margin, p_upper at or above +margin (each with the
    +1 of a resampling p-value)."""
    if margin <= 0:
        raise ValueError(f"an equivalence margin must be positive, got {margin}")
    spread = comparison.spread
    if spread is None or not len(spread):
        return Equivalence(comparison.difference, margin, 1.0)
    n = len(spread)
    lower = (1 + np.sum(spread <= -margin)) / (n + 1)
    upper = (1 + np.sum(spread >= margin)) / (n + 1)
    return Equivalence(comparison.difference, margin, float(max(lower, upper)))


def seed_equivalence(a: Sequence[float], b: Sequence[float], margin: float) -> Equivalence:
    """TOST over seeds: two one-sided paired t-tests of the mean difference against -margin
    and +margin (p = 1 with fewer than two seeds or no spread inside the margin)."""
    from scipy.stats import t as student

    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    diff = x - y
    mean = float(diff.mean()) if len(diff) else np.nan
    if len(diff) < 2:
        return Equivalence(mean, margin, 1.0)
    se = float(diff.std(ddof=1) / np.sqrt(len(diff)))
    if se == 0.0:
        return Equivalence(mean, margin, 0.0 if abs(mean) < margin else 1.0)
    df = len(diff) - 1
    p_lower = float(student.sf((mean + margin) / se, df))
    p_upper = float(student.cdf((mean - margin) / se, df))
    return Equivalence(mean, margin, max(p_lower, p_upper))


# --------------------------------------------------------------------------- ranking

def significance_clusters(scores: Mapping[str, float],
                          better: Callable[[str, str], bool]) -> list[list[str]]:
    """Systems ordered by score (best first) and cut into clusters as WMT ranks them: a cut
    falls after position k only when every system above it is significantly better than
    every system below it (``better(x, y)``: x significantly above y after correction).
    Systems within a cluster are not told apart."""
    order = sorted(scores, key=lambda s: (-scores[s], s))
    clusters: list[list[str]] = [[]]
    for k, system in enumerate(order):
        clusters[-1].append(system)
        below = order[k + 1:]
        if below and all(better(x, y) for x in order[:k + 1] for y in below):
            clusters.append([])
    return [c for c in clusters if c]


# --------------------------------------------------------------------------- intervals

#: How an interval is read off the resampled scores: the percentile interval (the default),
#: or sacreBLEU's mean of the resamples +- half the width of their 95% range, for comparison
#: with published sacreBLEU intervals.
INTERVAL_METHODS = ("percentile", "sacrebleu")


def interval_of(values: np.ndarray, method: str = "percentile",
                confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The interval of resampled scores ``values`` by ``method`` (:data:`INTERVAL_METHODS`).
    sacreBLEU's form is centred on the resamples' mean, so it need not contain the score and
    may leave the metric's range; callers clip and flag it."""
    finite = np.sort(values[np.isfinite(values)])
    if not len(finite):
        return np.nan, np.nan
    if method == "percentile":
        return _percentiles(finite, confidence)
    if method == "sacrebleu":
        lower = len(finite) // 40
        half = 0.5 * (finite[len(finite) - lower - 1] - finite[lower])
        mean = float(finite.mean())
        return mean - half, mean + half
    raise ValueError(f"unknown interval method {method!r} (one of {INTERVAL_METHODS})")


# --------------------------------------------------------------------------- one test set

class Resampler:
    """The resamples of one test set, drawn once and shared by every system, metric and
    slice (a challenge set, a bucket, a masked part): a slice's resample counts the
    sentences of the full resample that fall in it, so any two cells of a table are paired
    on the same resamples. The resampled totals of one metric for every system are one
    matrix product."""

    def __init__(self, sentences: int, samples: int = DEFAULT_SAMPLES,
                 seed: int = DEFAULT_SEED, method: str = "percentile",
                 confidence: float = CONFIDENCE, clusters: Sequence[Any] | None = None
                 ) -> None:
        if method not in INTERVAL_METHODS:
            raise ValueError(f"unknown interval method {method!r} (one of {INTERVAL_METHODS})")
        self.sentences, self.samples, self.seed = sentences, samples, seed
        self.method, self.confidence = method, confidence
        #: what one draw picks: sentences, or whole clusters (documents) given one label a
        #: sentence
        self.unit = "sentence" if clusters is None else "cluster"
        if clusters is None:
            weights = resample_weights(sentences, samples, seed)
        else:
            if len(clusters) != sentences:
                raise ValueError(f"{len(clusters)} cluster labels for {sentences} sentences")
            weights = cluster_weights(clusters, samples, seed)
        self.weights = weights.astype(np.float64)

    def _weights(self, rows: Sequence[int] | np.ndarray | None) -> np.ndarray:
        return self.weights if rows is None else self.weights[:, np.asarray(rows, np.int64)]

    def _select(self, stats: np.ndarray, rows: Sequence[int] | np.ndarray | None
                ) -> np.ndarray:
        array = _statistics(stats)
        if len(array) != self.sentences:
            raise ValueError(f"{len(array)} rows of statistics for a test set of "
                             f"{self.sentences} sentences")
        return array if rows is None else array[np.asarray(rows, np.int64)]

    def resampled(self, score: Score, stats: np.ndarray,
                  rows: Sequence[int] | np.ndarray | None = None) -> tuple[float, np.ndarray]:
        """The score of ``stats`` (restricted to ``rows``) and its score on every resample."""
        array = self._select(stats, rows)
        weights = self._weights(rows)
        return float(score(array.sum(axis=0))), self._undrawn(
            weights, batch_scores(score, weights @ array))

    @staticmethod
    def _undrawn(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
        """NaN for the resamples that drew none of a slice's sentences: its score is
        undefined there (not 0), and intervals and tests leave those resamples out."""
        empty = weights.sum(axis=1) == 0
        if empty.any():
            values = values.copy()
            values[..., empty] = np.nan
        return values

    def resampled_many(self, score: Score, stats: Sequence[np.ndarray],
                       rows: Sequence[int] | np.ndarray | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`resampled` of several systems' statistics (same columns) in one product:
        their scores and a (systems x resamples) matrix."""
        blocks = [self._select(s, rows) for s in stats]
        width = blocks[0].shape[1]
        totals = self._weights(rows) @ np.hstack(blocks)
        observed = np.array([float(score(b.sum(axis=0))) for b in blocks])
        per_system = [batch_scores(score, totals[:, k * width:(k + 1) * width])
                      for k in range(len(blocks))]
        return observed, self._undrawn(self._weights(rows), np.vstack(per_system))

    def interval(self, values: np.ndarray) -> tuple[float, float]:
        """The interval of resampled scores by this test set's method."""
        return interval_of(values, self.method, self.confidence)

    def intervals(self, values: np.ndarray) -> np.ndarray:
        """:meth:`interval` of every row of a (cells x resamples) matrix at once: (cells x 2).
        Resamples whose score is undefined (NaN) are left out, as in :meth:`interval`."""
        if self.method != "percentile" or not np.isfinite(values).all():
            return np.array([self.interval(row) for row in values]).reshape(-1, 2)
        tail = (1 - self.confidence) / 2 * 100
        return np.percentile(values, [tail, 100 - tail], axis=1).T

    def compare_all(self, observed: np.ndarray, values: np.ndarray, base: int
                    ) -> list[Comparison]:
        """Every row (system) against row ``base`` on the same resamples, at once where no
        resampled score is undefined."""
        if not np.isfinite(values).all():
            return [self.compare(observed[k], values[k], observed[base], values[base])
                    for k in range(len(values))]
        spread = values - values[base]
        differences = observed - observed[base]
        tail = (1 - self.confidence) / 2 * 100
        low, high = np.percentile(spread, [tail, 100 - tail], axis=1)
        centred = spread - spread.mean(axis=1, keepdims=True)
        extreme = (np.abs(centred) >= np.abs(differences)[:, None]).sum(axis=1)
        p = (1 + extreme) / (spread.shape[1] + 1)
        return [Comparison(float(observed[k]), float(observed[base]), float(differences[k]),
                           float(low[k]), float(high[k]), float(p[k]), spread=spread[k])
                for k in range(len(values))]

    def compare(self, observed_a: float, values_a: np.ndarray, observed_b: float,
                values_b: np.ndarray) -> Comparison:
        """a - b from two cells' resampled scores (paired: the same resamples)."""
        spread = values_a - values_b
        spread = spread[np.isfinite(spread)]
        low, high = _percentiles(spread, self.confidence)
        observed = observed_a - observed_b
        return Comparison(float(observed_a), float(observed_b), float(observed), low, high,
                          _p_value(spread, observed), spread=spread)


def _standard_ranks(values: Sequence[float]) -> np.ndarray:
    """Average ranks (ties share theirs), centred and scaled to unit length: the dot product of
    two such vectors is Spearman's rho, computed at once for every permutation."""
    from scipy.stats import rankdata

    ranks = rankdata(values)
    ranks = ranks - ranks.mean()
    return ranks / np.sqrt(ranks @ ranks)


def rank_permutation_p(xs: Sequence[float], ys: Sequence[float], resamples: int | None,
                       seed: int) -> float:
    """Two-sided permutation p of Spearman's rho between ``xs`` and ``ys``: the share of
    pairings of the xs with the fixed ys whose |rho| is at least the observed (scipy's
    ``permutation_test``; ``resamples`` None: exact over all n! pairings, else that many
    seeded random ones). |rho| >= |rho_obs| stays two-sided when ties make the null
    distribution asymmetric. One sample with 'pairings': permuting both would be (n!)^2."""
    from scipy.stats import permutation_test

    y = _standard_ranks(ys)

    def abs_rho(x: np.ndarray, axis: int) -> np.ndarray:
        return np.abs(np.sum(x * y, axis=axis))

    result = permutation_test((_standard_ranks(xs),), abs_rho, permutation_type="pairings",
                              vectorized=True, alternative="greater",
                              n_resamples=np.inf if resamples is None else resamples,
                              random_state=seed)
    return float(result.pvalue)
