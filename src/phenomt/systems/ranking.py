"""Every system of a test set against every other: paired tests on the test set's shared
resamples, Holm's correction over the family of pairs, and WMT-style significance clusters.

The records of ``phenomt systems score`` keep the per-sentence statistics of every metric on
their main subset; the resamples are drawn once per test set
(:class:`phenomt.core.metrics.resample.Resampler`, the records' own resample count and seed),
so every pair is tested on the same resamples. Per test set and metric, the family is all
k(k-1)/2 pairs of its k systems, and the comparisons against the baseline are the k-1 of them
that involve it: their Holm-adjusted p is what the table marks. A cluster boundary falls where
every system above is significantly better (adjusted p < 0.05, in the metric's direction) than
every system below (:func:`phenomt.core.metrics.resample.significance_clusters`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from phenomt.core.io import InputError
from phenomt.core.metrics import resample
from phenomt.systems.scores import recorded_metric


@dataclass(frozen=True)
class Ranking:
    """One metric's ranking of a test set's systems."""

    clusters: list[list[str]]
    #: Holm-adjusted p of every pair (both orders)
    adjusted: dict[tuple[str, str], float]
    #: raw p of every pair (both orders)
    raw: dict[tuple[str, str], float]
    pairs: int

    def cluster_of(self, system: str) -> int | None:
        """1 for the best cluster; None for a system without a score to rank (undefined)."""
        return next((k for k, members in enumerate(self.clusters, start=1)
                     if system in members), None)


def _statistics(record: Mapping, key: str) -> dict:
    entry = record["subsets"][record["main"]].get(key) or {}
    stats = entry.get("statistics")
    if not stats:
        raise InputError(record.get("path", record["system"]),
                         f"no per-sentence {key} statistics: score it again with this version "
                         "of phenomt systems score")
    return stats


def rank(records: Sequence[Mapping], key: str) -> Ranking | None:
    """The ranking of one test set's ``records`` (one per system) by metric ``key``; None
    with fewer than two systems."""
    if len(records) < 2:
        return None
    metric = recorded_metric(records[0], key)
    for record in records[1:]:
        if recorded_metric(record, key).signature() != metric.signature():
            raise InputError(record.get("path", record["system"]),
                             f"scored with other {key} settings than {records[0]['system']}: "
                             "systems ranked together must be scored alike")
    test = records[0]["test"]
    systems = [r["system"] for r in records]
    kept = [_statistics(r, key) for r in records]
    stats = [np.asarray(k["rows"], dtype=np.float64) for k in kept]
    # documents for a metric whose pairs span sentences (LTCR), as its records were scored
    clusters = kept[0].get("clusters")
    engine = resample.Resampler(len(stats[0]), test["ci_samples"], test["seed"],
                                clusters=clusters)
    observed, values = engine.resampled_many(metric.score, stats)
    pairs = list(combinations(range(len(systems)), 2))
    units = len(stats[0]) if clusters is None else len(set(clusters))
    raw = []
    for i, j in pairs:
        if test["type"] != "ar" and units < resample.MIN_INTERVAL_SENTENCES:
            raw.append(float("nan"))  # too few to resample: no test (as in the records)
        elif test["type"] == "ar":
            raw.append(resample.paired_randomization(resample.cluster_sums(stats[i], clusters),
                                                     resample.cluster_sums(stats[j], clusters),
                                                     metric.score,
                                                     trials=test["samples"],
                                                     seed=test["seed"]))
        else:
            raw.append(engine.compare(observed[i], values[i], observed[j], values[j]).p)
    adjusted = resample.holm(raw)
    sign = 1.0 if metric.higher_is_better else -1.0
    p_of = {}
    raw_of = {}
    for (i, j), p, q in zip(pairs, raw, adjusted, strict=True):
        for a, b in ((i, j), (j, i)):
            # NaN: an undefined difference, no test (and never a cluster boundary)
            p_of[systems[a], systems[b]] = float("nan") if q is None else float(q)
            raw_of[systems[a], systems[b]] = float(p)
    # a system whose score is undefined (NaN) is in no cluster: it has nothing to rank by
    scores = {s: sign * float(v) for s, v in zip(systems, observed, strict=True)
              if np.isfinite(v)}

    def better(x: str, y: str) -> bool:
        return scores[x] > scores[y] and p_of[x, y] < resample.ALPHA

    return Ranking(resample.significance_clusters(scores, better), p_of, raw_of, len(pairs))
