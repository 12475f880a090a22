"""Scores of one system output on one test set, one JSON record per (test set, system).

**BLEU, chrF, TER** (registered metrics, :mod:`phenomt.core.metrics`; BLEU and chrF unless
``metrics`` says otherwise) are sacreBLEU's, with their signatures, and every interval and test
comes from the one resampling engine (:class:`phenomt.core.metrics.resample.Resampler`), which
resamples the same per-sentence statistics sacreBLEU's own tests would. The 95% interval is a
percentile interval of a sentence bootstrap, clipped to the metric's range; the record says
whether it contains the score and, if not, why (:mod:`phenomt.systems.intervals`).
sacreBLEU's form, the resamples' mean ± half the width of their 95% range, is an option
(``interval="sacrebleu"``) for comparison with published sacreBLEU intervals: it is centred on
the resamples' mean, not on the score, and can leave the metric's range (BLEU 0.62
[-4.68, 30.59] with one 1 MB hypothesis line), so it is clipped and flagged the same way. The
paired test against a baseline system is a paired bootstrap on the same resamples (``bs``,
Koehn 2004) or paired approximate randomization (``ar``, Riezler & Maxwell 2005, its interval
from ``ci_samples`` resamples). The bootstrap p is two-sided, the share of centred resampled
differences at least as far from 0 as the observed one (+1 in numerator and denominator);
sacreBLEU's ``--paired-bs`` centres the absolute differences instead and counts those above
the observed one, which gives smaller p on the same resamples. A test set (or subset) of
fewer than ten units gets no bootstrap test, as a challenge set that small gets none. A
system whose hypotheses equal the baseline's line for line gets p = 1. The main subset keeps
every metric's per-sentence statistics, from which the systems table tests every pair of
systems on the same resamples and ranks them into significance clusters.

**CRR and DRR** (:mod:`phenomt.core.metrics.redundancy`) at word level: Moses tokenization
(sacremoses, as in :func:`phenomt.core.text.tokenize`), jieba for Chinese; identical tokens are
redundant, synonyms only when embeddings are given; stopwords are the k most frequent tokens of
the *whole* reference of the test set (k = 10, Chinese 3), so every system of a test set and
every subset of it share them; the exemption quotas M~ come from each line's source and
reference. Case is kept. The settings, including the stopwords themselves, are stated in every
record. Intervals are percentile intervals of a sentence bootstrap of the pooled ratios
(:mod:`phenomt.core.metrics.resample`, the resampling every registered metric uses), clipped
to 0-1 and checked to contain the ratio (:mod:`phenomt.systems.intervals`); two
systems are compared with a paired sentence bootstrap (same resampled sentences for both; p
from the centred bootstrap distribution of the difference) and
a paired approximate randomization (:func:`phenomt.core.metrics.resample.paired_randomization`,
swapping the two systems' sentences).

Empty hypotheses are scored as empty (see :mod:`phenomt.systems.outputs`); their count is in
the record. A mask (newstest2021 Zh→En's official lines) makes its subset the main result and
all lines a secondary one.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from phenomt.core.io import InputError, write_lines
from phenomt.core.metrics import base as metrics
from phenomt.core.metrics import resample
from phenomt.core.metrics.bleu import default_tokenizer
from phenomt.core.metrics.redundancy import (
    STATISTICS_COLUMNS,
    SentenceRedundancy,
    measure_score,
    pool,
    sentence_statistics,
)
from phenomt.core.text import word_tokens
from phenomt.systems import intervals
from phenomt.systems.outputs import (
    SystemOutput,
    apply_mask,
    check_line_count,
    read_mask,
    read_output,
    read_text,
)

TESTS = {"bs": "paired bootstrap resampling", "ar": "paired approximate randomization"}
DEFAULT_SEED = 12345
DEFAULT_SAMPLES = {"bs": 1000, "ar": 10000}
CI_SAMPLES = 1000
ALPHA = 0.05
CONFIDENCE = 0.95
ALL_LINES = "all"
#: How each interval method is described in records and table notes.
INTERVAL_METHODS = {
    "percentile": "percentile bootstrap over sentences (phenomt.core.metrics.resample), "
                  "clipped to the score's range",
    "sacrebleu": "sacreBLEU's form: the resamples' mean +- half the width of their 95% range "
                 "(phenomt.core.metrics.resample), clipped to the score's range"}


# --------------------------------------------------------------------------- BLEU and chrF

def _check_seed(seed: int) -> None:
    if seed < 1:
        raise ValueError(f"seed must be a positive integer, got {seed}")


#: The metrics a systems record has unless told otherwise.
METRIC_KEYS = ("bleu", "chrf")


def metric_keys() -> list[str]:
    """Every registered metric: each can be named in ``metrics`` (those that read the source,
    CRR and DRR, need the test set's source)."""
    return list(metrics.names())


def registered_metrics(tokenize: str = "13a", keys: Sequence[str] = METRIC_KEYS,
                       langs: tuple[str, str] = ("de", "en"),
                       settings: Mapping[str, Mapping[str, Any]] | None = None
                       ) -> dict[str, metrics.Metric]:
    """Our key -> the registered metric of that name, made fresh, in the order given:
    ``tokenize`` goes to BLEU and RIBES, the test set's languages (source, target) to the
    metrics that read the source; ``settings`` (metric -> setting -> value, from
    ``--setting``) override these and the metrics' defaults."""
    known = metric_keys()
    unknown = [key for key in keys if key not in known]
    if unknown or not keys or len(set(keys)) != len(keys):
        raise ValueError(f"metrics are distinct names among {', '.join(known)}; "
                         f"got {list(keys)}")
    unused = sorted(set(settings or {}) - set(keys))
    if unused:
        raise ValueError(f"settings given for {', '.join(unused)}, which are not scored")
    found = {key: make_metric(key, tokenize, langs, settings) for key in keys}
    for metric in found.values():
        metric.ready()  # a missing model is named before any file is read
    return found


def make_metric(key: str, tokenize: str = "13a", langs: tuple[str, str] = ("de", "en"),
                settings: Mapping[str, Mapping[str, Any]] | None = None) -> metrics.Metric:
    """The registered metric ``key`` as :func:`registered_metrics` makes it, without loading
    a model: ``tokenize`` for BLEU and RIBES, the languages for CRR/DRR, then ``settings``."""
    made = {"bleu": {"tokenize": tokenize}, "ribes": {"tokenize": tokenize},
            "crr": {"source_lang": langs[0], "target_lang": langs[1]},
            "drr": {"source_lang": langs[0], "target_lang": langs[1]}}
    return metrics.get(key, **{**made.get(key, {}), **(settings or {}).get(key, {})})


def recorded_metric(record: Mapping[str, Any], key: str) -> metrics.Metric:
    """The metric ``key`` exactly as a ``systems score`` record was scored with it (its
    tokenizer, languages and ``--setting`` values), for whoever scores its kept statistics
    again (the rankings): a metric made with defaults would score chrF++ statistics as plain
    chrF. A record whose cell's signature this does not reproduce is refused."""
    metric = make_metric(key, record.get("tokenize") or "13a",
                         (record.get("source_lang") or "und", record["target_lang"]),
                         record.get("settings"))
    entry = record["subsets"][record["main"]].get(key) or {}
    if entry.get("signature") not in (None, metric.signature()):
        raise InputError(record.get("path", record["system"]),
                         f"its {key} signature {entry['signature']!r} is not that of the "
                         f"settings it records ({metric.signature()!r}): score it again with "
                         "this version of phenomt systems score")
    return metric


def reference_steps(ref: str | os.PathLike[str], target_lang: str,
                    keys: Sequence[str] = METRIC_KEYS, lines: int = 250
                    ) -> Callable[[], Callable | None]:
    """The job server's warm-up steps that extract sacreBLEU's information of the
    reference ``ref`` (:meth:`SacrebleuMetric.reference_info`) for the sacreBLEU metrics
    among ``keys`` as the score jobs make them (default settings, the target language's
    tokenizer), ``lines`` lines a step: the first step, which returns the next, and so on.
    The score jobs forked afterwards find it done; one forked earlier extracts what is
    missing itself. A reference that cannot be read or a metric that cannot be made is left
    to the jobs to report."""
    def start() -> Callable | None:
        known = metrics.names()  # imports the metric modules: their classes register
        chosen = [key for key in keys if key in known
                  and issubclass(metrics.METRICS[key], metrics.SacrebleuMetric)]
        try:
            text = read_text(ref)
            made = registered_metrics(default_tokenizer(target_lang), chosen,
                                      ("und", target_lang))
        except (OSError, ValueError):  # an InputError too
            return None
        return lambda: step(list(made.values()), text, 0)

    def step(found: list, text: list[str], done: int) -> Callable | None:
        if not found:
            return None
        found[0].reference_info(text, limit=done + lines)
        if done + lines >= len(text):
            return lambda: step(found[1:], text, 0)
        return lambda: step(found, text, done + lines)

    return start


def test_signature(metric_signature: str, test: str, samples: int, ci_samples: int,
                   seed: int, method: str = "percentile") -> str:
    """The metric's signature with the test's settings: the test (``bs`` resamples or ``ar``
    trials), the interval's resamples and method, and the seed."""
    parts = [metric_signature, f"test:{test}", f"{test}:{samples}"]
    if test == "ar":
        parts.append(f"bs:{ci_samples}")
    return "|".join([*parts, f"ci:{method}", f"seed:{seed}"])


def metric_interval(metric: metrics.Metric, key: str, hypotheses: Sequence[str],
                    references: Sequence[str], *, samples: int, seed: int,
                    confidence: float = CONFIDENCE) -> dict:
    """The score of ``metric`` (registry key ``key``) and its percentile interval over
    ``samples`` sentence resamples, clipped to the metric's range, with whether it contains
    the score (:func:`phenomt.systems.intervals.checked_interval`)."""
    engine = resample.Resampler(len(references), samples, seed, confidence=confidence)
    return _cell(engine, metric, *engine.resampled(metric.score,
                                                   metric.statistics(hypotheses, references)))


def _cell(engine: resample.Resampler, metric: metrics.Metric, score: float,
          values: np.ndarray) -> dict:
    low, high = engine.interval(values)
    return {"score": score,
            **intervals.checked_interval(score, low, high, bounds=metric.bounds,
                                         samples=engine.samples,
                                         confidence=engine.confidence,
                                         method=engine.method)}


def recorded_statistics(entry: Mapping[str, Any] | None, metric: Any, lines: int
                        ) -> np.ndarray | None:
    """The sentence statistics a score record keeps in a metric's cell (``entry``), if they
    were computed as ``metric`` computes them (same signature) over ``lines`` sentences; else
    None, and the caller computes them."""
    if not entry or entry.get("signature") != metric.signature() or "statistics" not in entry:
        return None
    rows = np.asarray(entry["statistics"]["rows"], dtype=np.float64)
    return rows if rows.shape[0] == lines else None


def significance(hypotheses: Sequence[str], references: Sequence[str],
                 baseline: Sequence[str] | None = None, *, tokenize: str = "13a",
                 test: str = "bs", samples: int | None = None, ci_samples: int = CI_SAMPLES,
                 seed: int = DEFAULT_SEED, alpha: float = ALPHA,
                 metrics: Sequence[str] = METRIC_KEYS, interval: str = "percentile",
                 statistics: bool = False, sources: Sequence[str] | None = None,
                 langs: tuple[str, str] = ("de", "en"),
                 settings: Mapping[str, Mapping[str, Any]] | None = None,
                 baseline_cells: Mapping[str, Mapping[str, Any]] | None = None
                 ) -> dict[str, dict]:
    """The ``metrics`` (registered, by name) of a system with a 95% interval and, given a
    baseline's hypotheses, the paired test against it (the baseline's statistics taken from
    ``baseline_cells``, its own record's metric cells, where :func:`recorded_statistics`
    finds them), all from the one resampling engine
    (:class:`phenomt.core.metrics.resample.Resampler`): the interval from ``samples``
    resamples (``ci_samples`` for ``ar``) by ``interval`` (percentile, or sacreBLEU's mean
    +- half-width), clipped to the metric's range; the test a paired bootstrap on the same
    resamples (``bs``) or paired approximate randomization with ``samples`` trials (``ar``).
    ``statistics`` keeps each metric's per-sentence statistics (tables pair systems later);
    ``sources`` and ``langs`` (source, target) are for the metrics that read the source;
    ``settings`` for :func:`registered_metrics`. A metric whose pairs span sentences (LTCR)
    draws and swaps whole documents (:meth:`Metric.clusters`): its own resamples, with the
    same seed."""
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; expected one of {', '.join(TESTS)}")
    _check_seed(seed)
    samples = samples or DEFAULT_SAMPLES[test]
    resamples = samples if test == "bs" else ci_samples
    if len(hypotheses) != len(references) or (baseline is not None
                                              and len(baseline) != len(references)):
        raise ValueError("hypotheses, baseline and references differ in length")
    engine = resample.Resampler(len(references), resamples, seed, method=interval)
    found = {}
    identical = baseline is not None and list(hypotheses) == list(baseline)
    for key, metric in registered_metrics(tokenize, metrics, langs, settings).items():
        if metric.needs_source and sources is None:
            raise ValueError(f"{key} reads the source sentences: give the test set's source")
        stats = metric.statistics(hypotheses, references, sources)
        clusters = metric.clusters(len(references))
        drawn = engine if clusters is None else metric.engine(len(references), resamples,
                                                              seed, method=interval)
        score, values = drawn.resampled(metric.score, stats)
        entry = {**_cell(drawn, metric, score, values), "signature": metric.signature(),
                 "test_signature": test_signature(metric.signature(), test, samples,
                                                  resamples, seed, interval),
                 "unit": "sentence" if clusters is None else "document",
                 "baseline_score": None, "difference": None, "p_value": None,
                 "significant": None}
        if statistics:
            entry["statistics"] = {"columns": list(metric.columns), "rows": stats.tolist()}
            if clusters is not None:
                entry["statistics"]["clusters"] = clusters
        if baseline is not None:
            base = recorded_statistics((baseline_cells or {}).get(key), metric,
                                       len(references))
            if base is None:
                base = metric.statistics(baseline, references, sources)
            base_score, base_values = drawn.resampled(metric.score, base)
            entry.update(baseline_score=base_score, difference=score - base_score)
            units = len(references) if clusters is None else len(set(clusters))
            if test == "bs" and units < resample.MIN_INTERVAL_SENTENCES:
                # as for a slice: resampling a handful of units understates the spread (one
                # sentence: every resample alike, p = 1/(B+1)); a permutation test stays valid
                entry["untested"] = (f"{units} {entry['unit']}(s), fewer than "
                                     f"{resample.MIN_INTERVAL_SENTENCES}: no bootstrap test")
            else:
                if test == "bs":
                    p = drawn.compare(score, values, base_score, base_values).p
                else:
                    p = resample.paired_randomization(resample.cluster_sums(stats, clusters),
                                                      resample.cluster_sums(base, clusters),
                                                      metric.score, trials=samples, seed=seed)
                p = 1.0 if identical else float(p)
                entry.update(p_value=p, significant=p < alpha)
        found[key] = entry
    return found


@dataclass(frozen=True)
class Subset:
    """A named selection of test-set lines (``mask`` None = all lines)."""

    name: str
    mask: list[bool] | None

    def select(self, lines: Sequence[str]) -> list[str]:
        return list(lines) if self.mask is None else apply_mask(lines, self.mask)


def subsets_of(reference: str | os.PathLike[str], lines: int,
               mask: str | os.PathLike[str] | None, mask_name: str) -> list[Subset]:
    """The main subset first: the masked lines when a mask is given, then all lines."""
    if mask is None:
        return [Subset(ALL_LINES, None)]
    if mask_name == ALL_LINES:
        raise ValueError(f"the masked subset cannot be called {ALL_LINES!r}")
    return [Subset(mask_name, read_mask(mask, lines, reference)), Subset(ALL_LINES, None)]


def _empty_in(output: SystemOutput, subset: Subset) -> int:
    if subset.mask is None:
        return len(output.empty)
    return sum(1 for n in output.empty if subset.mask[n - 1])


def _check_baseline_record(record: Any, baseline: str, hyp: str | os.PathLike[str],
                           ref: str | os.PathLike[str], lines: int) -> None:
    """A ValueError unless ``record`` is ``baseline``'s score record of ``hyp`` against
    ``ref`` over ``lines`` lines."""
    if not (isinstance(record, dict) and isinstance(record.get("subsets"), dict)):
        raise ValueError("the baseline record is no `systems score` record")
    found = tuple(record.get(k) for k in ("system", "hypothesis", "reference", "lines"))
    if found != (baseline, str(hyp), str(ref), lines):
        raise ValueError(f"the baseline record is not {baseline}'s record of {hyp} against "
                         f"{ref} ({lines} lines) but {found[0]}'s of {found[1]} against "
                         f"{found[2]} ({found[3]} lines)")


def score_record(*, testset: str, system: str, hyp: str | os.PathLike[str],
                 ref: str | os.PathLike[str], target_lang: str,
                 baseline: str | None = None, baseline_hyp: str | os.PathLike[str] | None = None,
                 mask: str | os.PathLike[str] | None = None, mask_name: str = "official",
                 tokenize: str | None = None, test: str = "bs", samples: int | None = None,
                 seed: int = DEFAULT_SEED, kind: str | None = None,
                 metrics: Sequence[str] = METRIC_KEYS, interval: str = "percentile",
                 src: str | os.PathLike[str] | None = None, source_lang: str | None = None,
                 settings: Mapping[str, Mapping[str, Any]] | None = None,
                 baseline_record: Mapping[str, Any] | None = None) -> dict:
    """The metrics record of one system on one test set: identity and line counts, the
    test's settings, and per subset (main first) each of ``metrics`` with interval, p and
    signatures; the main subset keeps each metric's per-sentence statistics, from which the
    table tests every pair of systems. ``settings``: metric settings (``--setting``);
    ``baseline_record``: the baseline's own record of this test set, whose kept statistics
    the paired tests use instead of scoring the baseline again."""
    references = read_text(ref)
    output = read_output(hyp, ref)
    sources = None
    if src is not None:
        sources = read_text(src)
        check_line_count(src, len(sources), len(references), ref)
    tokenize = tokenize or default_tokenizer(target_lang)
    is_baseline = baseline is not None and baseline == system
    base_lines = None
    if baseline is not None and not is_baseline:
        if baseline_hyp is None:
            raise ValueError(f"baseline {baseline!r} named without its hypothesis file")
        base_lines = read_output(baseline_hyp, ref, warn=False).lines
        if baseline_record is not None:
            _check_baseline_record(baseline_record, baseline, baseline_hyp, ref,
                                   len(references))
    samples = samples or DEFAULT_SAMPLES[test]
    if mask is not None and "ltcr" in metrics:
        # LTCR's pairs span a document: a mask's sentences are no test set of their own
        raise ValueError("ltcr scores whole documents: it cannot be combined with a mask")
    subsets = subsets_of(ref, len(references), mask, mask_name)
    scored = {}
    for subset in subsets:
        result = significance(subset.select(output.lines), subset.select(references),
                              None if base_lines is None else subset.select(base_lines),
                              tokenize=tokenize, test=test, samples=samples, seed=seed,
                              metrics=metrics, interval=interval,
                              statistics=subset is subsets[0],
                              sources=None if sources is None else subset.select(sources),
                              langs=(source_lang or "und", target_lang),
                              settings=settings,
                              baseline_cells=None if baseline_record is None else
                              baseline_record["subsets"].get(subset.name))
        scored[subset.name] = {"sentences": len(subset.select(references)),
                               "empty_lines": _empty_in(output, subset), **result}
    return {
        "testset": testset, "system": system, "kind": kind, "hypothesis": str(hyp),
        "reference": str(ref), "target_lang": target_lang, "tokenize": tokenize,
        **output.summary(), "baseline": baseline, "is_baseline": is_baseline,
        "mask": None if mask is None else str(mask), "source_lang": source_lang,
        "settings": {key: dict(value) for key, value in sorted((settings or {}).items())},
        "test": {"type": test, "name": TESTS[test], "samples": samples,
                 "ci_samples": samples if test == "bs" else CI_SAMPLES, "seed": seed,
                 "alpha": ALPHA, "confidence": CONFIDENCE,
                 "source": "phenomt.core.metrics.resample",
                 "interval": INTERVAL_METHODS[interval], "interval_method": interval},
        "metrics": list(metrics), "main": subsets[0].name, "subsets": scored,
    }


# --------------------------------------------------------------------------- CRR and DRR

def tokenizer_name(lang: str) -> str:
    return "jieba" if lang in ("zh", "ja") else ("sacremoses (Moses punctuation normalisation "
                                                 "and tokenization, aggressive dash splits)")


@dataclass(frozen=True)
class RedundancySetup:
    """What every system of a test set shares: the registered CRR/DRR metric (its synonyms and
    stopwords), the stopwords it takes from this test set, and the settings' record."""

    metric: Any
    stopwords: frozenset[str]
    settings: dict

    def results(self, hypotheses: Sequence[Sequence[str]], sources: Sequence[Sequence[str]],
                references: Sequence[Sequence[str]]) -> list[SentenceRedundancy]:
        return self.metric.results(hypotheses, sources, references)


def redundancy_setup(reference_tokens: Sequence[Sequence[str]], target_lang: str,
                     source_lang: str, *, stopword_count: int | None = None,
                     embeddings: str | None = None, embeddings_dict: str | None = None,
                     threshold: float | None = None) -> RedundancySetup:
    """The registered ``crr`` metric's settings for a test set: word tokens (sacremoses, jieba
    for Chinese), stopwords from the whole reference, synonyms only from given embeddings."""
    metric = metrics.get("crr", target_lang=target_lang, source_lang=source_lang,
                         tokenize="moses", stopword_count=stopword_count,
                         embeddings=embeddings, embeddings_dict=embeddings_dict,
                         threshold=threshold)
    stopwords = metric.settings.stopword_set(reference_tokens, target_lang)
    counts = Counter(token for sentence in reference_tokens for token in sentence)
    settings = {
        "level": "word", "target_tokenizer": tokenizer_name(target_lang),
        "source_tokenizer": tokenizer_name(source_lang), **metric.description(),
        "stopwords": sorted(stopwords, key=lambda token: (-counts[token], token)),
    }
    return RedundancySetup(metric, stopwords, settings)


MEASURES = ("crr", "drr", "redundancy")


def _statistics(results: Sequence[SentenceRedundancy]) -> np.ndarray:
    return np.asarray(sentence_statistics(results), dtype=np.float64).reshape(-1, 3)


def bootstrap_ratios(results: Sequence[SentenceRedundancy], *, samples: int = 1000,
                     seed: int = DEFAULT_SEED, confidence: float = CONFIDENCE) -> dict:
    """Pooled CRR, DRR and CRR + DRR with percentile intervals of a sentence bootstrap
    (:func:`phenomt.core.metrics.resample.bootstrap`, the resampling of every metric), clipped
    to 0-1, each with whether it contains the ratio (``<measure>_ci_contains_score``) and,
    if not, why (``<measure>_ci_reason``)."""
    pooled = pool(results).as_dict()
    found: dict = {key: pooled[key] for key in ("continuous", "discontinuous", "denominator",
                                                 "tokens", "scored_sentences",
                                                 "exempt_stopword", "exempt_multiple")}
    stats = _statistics(results)
    found_intervals = {}
    if len(stats) and stats[:, 2].sum() > 0:
        found_intervals = resample.bootstrap_scores(
            stats, {m: measure_score(m) for m in MEASURES}, samples=samples, seed=seed,
            confidence=confidence)
    for measure in MEASURES:
        interval = found_intervals.get(measure)
        found[measure] = None if interval is None else interval.value
        checked = intervals.checked_interval(
            found[measure], *((interval.low, interval.high) if interval else (None, None)),
            bounds=intervals.SCORE_RANGES[measure], samples=samples, confidence=confidence)
        found[f"{measure}_ci"] = (None if checked["ci_low"] is None
                                  else [checked["ci_low"], checked["ci_high"]])
        found[f"{measure}_ci_contains_score"] = checked["ci_contains_score"]
        found[f"{measure}_ci_reason"] = checked["ci_reason"]
    return found


def paired_redundancy_test(a: Sequence[SentenceRedundancy], b: Sequence[SentenceRedundancy],
                           *, samples: int = 1000, trials: int = 10000,
                           seed: int = DEFAULT_SEED, confidence: float = CONFIDENCE,
                           alpha: float = ALPHA) -> dict:
    """System a against system b on the same sentences, per measure: the difference a - b of
    the pooled ratios, its paired-bootstrap interval (clipped to -1..1, with whether it
    contains the difference) and p (:func:`phenomt.core.metrics.resample.paired_bootstrap`),
    and the randomization p."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} against {len(b)} sentences")
    return paired_statistics_test(_statistics(a), _statistics(b), samples=samples,
                                  trials=trials, seed=seed, confidence=confidence, alpha=alpha)


def paired_statistics_test(stats_a: np.ndarray, stats_b: np.ndarray, *, samples: int = 1000,
                           trials: int = 10000, seed: int = DEFAULT_SEED,
                           confidence: float = CONFIDENCE, alpha: float = ALPHA) -> dict:
    """:func:`paired_redundancy_test` on the sentences' statistics (rows of continuous,
    discontinuous and denominator counts, as CRR/DRR records keep them)."""
    if stats_a[:, 2].sum() == 0 or stats_b[:, 2].sum() == 0:
        return dict.fromkeys(MEASURES)
    # one draw of resamples and of swaps for the three measures (each as its own call's)
    measures = {measure: measure_score(measure) for measure in MEASURES}
    weights = resample.resample_weights(len(stats_a), samples, seed)
    randomized = resample.paired_randomization_scores(stats_a, stats_b, measures,
                                                      trials=trials, seed=seed)
    found: dict = {}
    for measure, score in measures.items():
        compared = resample.paired_test(stats_a, stats_b, score, weights,
                                        confidence=confidence)
        checked = intervals.checked_interval(
            compared.difference, compared.low, compared.high,
            bounds=intervals.DIFFERENCE_RANGE, samples=samples, confidence=confidence)
        found[measure] = {**compared.as_dict(),
                          "difference_ci": [checked["ci_low"], checked["ci_high"]],
                          "difference_ci_contains_score": checked["ci_contains_score"],
                          "difference_ci_reason": checked["ci_reason"],
                          "p_randomization": randomized[measure],
                          "significant": compared.significant(alpha)}
    return found


def write_tokens(lines: Sequence[str], lang: str, output: str | os.PathLike[str]) -> None:
    """The word tokens of every line (:func:`word_tokens`), one line each, space-joined: what
    every system's CRR/DRR job of a test set would otherwise tokenize again."""
    write_lines(output, [" ".join(tokens) for tokens in word_tokens(lines, lang)])


