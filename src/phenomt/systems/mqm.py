"""MQM human error annotations: per-system category rates and their rank correlation with a
metric across systems.

The files are Google's WMT MQM releases (``system doc doc_id seg_id rater source target
category severity`` and, for some, ``comment``), one row per marked error and one ``No-error``
row for a segment without errors. Every system is annotated on the same segments.

- **Rate** of a category for a system = (rows of that category) / (segments of that system
  that were annotated), i.e. errors per annotated segment. The share of segments with at least
  one such error is recorded beside it.
- **Correlation**: Spearman's ρ across systems (``scipy.stats.spearmanr``) between a metric
  column and a rate, over the systems present in both; with n, ρ and the two-sided p, and
  that p Holm-adjusted over all the correlations of a record (``p_holm``: one table shows
  them together, every metric against every category). The p is a permutation test
  (:func:`phenomt.core.metrics.resample.rank_permutation_p`): the share of pairings of the
  metric values with the rates whose |ρ| is at least the observed one, exact over all n!
  pairings up to :data:`EXACT_UP_TO` systems and a seeded Monte Carlo estimate above. It covers the
  annotated systems only (they are no sample of systems), and unlike the t-approximation of
  ``spearmanr`` it is right for the few systems an MQM set has: ρ = 1 from 3 systems has
  p = 2/6, not 0. With
  fewer than :data:`WEAK_BELOW` systems the result is flagged as weak evidence (``weak``); a
  category with fewer than that many errors over those systems is flagged ``few_errors``.
"""

from __future__ import annotations

import csv
import math
import os
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from phenomt.core.io import InputError
from phenomt.core.metrics import resample
from phenomt.core.metrics.resample import holm
from phenomt.systems.outputs import read_text

RELEVANT_CATEGORIES = ("Terminology/Inconsistent use of terminology", "Fluency/Inconsistency",
                       "Accuracy/Addition")
REQUIRED_COLUMNS = ("system", "doc", "doc_id", "seg_id", "source", "target", "category")
NO_ERROR = "No-error"
WEAK_BELOW = 10
# 9! = 362 880 pairings take a fraction of a second; 10! takes ten times that per correlation
EXACT_UP_TO = 9
MONTE_CARLO_RESAMPLES = 99_999
PERMUTATION_SEED = 12345


@dataclass(frozen=True)
class MqmRow:
    """One annotation row; ``line`` is its 1-based line in the file."""

    line: int
    system: str
    doc: str
    doc_id: int
    seg_id: int
    rater: str
    source: str
    target: str
    category: str
    severity: str


def _integer(value: str, column: str, path: str | os.PathLike[str], line: int) -> int:
    try:
        return int(value)
    except ValueError:
        raise InputError(path, f"column {column!r} must be an integer, found {value!r}",
                         line) from None


def read_mqm(path: str | os.PathLike[str]) -> list[MqmRow]:
    """Read an MQM TSV file (fields are not quoted: quotes are part of the text)."""
    lines = read_text(path)
    if not lines:
        raise InputError(path, "empty file: expected a header row")
    header = lines[0].split("\t")
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise InputError(path, f"header lacks column(s) {', '.join(missing)}", 1)
    rows = []
    for number, fields in enumerate(csv.reader(lines[1:], delimiter="\t",
                                               quoting=csv.QUOTE_NONE), start=2):
        if not fields:
            continue
        if len(fields) != len(header):
            raise InputError(path, f"expected {len(header)} tab-separated fields, found "
                                   f"{len(fields)}", number)
        row = dict(zip(header, fields, strict=True))
        if not row["system"] or not row["category"]:
            raise InputError(path, "system and category must not be empty", number)
        rows.append(MqmRow(number, row["system"], row["doc"],
                           _integer(row["doc_id"], "doc_id", path, number),
                           _integer(row["seg_id"], "seg_id", path, number),
                           row.get("rater", ""), row["source"], row["target"], row["category"],
                           row.get("severity", "")))
    if not rows:
        raise InputError(path, "no annotation rows")
    return rows


def category_rates(rows: Sequence[MqmRow], categories: Sequence[str] = RELEVANT_CATEGORIES
                   ) -> dict[str, dict]:
    """Per system: annotated segments, and per category its rows, rate and segment share."""
    segments: dict[str, set[int]] = defaultdict(set)
    counts: dict[str, Counter] = defaultdict(Counter)
    flagged: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    severities: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for row in rows:
        segments[row.system].add(row.seg_id)
        if row.category in categories:
            counts[row.system][row.category] += 1
            flagged[row.system][row.category].add(row.seg_id)
            severities[row.system][row.category][row.severity] += 1
    result = {}
    for system in sorted(segments):
        n = len(segments[system])
        result[system] = {"segments": n, "categories": {
            category: {"errors": counts[system][category],
                       "rate": counts[system][category] / n,
                       "segments_with_error": len(flagged[system][category]),
                       "segment_share": len(flagged[system][category]) / n,
                       "severity": dict(sorted(severities[system][category].items()))}
            for category in categories}}
    return result


def p_method(n: int) -> str:
    """How :func:`rank_correlation` computes p for ``n`` systems, in words for a table note."""
    if n <= EXACT_UP_TO:
        return (f"exact permutation p over the {math.factorial(n)} orderings of the {n} "
                "systems")
    return (f"Monte Carlo permutation p from {MONTE_CARLO_RESAMPLES} random orderings of the "
            f"{n} systems (seed {PERMUTATION_SEED})")


def rank_correlation(metric: Mapping[str, float | None], rate: Mapping[str, float],
                     weak_below: int = WEAK_BELOW) -> dict:
    """Spearman's ρ across the systems that have both a metric value and a rate, and its
    two-sided permutation p (see :func:`p_method`: ``p_method`` of the result says whether it
    is exact).

    ρ and p are ``None`` when fewer than 3 systems match or either side is constant (no ranking
    to correlate), and the reason is given.
    """
    from scipy.stats import spearmanr

    systems = sorted(s for s in rate if s in metric and metric[s] is not None
                     and not math.isnan(metric[s]))
    xs = [float(metric[s]) for s in systems]
    ys = [float(rate[s]) for s in systems]
    record = {"n": len(systems), "systems": systems, "rho": None, "p": None,
              "p_method": None, "weak": len(systems) < weak_below, "reason": None}
    if len(systems) < 3:
        record["reason"] = "fewer than 3 systems"
    elif len(set(xs)) == 1 or len(set(ys)) == 1:
        record["reason"] = "constant " + ("metric" if len(set(xs)) == 1 else "rate")
    else:
        exact = len(systems) <= EXACT_UP_TO
        p = resample.rank_permutation_p(xs, ys, None if exact else MONTE_CARLO_RESAMPLES,
                                        PERMUTATION_SEED)
        record["rho"] = float(spearmanr(xs, ys).statistic)
        record["p"] = p
        record["p_method"] = "exact permutation" if exact else "monte carlo permutation"
    return record


def correlations(rates: Mapping[str, dict], metrics: Mapping[str, Mapping[str, float | None]],
                 categories: Sequence[str] = RELEVANT_CATEGORIES,
                 weak_below: int = WEAK_BELOW) -> list[dict]:
    """ρ of every metric column against every category rate; rare categories are flagged."""
    found = []
    for column, values in metrics.items():
        for category in categories:
            rate = {s: r["categories"][category]["rate"] for s, r in rates.items()}
            errors = sum(r["categories"][category]["errors"] for s, r in rates.items()
                         if s in values)
            result = rank_correlation(values, rate, weak_below)
            # Few annotated errors make a ranking of systems by rate mostly ties and noise.
            found.append({"metric": column, "category": category, "errors": errors,
                          "few_errors": errors < weak_below, **result})
    # One table shows them all: their p-values are one family, Holm-adjusted together.
    for c, adjusted in zip(found, holm([c["p"] for c in found]), strict=True):
        c["p_holm"] = adjusted
    return found


def mqm_record(path: str | os.PathLike[str], categories: Sequence[str] = RELEVANT_CATEGORIES,
               metrics: Mapping[str, Mapping[str, float | None]] | None = None,
               weak_below: int = WEAK_BELOW, reference: str | None = None) -> dict:
    """Rates of an annotation file and, given metric values per system, their correlations;
    ``reference`` names the annotated output the metrics took as their reference."""
    record = mqm_summary(read_mqm(path), str(path), categories, metrics, weak_below)
    if reference is not None and reference not in record["systems"]:
        raise InputError(path, f"the reference {reference!r} is not an annotated system")
    record["reference"] = reference
    return record


def mqm_summary(rows: Sequence[MqmRow], origin: str,
                categories: Sequence[str] = RELEVANT_CATEGORIES,
                metrics: Mapping[str, Mapping[str, float | None]] | None = None,
                weak_below: int = WEAK_BELOW) -> dict:
    """The record of :func:`mqm_record` from rows already read."""
    rates = category_rates(rows, categories)
    totals = Counter(row.category for row in rows)
    found = correlations(rates, metrics or {}, categories, weak_below)
    return {"annotations": origin, "categories": list(categories),
            "rows": len(rows), "category_totals": {c: totals[c] for c in categories},
            "no_error_rows": totals[NO_ERROR], "systems": rates,
            "weak_below": weak_below, "metrics": {k: dict(v) for k, v in (metrics or {}).items()},
            "correlations": found, "p_method": _p_note(found)}


def _p_note(found: Sequence[Mapping]) -> str | None:
    """The p of a record's correlations in words, for its table note; None if none was tested.
    """
    sizes = sorted({c["n"] for c in found if c["p"] is not None})
    if not sizes:
        return None
    return ("two-sided permutation p of Spearman's ρ (share of orderings with |ρ| at least the "
            "observed), over the annotated systems only: "
            + "; ".join(f"n = {n}: {p_method(n)}" for n in sizes) + ".")


def _metric_value(value: object) -> float | None:
    if isinstance(value, Mapping):
        if "score" not in value:
            raise ValueError("an object without a 'score' is not a number")
        value = value["score"]
    if value is None:
        return None
    # bool is an int in Python, but a flag is no metric
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def metric_from_record(record: Mapping, column: str) -> float | None:
    """A metric value of a score record: ``bleu``/``chrf`` (their score) or ``crr``/``drr``/
    ``redundancy`` of the record's main subset, else a top-level or dotted key (``a.b``).
    None when the record has no such key or its value is null; ValueError when the value is
    not a number."""
    subsets = record.get("subsets")
    if isinstance(subsets, Mapping) and record.get("main") in subsets:
        main = subsets[record["main"]]
        if column in main:
            return _metric_value(main[column])
    value: object = record
    for part in column.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return _metric_value(value)