def read_tokens(path: str | os.PathLike[str], expected: int,
                against: str | os.PathLike[str]) -> list[list[str]]:
    """Tokens written by :func:`write_tokens`, checked to be one line per test-set line."""
    lines = read_text(path)
    check_line_count(path, len(lines), expected, against)
    return [line.split() for line in lines]


def _tokenized_inputs(hyp: str | os.PathLike[str], src: str | os.PathLike[str],
                      ref: str | os.PathLike[str], source_lang: str, target_lang: str,
                      *, warn: bool = True, tokens: Sequence[str] | None = None,
                      outputs: bool = True) -> tuple[SystemOutput, list, list, list]:
    """The output and the tokens of hypothesis (none without ``outputs``), source and
    reference; ``tokens``: the test set's source and reference tokens already written by
    :func:`write_tokens`."""
    references = read_text(ref)
    sources = read_text(src)
    check_line_count(src, len(sources), len(references), ref)
    output = read_output(hyp, ref, warn=warn)
    if tokens is None:
        src_tokens = word_tokens(sources, source_lang)
        ref_tokens = word_tokens(references, target_lang)
    else:
        src_tokens = read_tokens(tokens[0], len(sources), src)
        ref_tokens = read_tokens(tokens[1], len(references), ref)
    return (output, word_tokens(output.lines, target_lang) if outputs else [], src_tokens,
            ref_tokens)


def _select(items: Sequence, subset: Subset) -> list:
    return list(items) if subset.mask is None else [x for x, keep in zip(
        items, subset.mask, strict=True) if keep]


def redundancy_record(*, testset: str, system: str, hyp: str | os.PathLike[str],
                      src: str | os.PathLike[str], ref: str | os.PathLike[str],
                      source_lang: str, target_lang: str,
                      mask: str | os.PathLike[str] | None = None, mask_name: str = "official",
                      stopword_count: int | None = None, embeddings: str | None = None,
                      embeddings_dict: str | None = None, threshold: float | None = None,
                      samples: int = 1000, seed: int = DEFAULT_SEED,
                      kind: str | None = None, tokens: Sequence[str] | None = None,
                      tokens_out: str | os.PathLike[str] | None = None) -> dict:
    """The CRR/DRR record of one system on one test set (``tokens``: see
    :func:`_tokenized_inputs`); ``tokens_out``: where to write the output's word tokens as
    :func:`write_tokens` does (the analyses read them)."""
    output, hyps, srcs, refs = _tokenized_inputs(hyp, src, ref, source_lang, target_lang,
                                                 tokens=tokens)
    if tokens_out is not None:
        write_lines(tokens_out, [" ".join(words) for words in hyps])
    setup = redundancy_setup(refs, target_lang, source_lang, stopword_count=stopword_count,
                             embeddings=embeddings, embeddings_dict=embeddings_dict,
                             threshold=threshold)
    results = setup.results(hyps, srcs, refs)
    subsets = subsets_of(ref, len(refs), mask, mask_name)
    scored = {subset.name: {"sentences": len(_select(results, subset)),
                            "empty_lines": _empty_in(output, subset),
                            **bootstrap_ratios(_select(results, subset), samples=samples,
                                               seed=seed)}
              for subset in subsets}
    return {"testset": testset, "system": system, "kind": kind, "hypothesis": str(hyp),
            "source": str(src), "reference": str(ref), "source_lang": source_lang,
            "target_lang": target_lang, **output.summary(),
            "mask": None if mask is None else str(mask),
            "settings": setup.settings,
            "bootstrap": {"samples": samples, "seed": seed, "confidence": CONFIDENCE,
                          "method": INTERVAL_METHODS["percentile"]},
            "main": subsets[0].name, "subsets": scored,
            "statistics": {"columns": list(STATISTICS_COLUMNS),
                           "rows": sentence_statistics(results)}}


def _recorded_redundancy(record: Mapping[str, Any], system: str, hyp: str | os.PathLike[str],
                         texts: tuple[str, str], lines: int, settings: Mapping[str, Any]
                         ) -> np.ndarray:
    """The sentence statistics a CRR/DRR record keeps, checked to be ``system``'s record of
    ``hyp`` against ``texts`` (source, reference) over ``lines`` lines with the same settings
    as this comparison's."""
    if not isinstance(record, dict) or "statistics" not in record:
        raise ValueError(f"{system}: the record given is no CRR/DRR record with statistics")
    found = tuple(record.get(k) for k in ("system", "hypothesis", "source", "reference",
                                           "lines"))
    if found != (system, str(hyp), *texts, lines):
        raise ValueError(f"{system}: the record given is {found[0]}'s of {found[1]} against "
                         f"{found[2]} and {found[3]} ({found[4]} lines), not {system}'s of "
                         f"{hyp} against {texts[0]} and {texts[1]} ({lines} lines)")
    if record.get("settings") != settings:
        raise ValueError(f"{system}: the record given was counted with other settings")
    rows = np.asarray(record["statistics"]["rows"], dtype=np.float64).reshape(-1, 3)
    if rows.shape[0] != lines:
        raise ValueError(f"{system}: the record given has {rows.shape[0]} rows of "
                         f"statistics for {lines} lines")
    return rows


def redundancy_comparison(*, testset: str, system_a: str, hyp_a: str | os.PathLike[str],
                          system_b: str, hyp_b: str | os.PathLike[str],
                          src: str | os.PathLike[str], ref: str | os.PathLike[str],
                          source_lang: str, target_lang: str,
                          mask: str | os.PathLike[str] | None = None,
                          mask_name: str = "official", stopword_count: int | None = None,
                          embeddings: str | None = None, embeddings_dict: str | None = None,
                          threshold: float | None = None, samples: int = 1000,
                          trials: int = 10000, seed: int = DEFAULT_SEED,
                          tokens: Sequence[str] | None = None,
                          records: tuple[Mapping[str, Any], Mapping[str, Any]] | None = None
                          ) -> dict:
    """Paired test of CRR, DRR and CRR + DRR between two systems of a test set; with
    ``records``, the two systems' own CRR/DRR records, their kept sentence statistics (checked
    to be of these files, counted with these settings) instead of counting again."""
    if system_a == system_b:
        raise ValueError("compare two different systems")
    # with records, no output is tokenized: the setup's stopwords come from the reference
    out_a, hyps_a, srcs, refs = _tokenized_inputs(hyp_a, src, ref, source_lang, target_lang,
                                                  warn=False, tokens=tokens,
                                                  outputs=records is None)
    out_b = read_output(hyp_b, ref, warn=False)
    setup = redundancy_setup(refs, target_lang, source_lang, stopword_count=stopword_count,
                             embeddings=embeddings, embeddings_dict=embeddings_dict,
                             threshold=threshold)
    if records is None:
        stats_a = _statistics(setup.results(hyps_a, srcs, refs))
        stats_b = _statistics(setup.results(word_tokens(out_b.lines, target_lang), srcs, refs))
    else:
        stats_a, stats_b = (_recorded_redundancy(record, system, hyp, (str(src), str(ref)),
                                                 len(refs), setup.settings)
                            for record, system, hyp in zip(records, (system_a, system_b),
                                                           (hyp_a, hyp_b), strict=True))
    subsets = subsets_of(ref, len(refs), mask, mask_name)
    tested = {subset.name: {"sentences": len(_select(stats_a, subset)),
                            **paired_statistics_test(np.asarray(_select(stats_a, subset)),
                                                     np.asarray(_select(stats_b, subset)),
                                                     samples=samples, trials=trials,
                                                     seed=seed)}
              for subset in subsets}
    return {"testset": testset, "a": system_a, "b": system_b, "hypothesis_a": str(hyp_a),
            "hypothesis_b": str(hyp_b), "empty_lines": {system_a: len(out_a.empty),
                                                        system_b: len(out_b.empty)},
            "settings": setup.settings,
            "test": {"bootstrap_samples": samples, "randomization_trials": trials,
                     "seed": seed, "confidence": CONFIDENCE, "alpha": ALPHA,
                     "difference": "a - b of the pooled ratio",
                     "significant": "paired bootstrap p < alpha"},
            "main": subsets[0].name, "subsets": tested}

