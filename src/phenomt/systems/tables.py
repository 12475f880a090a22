"""Tables of given systems: BLEU/chrF (and any other registered sacreBLEU metric the records
carry) with intervals and significance, CRR/DRR with intervals
and the paired test of two systems, LTCR with intervals, the paired test against the baseline
and the reference's calibration, MQM error rates beside metrics with their correlation.

Every table names each system's origin and licence (from ``data/sysout_systems.tsv``, or from
the record itself for a user's own system), the test set, its size and the signatures.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

from phenomt.core.bins import bin_order, bin_title, parse_bin
from phenomt.core.io import InputError
from phenomt.core.lazy import pandas as pd
from phenomt.core.linelimit import MAX_TOKENS, kept_out_note, name_lines
from phenomt.core.metrics import base as metrics
from phenomt.core.metrics import ltcr
from phenomt.core.metrics.resample import ALPHA, Comparison, holm
from phenomt.core.tables import format_number, interval_cell
from phenomt.systems import intervals, ranking
from phenomt.systems.challenge import (
    BINS_NOTE,
    MIN_INTERVAL_SENTENCES,
    REORDER,
)
from phenomt.systems.mqm import rank_correlation

CATALOGUE_COLUMNS = ("testset", "system", "kind", "origin", "licence", "lines", "readme_bleu",
                     "readme_bleu_official", "note")
ANY_SYSTEM = "*"
UNLISTED = {"origin": "given by the user (not in the sysout catalogue)", "licence": "unknown",
            "kind": "", "note": "", "readme_bleu": "", "readme_bleu_official": ""}


def default_catalogue() -> Path:
    """The checked-in catalogue of the sysout mirror's systems."""
    return Path(str(resources.files("phenomt.systems") / "data" / "sysout_systems.tsv"))


def load_catalogue(path: str | os.PathLike[str] | None = None) -> dict[tuple[str, str], dict]:
    """(test set, system) -> its catalogue row; ``#`` lines are comments."""
    path = default_catalogue() if path is None else Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), start=1)
                if line.strip() and not line.startswith("#")]
    if not numbered or tuple(numbered[0][1].split("\t")) != CATALOGUE_COLUMNS:
        raise InputError(path, f"expected the header {' '.join(CATALOGUE_COLUMNS)}",
                         numbered[0][0] if numbered else None)
    found: dict[tuple[str, str], dict] = {}
    for number, line in numbered[1:]:
        fields = next(csv.reader([line], delimiter="\t", quoting=csv.QUOTE_NONE))
        if len(fields) != len(CATALOGUE_COLUMNS):
            raise InputError(path, f"expected {len(CATALOGUE_COLUMNS)} fields, found "
                                   f"{len(fields)}", number)
        row = dict(zip(CATALOGUE_COLUMNS, fields, strict=True))
        key = (row["testset"], row["system"])
        if key in found:
            raise InputError(path, f"duplicate entry for {key}", number)
        found[key] = row
    return found


def system_info(catalogue: Mapping[tuple[str, str], dict], testset: str, system: str,
                record: Mapping | None = None) -> dict:
    """Origin, licence, kind and note of a system: the record's own fields win (a user's
    system), then the catalogue's exact row, then its whole-test-set row."""
    row = dict(catalogue.get((testset, system)) or catalogue.get((testset, ANY_SYSTEM))
               or UNLISTED)
    for key in ("origin", "licence", "kind"):
        if record is not None and record.get(key):
            row[key] = record[key]
    return row


def _p_cell(entry: Mapping) -> str | None:
    """The raw p, unmarked: only the Holm-adjusted p beside it carries the significance mark
    (a star on the raw p would claim an uncorrected comparison significant)."""
    if entry.get("p_value") is None:
        return None
    return f"{entry['p_value']:.4f}"


def _ordered(records: Sequence[Mapping]) -> list[tuple[Mapping, str]]:
    """(record, subset) pairs: by test set, the main subset first, then by system name."""
    pairs = [(r, name) for r in records for name in r["subsets"]]
    return sorted(pairs, key=lambda p: (p[0]["testset"], p[1] != p[0]["main"], p[1],
                                        p[0]["system"]))


def _readme_bleu(info: Mapping, record: Mapping, subset: str) -> str | None:
    if record.get("mask") is not None and subset == record["main"]:
        return info.get("readme_bleu_official") or None
    return info.get("readme_bleu") or None


def record_metrics(records: Sequence[Mapping]) -> list[str]:
    """The metrics of ``systems score`` records, in their order, each once."""
    return list(dict.fromkeys(key for record in records for key in record["metrics"]))


def _metric_cells(entry: Mapping, key: str) -> dict[str, str | None]:
    label = metrics.METRICS[key].label
    found = entry.get(key)
    if found is None:
        return {f"{label} [95% CI]": None, f"Δ{label}": None, f"p ({label})": None}
    return {f"{label} [95% CI]": intervals.mark(interval_cell(found["score"], found["ci_low"],
                                                              found["ci_high"]), found),
            f"Δ{label}": format_number(found["difference"]), f"p ({label})": _p_cell(found)}


def _metric_misses(records: Sequence[Mapping]) -> list[tuple[str, str]]:
    """(which interval, why) of every metric interval that does not contain its score."""
    return [(f"{record['testset']} {record['system']} {metrics.METRICS[key].label} "
             f"({subset} lines)", found["ci_reason"])
            for record, subset in _ordered(records) for key in record["metrics"]
            if intervals.flagged(found := record["subsets"][subset].get(key))]


def _rankings(records: Sequence[Mapping], keys: Sequence[str]
              ) -> dict[tuple[str, str], ranking.Ranking | None]:
    """(test set, metric) -> the ranking of its systems on the main subset."""
    found = {}
    for testset in sorted({r["testset"] for r in records}):
        mine = [r for r in records if r["testset"] == testset]
        for key in keys:
            found[testset, key] = ranking.rank([r for r in mine if key in r["metrics"]], key)
    return found


def _adjusted_cell(q: float | None) -> str | None:
    """A Holm-adjusted p with its significance mark (None or NaN: nothing was tested)."""
    if q is None or math.isnan(q):
        return None
    return f"{q:.4f}" + (" *" if q < ALPHA else "")


def _secondary_families(records: Sequence[Mapping], keys: Sequence[str]
                        ) -> dict[tuple[str, str, str], dict[str, float | None]]:
    """Holm over each secondary subset's tests against the baseline: (test set, subset,
    metric) -> system -> adjusted p. A subset other than the main one (e.g. the 'all' lines
    of a masked test set) is its own family, the tests of every system of the test set on
    that subset and metric; a missing or NaN p stays out of it."""
    found: dict[tuple[str, str, str], dict[str, float | None]] = {}
    for key in keys:
        families: dict[tuple[str, str], list[tuple[str, float | None]]] = {}
        for record, subset in _ordered(records):
            if subset == record["main"] or key not in record["metrics"]:
                continue
            entry = record["subsets"][subset].get(key) or {}
            families.setdefault((record["testset"], subset), []).append(
                (record["system"], entry.get("p_value")))
        for (testset, subset), tests in families.items():
            adjusted = holm([p for _, p in tests])
            found[testset, subset, key] = {system: q for (system, _), q in
                                           zip(tests, adjusted, strict=True)}
    return found


def _family_size(adjusted: Mapping[str, float | None]) -> int:
    """How many tests a Holm family holds (a missing or NaN p is none)."""
    return sum(q is not None and not math.isnan(q) for q in adjusted.values())


def _ranked_cells(record: Mapping, subset: str, key: str,
                  ranked: ranking.Ranking | None,
                  secondary: Mapping[tuple[str, str, str], Mapping[str, float | None]]
                  ) -> dict[str, str | None]:
    """The system's cluster (main subset only) and the Holm-adjusted p of its test against
    the baseline: on the main subset over every pair of the test set's systems (the family
    the clusters come from), on another subset over that subset's tests against the baseline
    (``secondary``, :func:`_secondary_families`)."""
    label = metrics.METRICS[key].label
    cells: dict[str, str | None] = {f"{label} cluster": None, f"p adj. ({label})": None}
    if subset != record["main"]:
        family = secondary.get((record["testset"], subset, key)) or {}
        cells[f"p adj. ({label})"] = _adjusted_cell(family.get(record["system"]))
        return cells
    if ranked is None:
        return cells
    cluster = ranked.cluster_of(record["system"])
    cells[f"{label} cluster"] = None if cluster is None else str(cluster)
    baseline = record.get("baseline")
    if baseline and baseline != record["system"] and (record["system"], baseline) in \
            ranked.adjusted:
        # NaN: the difference is undefined, nothing was tested
        cells[f"p adj. ({label})"] = _adjusted_cell(ranked.adjusted[record["system"], baseline])
    return cells


def _interval_note(test: Mapping) -> str:
    """How a record's intervals were made: percentile (the default) or sacreBLEU's form."""
    if test.get("interval_method") == "sacrebleu":
        return (f"95% intervals in sacreBLEU's form, the mean of a sentence bootstrap "
                f"({test['ci_samples']} resamples, seed {test['seed']}) +- half the width of "
                f"its 95% range, for comparison with published sacreBLEU intervals, clipped "
                f"to the score's range; {intervals.MARK} marks an interval that does not "
                "contain its score")
    return intervals.describe(test["ci_samples"], test["seed"])


def bleu_table(records: Sequence[Mapping], catalogue: Mapping[tuple[str, str], dict]
               ) -> tuple[pd.DataFrame, list[str]]:
    """Each metric of the records (BLEU and chrF unless configured otherwise) per system with
    95% intervals, the paired test against the baseline (raw and Holm-adjusted p) and the
    system's significance cluster."""
    keys = record_metrics(records)
    rankings = _rankings(records, keys)
    secondary = _secondary_families(records, keys)
    rows = []
    for record, subset in _ordered(records):
        entry = record["subsets"][subset]
        info = system_info(catalogue, record["testset"], record["system"], record)
        row = {"test set": record["testset"], "lines": subset,
               "sentences": entry["sentences"],
               "system": record["system"] + (" (baseline)" if record["is_baseline"] else ""),
               "kind": info.get("kind") or None}
        for key in keys:
            row.update(_metric_cells(entry, key))
            row.update(_ranked_cells(record, subset, key, rankings[record["testset"], key],
                                     secondary))
        rows.append({**row, "empty lines": entry["empty_lines"],
                     "README BLEU": _readme_bleu(info, record, subset),
                     "origin": info["origin"], "licence": info["licence"]})
    notes = ["Δ and p are against the test set's baseline system (the row marked baseline), "
             "p raw (unmarked); p adj.: Holm-adjusted, on the main subset over every pair of "
             "the test set's systems on the metric (the family the clusters come from), on a "
             "secondary subset (e.g. the 'all' lines of a masked test set) over that subset's "
             "tests against the baseline on the metric (its own family; sizes below); only "
             "the adjusted p carries a mark: * marks adjusted p < 0.05. Intervals "
             "and tests cover the test sentences only: each system is one given output.",
             "Cluster: systems ranked as WMT ranks them (1 = best): a boundary only where every "
             "system above is significantly better than every system below (paired tests on the "
             "test set's shared resamples, Holm-adjusted, p < 0.05); systems within a cluster "
             "are not told apart. Main subset only."]
    lower = [metrics.METRICS[k].label for k in keys if not metrics.METRICS[k].higher_is_better]
    if lower:
        notes.append(f"Lower is better for {', '.join(lower)}.")
    untested = sorted({f"{record['testset']} ({subset} lines: {found['untested']})"
                       for record, subset in _ordered(records) for key in keys
                       if (found := record["subsets"][subset].get(key) or {}).get("untested")})
    if untested:
        notes.append("No p where a test set (or subset) has too few units to resample: "
                     + "; ".join(untested) + ".")
    for testset in sorted({r["testset"] for r in records}):
        mine = [r for r in records if r["testset"] == testset]
        first = mine[0]
        main = first["subsets"][first["main"]]
        test = first["test"]
        sizes = ", ".join(f"{name}: {s['sentences']} sentences"
                          for name, s in first["subsets"].items())
        signatures = ", ".join(f"{metrics.METRICS[k].label} signature `{main[k]['signature']}`"
                               for k in first["metrics"])
        notes.append(
            f"{testset} ({sizes}; reference {first['reference']}): baseline "
            f"{first['baseline'] or 'none'}; p: {test['name']} ({test['samples']} "
            f"{'resamples' if test['type'] == 'bs' else 'trials'}, seed {test['seed']}); "
            f"intervals: {_interval_note(test)}; {signatures}, test signature "
            f"`{main[first['metrics'][0]]['test_signature']}`.")
        by_document = [metrics.METRICS[k].label for k in first["metrics"]
                       if main[k].get("unit") == "document"]
        if by_document:
            notes.append(f"{testset}: {', '.join(by_document)} resamples and swaps whole "
                         "documents (its pairs of repeated words span a document's "
                         "sentences): its intervals and tests cover the test documents, on its "
                         "own resamples of the same seed.")
        if first.get("mask") is not None:
            notes.append(f"{testset}: the main result is on the lines marked in "
                         f"{first['mask']} ({first['main']}); 'all' lines are secondary.")
        families = [f"{subset} lines, {metrics.METRICS[key].label}: {size} tests"
                    for (name, subset, key), adjusted in sorted(secondary.items())
                    if name == testset and (size := _family_size(adjusted))]
        if families:
            notes.append(f"{testset}: p adj. of the secondary subsets, each (subset, metric) "
                         "its own Holm family of the tests against the baseline ("
                         + "; ".join(families) + "), apart from the main subset's family.")
        empty = [f"{r['system']} ({r['empty_lines']})" for r in mine if r["empty_lines"]]
        if empty:
            notes.append(f"{testset}: empty lines are scored as empty hypotheses: "
                         f"{', '.join(empty)}.")
    notes += intervals.notes(_metric_misses(records))
    notes.append("README BLEU: the sysout README's score of the same file (one decimal).")
    return pd.DataFrame(rows), notes


#: The redundancy measures of a record and a comparison, with their column labels.
REDUNDANCY_MEASURES = {"crr": "CRR", "drr": "DRR", "redundancy": "CRR+DRR"}


def _comparison_tests(comparison: Mapping, subset: str) -> dict[str, Mapping]:
    """The paired tests a redundancy comparison shows for one line subset, by measure."""
    tested = comparison["subsets"].get(subset) or {}
    return {measure: tested[measure] for measure in REDUNDANCY_MEASURES
            if tested.get(measure) is not None}


def _comparison_cell(comparison: Mapping, subset: str,
                     adjusted: Mapping[str, float]) -> str | None:
    """A system's paired test against its pair: each measure's Δ with its paired interval,
    its p and the p Holm-adjusted over the table (``adjusted``, by measure); * where the
    adjusted p is under the test's alpha."""
    tests = _comparison_tests(comparison, subset)
    if not tests:
        return None
    parts = []
    for measure, result in tests.items():
        low, high = result["difference_ci"]
        marker = " *" if adjusted[measure] < comparison["test"]["alpha"] else ""
        interval = intervals.mark(f"[{low * 100:+.2f}, {high * 100:+.2f}]", result,
                                  "difference_ci")
        parts.append(f"Δ{REDUNDANCY_MEASURES[measure]} {result['difference'] * 100:+.2f} "
                     f"{interval} p={result['p_bootstrap']:.4f}, Holm "
                     f"{adjusted[measure]:.4f}{marker}")
    return f"vs {comparison['b']}: " + "; ".join(parts)


def _randomization_cell(comparison: Mapping, subset: str,
                        adjusted: Mapping[str, float | None]) -> str | None:
    """The randomization p of a system's paired tests, each with that p Holm-adjusted over
    the table's randomization tests (``adjusted``, by measure); * only on the adjusted p."""
    tests = _comparison_tests(comparison, subset)
    parts = []
    for measure, result in tests.items():
        p = result.get("p_randomization")
        q = adjusted.get(measure)
        if p is None or q is None or math.isnan(q):
            continue
        marker = " *" if q < comparison["test"]["alpha"] else ""
        parts.append(f"{REDUNDANCY_MEASURES[measure]} p={p:.4f}, Holm {q:.4f}{marker}")
    return f"vs {comparison['b']}: " + "; ".join(parts) if parts else None


def _holm_by_row(tests: Sequence[tuple[int, str, Mapping]], p: Sequence[float | None]
                 ) -> dict[int, dict[str, float | None]]:
    """The Holm-adjusted ``p`` of ``tests`` (row index, measure, result) as one family, by
    row and measure."""
    found: dict[int, dict[str, float | None]] = {}
    for (index, measure, _), q in zip(tests, holm(list(p)), strict=True):
        found.setdefault(index, {})[measure] = q
    return found


def redundancy_table(records: Sequence[Mapping], comparisons: Sequence[Mapping],
                     catalogue: Mapping[tuple[str, str], dict]
                     ) -> tuple[pd.DataFrame, list[str]]:
    """CRR, DRR and their sum in percent per system, with sentence-bootstrap intervals, and
    the paired test of system pairs (e.g. a non-autoregressive system against its AR twin)."""
    by_pair = {(c["testset"], c["a"]): c for c in comparisons}
    shown = [(record, subset, by_pair.get((record["testset"], record["system"])))
             for record, subset in _ordered(records)]
    # every paired test the table shows (pair, line subset, measure) is one family; the
    # randomization p of the same tests are a family of their own (two methods for one
    # hypothesis, not two tests), a missing or NaN p left out of it
    family = [(index, measure, result)
              for index, (_, subset, comparison) in enumerate(shown) if comparison is not None
              for measure, result in _comparison_tests(comparison, subset).items()]
    adjusted = _holm_by_row(family, [result["p_bootstrap"] for _, _, result in family])
    randomized = _holm_by_row(family, [result.get("p_randomization")
                                       for _, _, result in family])
    tested = sum(q is not None and not math.isnan(q)
                 for found in randomized.values() for q in found.values())
    rows = []
    for index, (record, subset, comparison) in enumerate(shown):
        entry = record["subsets"][subset]
        info = system_info(catalogue, record["testset"], record["system"], record)
        row = {"test set": record["testset"], "lines": subset, "sentences": entry["sentences"],
               "system": record["system"], "kind": info.get("kind") or None}
        for measure, label in REDUNDANCY_MEASURES.items():
            ci = entry[f"{measure}_ci"] or [None, None]
            row[f"{label} % [95% CI]"] = intervals.mark(
                interval_cell(entry[measure], ci[0], ci[1], 2, 100.0), entry, f"{measure}_ci")
        row.update({"tokens": entry["tokens"], "empty lines": entry["empty_lines"],
                    "paired test": None if comparison is None
                    else _comparison_cell(comparison, subset, adjusted.get(index, {})),
                    "randomization p (Holm)": None if comparison is None
                    else _randomization_cell(comparison, subset, randomized.get(index, {})),
                    "origin": info["origin"], "licence": info["licence"]})
        rows.append(row)
    notes = ["Ratios are pooled over sentences (sum of redundant tokens over sum of |Y| - 1) and "
             "given in percent; intervals are percentile intervals of a sentence bootstrap, "
             f"clipped to 0-100%; {intervals.MARK} marks an interval that does not contain its "
             "ratio (or difference). Each system is one given output: intervals and tests "
             "cover the test sentences only."]
    for testset in sorted({r["testset"] for r in records}):
        first = next(r for r in records if r["testset"] == testset)
        s, b = first["settings"], first["bootstrap"]
        sizes = ", ".join(f"{name}: {x['sentences']} sentences"
                          for name, x in first["subsets"].items())
        notes.append(
            f"{testset} ({sizes}): {s['level']} level, target tokens by {s['target_tokenizer']}, "
            f"source tokens by {s['source_tokenizer']}; case {s['case']}; redundant = "
            f"{s['redundant']}; stopwords = {s['stopword_rule']}: "
            f"{' '.join(s['stopwords'])}; exemptions: {s['exemptions']}; intervals: 95% "
            f"percentile bootstrap over the test sentences ({b['samples']} resamples, seed "
            f"{b['seed']}). The same settings for every system.")
    for c in comparisons:
        t = c["test"]
        trials = t.get("randomization_trials")
        notes.append(f"Paired test {c['a']} against {c['b']} on {c['testset']}: Δ = a - b in "
                     f"percentage points with its paired bootstrap interval over the test "
                     f"sentences ({t['bootstrap_samples']} resamples, seed {t['seed']}); p from "
                     f"the bootstrap, Holm: that p adjusted over the table's {len(family)} "
                     f"paired tests (every pair, line subset and measure shown: one family; "
                     f"* Holm < {t['alpha']}); randomization p: paired approximate "
                     f"randomization swapping the two systems' test sentences ("
                     + (f"{trials} trials" if trials is not None else "trials not recorded")
                     + f", seed {t['seed']}), Holm-adjusted over the table's {tested} "
                     "randomization tests (the same tests: a family of its own, apart from the "
                     f"bootstrap's); * only on the adjusted p, Holm < {t['alpha']}.")
    notes += intervals.notes(_redundancy_misses(records, comparisons))
    return pd.DataFrame(rows), notes


_MEASURE_LABELS = (("crr", "CRR"), ("drr", "DRR"), ("redundancy", "CRR+DRR"))


def _redundancy_misses(records: Sequence[Mapping], comparisons: Sequence[Mapping]
                       ) -> list[tuple[str, str]]:
    """(which interval, why) of every CRR/DRR interval, or paired difference's, that does not
    contain its value."""
    misses = [(f"{record['testset']} {record['system']} {label} ({subset} lines)",
               entry[f"{measure}_ci_reason"])
              for record, subset in _ordered(records)
              for measure, label in _MEASURE_LABELS
              if intervals.flagged(entry := record["subsets"][subset], f"{measure}_ci")]
    misses += [(f"{c['testset']} Δ{label} {c['a']} - {c['b']} ({subset} lines)",
                result["difference_ci_reason"])
               for c in comparisons for subset, tested in c["subsets"].items()
               for measure, label in _MEASURE_LABELS
               if intervals.flagged(result := tested.get(measure), "difference_ci")]
    return misses


#: How the tables name the metric columns of an MQM record.
METRIC_LABELS = {"l_all": "LTCR (L-All)", "drr": "DRR", "crr": "CRR",
                 "redundancy": "CRR+DRR", "bleu": "BLEU", "chrf": "chrF"}


def metric_label(column: str) -> str:
    return METRIC_LABELS.get(column, column)


def mqm_table(record: Mapping, catalogue: Mapping[tuple[str, str], dict], testset: str
              ) -> tuple[pd.DataFrame, list[str]]:
    """MQM category rates per system beside the metric columns, with Spearman's ρ."""
    rows = []
    metrics = record.get("metrics", {})
    for system, rates in record["systems"].items():
        info = system_info(catalogue, testset, system)
        row = {"system": system, "kind": info.get("kind") or None,
               "annotated segments": rates["segments"]}
        for category in record["categories"]:
            c = rates["categories"][category]
            row[f"{category} (per segment, errors)"] = f"{c['rate']:.4f} ({c['errors']})"
        for column, values in metrics.items():
            row[metric_label(column)] = format_number(values.get(system), 4)
        row.update({"origin": info["origin"], "licence": info["licence"]})
        rows.append(row)
    notes = [f"{testset}: MQM annotations {record['annotations']} ({record['rows']} rows, "
             f"{len(record['systems'])} annotated outputs); rate = annotated errors of the "
             "category per annotated segment; errors of the category over all outputs: "
             + ", ".join(f"{c}: {n}" for c, n in record["category_totals"].items()) + "."]
    if record.get("reference"):
        notes.append(f"Metrics take {record['reference']} (a human translation) as the "
                     "reference; it has no CRR/DRR of its own (against itself it has no "
                     "redundancy by construction).")
    if "l_all" in metrics:
        notes.append("LTCR (L-All): share of the pairs of repeated source content words, per "
                     "talk, translated consistently; aligner trained once on the talks' source "
                     "with the reference (and the configured extra data).")
    if "drr" in metrics:
        notes.append("DRR: word-level discontinuous redundancy ratio against the reference "
                     "(sacremoses tokens, stopwords and exemption quotas as in the "
                     "systems_redundancy table).")
    tested = sum(c["p"] is not None for c in record["correlations"])
    if tested:
        how = record.get("p_method") or "two-sided p"
        notes.append(f"Spearman's ρ over the systems; p: {how.rstrip('.')}; the {tested} "
                     "p-values below are one family, Holm-adjusted together (the family-wise "
                     "error rate of the table held at 0.05).")
    for c in record["correlations"]:
        if c["rho"] is None:
            result = f"no ρ ({c['reason']})"
        else:
            result = (f"ρ = {c['rho']:+.3f}, p = {c['p']:.4f} (Holm-adjusted "
                      f"{c['p_holm']:.4f})")
        flags = [f for f, on in (("weak evidence: n < " + str(record["weak_below"]), c["weak"]),
                                 ("few annotated errors", c["few_errors"])) if on]
        notes.append(f"Spearman {metric_label(c['metric'])} vs {c['category']}: n = {c['n']}, "
                     f"{result}, {c['errors']} errors"
                     + (f" ({'; '.join(flags)})" if flags else "") + ".")
    return pd.DataFrame(rows), notes


# --------------------------------------------------------------------------- LDD sets

def _ltcr_test_cell(baseline: str, tested: Comparison, checked: Mapping,
                    adjusted: float) -> str:
    """ΔL-All against the baseline with its paired interval, p and the p Holm-adjusted over
    the table's tests (``adjusted``); * where that is under alpha."""
    marker = " *" if adjusted < ALPHA else ""
    interval = intervals.mark(f"[{100 * checked['ci_low']:+.2f}, {100 * checked['ci_high']:+.2f}]",
                              checked)
    return (f"vs {baseline}: ΔL-All {100 * tested.difference:+.2f} {interval} "
            f"p={tested.p:.4f}, Holm {adjusted:.4f}{marker}")


def _ltcr_paired(record: Mapping, path: str, base: Mapping, base_path: str, samples: int,
                 seed: int) -> Comparison | None:
    """L-All of a system against the baseline's on the same documents; None when either has
    no judged pair."""
    if record["l_all"] is None or base["l_all"] is None:
        return None
    stats, base_stats = (ltcr.document_statistics(record, path),
                         ltcr.document_statistics(base, base_path))
    if len(stats) != len(base_stats):
        raise InputError(path, f"has {len(stats)} documents, the baseline's {base_path} "
                               f"{len(base_stats)}: not the same test set")
    return ltcr.paired_test(stats, base_stats, "all", samples, seed)


def ltcr_table(records: Mapping[tuple[str, str], tuple[Mapping, str]],
               baselines: Mapping[str, str], calibration: str, samples: int, seed: int
               ) -> tuple[pd.DataFrame, list[str]]:
    """L-All of every (test set, system) record with its document-bootstrap interval, pairs
    judged and unjudged, and its paired test against the test set's baseline; the row of
    ``calibration`` (the reference scored as a hypothesis) last in each test set.
    ``records`` maps (test set, system) to the record and its file."""
    rows = []
    misses = []
    paired = []  # (row, its test's cell arguments): one family, adjusted below
    for testset in dict.fromkeys(t for t, _ in records):
        systems = [s for t, s in records if t == testset]
        baseline = baselines.get(testset)
        base = records.get((testset, baseline)) if baseline else None
        for system in sorted(systems, key=lambda name: name == calibration):
            record, path = records[(testset, system)]
            # the record's percentile interval, clipped to 0-1 and checked to hold L-All
            bootstrap = record["intervals"]
            checked = intervals.check_record_interval(record["l_all"], bootstrap["l_all"],
                                                      "l_all", bootstrap["samples"],
                                                      bootstrap["level"])
            tested = checked_test = None
            if base is not None and system not in (baseline, calibration):
                tested = _ltcr_paired(record, path, *base, samples, seed)
            if tested is not None:
                checked_test = intervals.checked_interval(
                    tested.difference, tested.low, tested.high,
                    bounds=intervals.DIFFERENCE_RANGE, samples=samples)
            label = ("reference (calibration)" if system == calibration
                     else f"{system} (baseline)" if system == baseline else system)
            misses += [(f"{testset} {label} {what}", found["ci_reason"])
                       for what, found in (("L-All", checked), ("ΔL-All", checked_test))
                       if intervals.flagged(found)]
            rows.append({"test set": testset, "system": label,
                         "documents": record["documents"], "sentences": record["sentences"],
                         "L-All % [95% CI]": intervals.mark(
                             interval_cell(record["l_all"], checked["ci_low"],
                                           checked["ci_high"], 2, 100.0), checked),
                         "pairs": record["pairs_all"], "judged": record["judged_all"],
                         "unjudged": record["unjudged_all"],
                         "paired test": None})
            if tested is not None:
                paired.append((rows[-1], (baseline, tested, checked_test)))
    # the table's paired tests (each system against its test set's baseline): one family
    for (row, cell), adjusted in zip(paired, holm([cell[1].p for _, cell in paired]),
                                     strict=True):
        row["paired test"] = _ltcr_test_cell(*cell, adjusted)
    first = next(iter(records.values()))[0]
    bootstrap = first["intervals"]
    notes = ["L-All (Lei et al. 2024): of the pairs of occurrences of a repeated Chinese "
             "content word in one document, the share whose aligned English content words "
             "(lower-cased, stemmed) are the same, in %; a pair with an occurrence aligned to "
             "no content word is unjudged and left out.",
             f"Intervals: {100 * bootstrap['level']:g}% percentile bootstrap over documents "
             f"({bootstrap['samples']} resamples, seed {bootstrap['seed']}), clipped to "
             f"0-100%; {intervals.MARK} marks an interval that does not contain its L-All (or "
             f"difference); stemmer {first['stemmer']}.",
             f"Paired test: L-All of the system minus the baseline's, paired bootstrap over "
             f"documents ({samples} samples, seed {seed}); Holm: its p adjusted over the "
             f"table's {len(paired)} paired tests (one family); * marks Holm < {ALPHA}.",
             "reference (calibration): the reference scored as a hypothesis. These test sets "
             "have no annotated chains, so its L-All is not 100%: the aligner's errors and the "
             "reference's own varied wording of repeats lower it. Read a system's L-All "
             "against this row, not against 100%.", *intervals.notes(misses)]
    return pd.DataFrame(rows), notes


def check_ldd_records(records: Sequence[Mapping],
                      paths: Sequence[str | os.PathLike[str]] | None = None) -> None:
    """Per-system LDD records of one table must share the test set and the size of every
    set, one record a system; an error names the record's file (``paths``)."""
    if not records:
        raise ValueError("no LDD records")
    names = list(paths) if paths is not None else [f"record {n}" for n in
                                                   range(1, len(records) + 1)]
    first, seen = records[0], set()
    for name, record in zip(names, records, strict=True):
        if record["testset"] != first["testset"]:
            raise InputError(name, f"is for test set {record['testset']!r}, not "
                                   f"{first['testset']!r} (of {names[0]})")
        sizes = {n: s["sentences"] for n, s in record["sets"].items()}
        if sizes != {n: s["sentences"] for n, s in first["sets"].items()}:
            raise InputError(name, f"its challenge sets or their sizes differ from those of "
                                   f"{names[0]}")
        if record["system"] in seen:
            raise InputError(name, f"a second record of system {record['system']!r}")
        seen.add(record["system"])
        if sorted(record["full"].get("metrics", {})) != sorted(first["full"].get("metrics", {})):
            raise InputError(name, f"scored with other metrics than {names[0]} (systems "
                                   "ldd-score --metrics)")


def _ldd_records(records: Sequence[Mapping]) -> tuple[str, list[str], list[Mapping]]:
    """Test set, system names and records of per-system LDD records of one test set."""
    check_ldd_records(records)
    return records[0]["testset"], [r["system"] for r in records], list(records)


def _ldd_score_cell(score: Mapping | None, tested: Mapping, delta: bool = True,
                    digits: int = 2) -> str | None:
    """``score [CI]`` of a score entry and, with ``delta``, Δ against the full test set with
    its verdict from ``tested`` (``difference``, ``below``, ``above``)."""
    if score is None:
        return None
    # a set too small for a test (†) shows no interval either: resampling a handful of
    # sentences gives one too narrow to read (one sentence: zero width)
    untested = "below" in tested and tested["below"] is None
    # .get: a RIBES entry of an earlier layout has neither interval nor test
    cell = (interval_cell(score["score"], None, None, digits) if untested else
            intervals.mark(interval_cell(score["score"], score.get("ci_low"),
                                         score.get("ci_high"), digits), score))
    if delta and tested.get("difference") is not None:
        cell += f" Δ{tested['difference']:+.{digits}f}"
        if "below" in tested:  # an entry of an earlier layout has no verdict to mark
            verdict = (" †" if tested["below"] is None else " ▼" if tested["below"]
                       else " ▲" if tested["above"] else "")
            cell += verdict
    return cell


def _ldd_bleu_cell(entry: Mapping, delta: bool = True) -> str | None:
    return _ldd_score_cell(entry["bleu"], entry, delta)


def _ldd_misses(records: Sequence[Mapping], names: Sequence[str], full: bool
                ) -> list[tuple[str, str]]:
    """(which interval, why) of the BLEU intervals of the sets ``names`` (and, with ``full``,
    of the full test set) that do not contain their BLEU."""
    entries = [(r["system"], "full test set", r["full"]) for r in records if full]
    entries += [(r["system"], name, r["sets"][name]) for name in names for r in records]
    return [(f"{system} on {name}", entry["bleu"]["ci_reason"])
            for system, name, entry in entries if intervals.flagged(entry["bleu"])]


def _set_order(records: Sequence[Mapping]) -> list[str]:
    """Set names: lexical phenomena in their order of appearance, bins by distance (exact
    bins after the others), the reordering sets last."""
    sets = records[0]["sets"]
    phenomena = list(dict.fromkeys(s["phenomenon"] for s in sets.values()))
    return sorted(sets, key=lambda n: (sets[n]["phenomenon"] == REORDER,
                                       phenomena.index(sets[n]["phenomenon"]),
                                       bin_order(sets[n]["bin"])))


def _below_counts(records: Sequence[Mapping], name: str, metric: str = "bleu"
                  ) -> dict[str, str | None]:
    """How many systems score lower on the set than on the full test set, and how many
    significantly (``metric``: bleu, or ribes, whose entry holds its own test)."""
    entries = [r["sets"][name] if metric == "bleu" else r["sets"][name][metric]
               for r in records if r["sets"][name][metric] is not None]
    if not entries:
        return {"below full test set": None, "interval below": None}
    n = len(entries)
    judged = [e for e in entries if e.get("below") is not None]
    return {"below full test set": f"{sum(e['difference'] < 0 for e in entries)} of {n}",
            "interval below": f"{sum(e['below'] for e in judged)} of {len(judged)}"
            if judged else f"— (under {MIN_INTERVAL_SENTENCES} sentences)"}


def aligner_note(settings: Mapping, path: str | os.PathLike[str], alignment: str | None = None,
                 aligned_source: str | os.PathLike[str] | None = None) -> str:
    """What the reordering set's aligner was trained on, read from the aligner's
    ``settings.json`` (``settings``, read from ``path``): its training corpora with their line
    counts, and whether the test set's tokenized source (``aligned_source``) is among them."""
    try:
        corpora = [(str(c["src"]), str(c["tgt"]), int(c["lines"])) for c in settings["corpora"]]
        pairs = int(settings["training_pairs"])
    except (KeyError, TypeError, ValueError) as err:
        raise InputError(path, f"aligner settings without its training corpora: {err}") from None
    model = os.path.dirname(os.fspath(path)) or "."
    links = f", {alignment} links" if alignment else ""
    files = "; ".join(f"{Path(src).name} | {Path(tgt).name} ({lines:,} lines)"
                      for src, tgt, lines in corpora)
    note = (f"the reordering set from the LDD aligner of the direction ({model}{links}), "
            f"trained on {pairs:,} sentence pairs from {files}")
    if aligned_source is not None:
        among = any(_same_file(src, aligned_source) for src, _, _ in corpora)
        note += ("; this test set is among them (an unsupervised aligner is trained on what it "
                 "aligns)" if among else "; this test set is not among them")
    return note


def _same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file (as written, or once resolved)."""
    if os.path.normpath(a) == os.path.normpath(b):
        return True
    return os.path.realpath(a) == os.path.realpath(b)


def _ldd_notes(testset: str, records: Sequence[Mapping],
               catalogue: Mapping[tuple[str, str], dict], udpipe: str | None,
               aligner: str | None, marks: bool = True) -> list[str]:
    """The challenge-set tables' notes; ``marks``: the table's cells carry Δ and the
    verdict marks (▼ ▲ †), which the notes then explain."""
    first = records[0]
    test = first["test"]
    full = first["full"]
    sizes = "; ".join(f"{s['phenomenon']} {bin_title(s['bin'])}: {s['sentences']}"
                      for s in (first["sets"][n] for n in _set_order(records)))
    notes = [f"{testset}: full test set {full['sentences']} sentences (reference "
             f"{first['reference']}). Set sizes (sentences): {sizes}.",
             "The sets are small: a set of a few dozen sentences has a BLEU interval many "
             "points wide, so a lower point estimate alone is weak evidence"
             + ("; ▼/▲ mark sets "
                "significantly below/above the full test set: each set against the full test "
                "set on the same resamples (the test set's resamples, a set counting the draws "
                "of its own lines), p Holm-adjusted over the system's sets, < 0.05; † marks "
                f"sets of fewer than {MIN_INTERVAL_SENTENCES} sentences, too few for that "
                "verdict or an interval (resampling a handful of sentences understates the "
                "spread)"
                if marks else "") + ". Intervals cover the test sentences only.",
             f"Distance bins: {BINS_NOTE}. Reordering set ≥d: a source and a reference token "
             "aligned at positions at least d apart.",
             f"BLEU: sacreBLEU `{full['bleu']['signature']}`; intervals: "
             f"{intervals.describe(test['samples'], test['seed'])}."
             + (" Δ = set − full test set." if marks else "")]
    extraction = []
    if udpipe:
        extraction.append(f"lexical sets from the UDPipe parse of the source ({udpipe})")
    if aligner:
        extraction.append(aligner)
    if extraction:
        notes.append("Extraction: " + "; ".join(extraction) + ".")
    if kept := kept_out_note(first.get("kept_out")):
        notes.append(f"{testset}: {kept}")
    kinds = [f"{r['system']}: {kind}" for r in records
             if (kind := system_info(catalogue, testset, r["system"], r).get("kind"))]
    notes.append("Origins and licences of the systems: see the systems_bleu table"
                 + (f"; {', '.join(kinds)}" if kinds else "") + ".")
    return notes


def ldd_bleu_table(records: Sequence[Mapping], catalogue: Mapping[tuple[str, str], dict],
                   bins: Sequence[str] = ("ge1",), udpipe: str | None = None,
                   aligner: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Table 4 with systems as columns: BLEU [95% CI] of the full test set and of each set
    (lexical sets at ``bins``, the reordering sets), Δ against the full test set."""
    testset, systems, records = _ldd_records(records)
    full = {r["system"]: r["full"] for r in records}
    rows = [{"set": "full test set", "phenomenon": None, "distance": None,
             "sentences": records[0]["full"]["sentences"],
             **{s: _ldd_bleu_cell(full[s], delta=False) for s in systems},
             "below full test set": None, "interval below": None}]
    for name in _set_order(records):
        entry = records[0]["sets"][name]
        if entry["phenomenon"] != REORDER and entry["bin"] not in bins:
            continue
        rows.append({"set": name, "phenomenon": entry["phenomenon"],
                     "distance": bin_title(entry["bin"]), "sentences": entry["sentences"],
                     **{r["system"]: _ldd_bleu_cell(r["sets"][name]) for r in records},
                     **_below_counts(records, name)})
    notes = _ldd_notes(testset, records, catalogue, udpipe, aligner)
    notes.insert(1, "Cell: BLEU [95% CI] Δ against the full test set (first row). Lexical sets "
                    f"at {', '.join(bin_title(b) for b in bins)} as in the paper's Table 4; "
                    "every bin in the by-distance table. 'below full test set': systems whose "
                    "set BLEU is lower; 'interval below': those significantly below (▼).")
    shown = [row["set"] for row in rows[1:]]
    return pd.DataFrame(rows), notes + intervals.notes(_ldd_misses(records, shown, True))


def ldd_metrics_table(records: Sequence[Mapping], catalogue: Mapping[tuple[str, str], dict],
                      bins: Sequence[str] = ("ge1",), udpipe: str | None = None,
                      aligner: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Table 4 for the records' other metrics (``systems ldd-score --metrics``): a row per set
    and metric, systems as columns, score [95% CI] and Δ against the full test set, each
    metric's sets Holm-adjusted as a family of their own."""
    testset, systems, records = _ldd_records(records)
    names = list(records[0]["full"].get("metrics", {}))
    if not names:
        raise ValueError("the records hold no metric besides BLEU: score them with "
                         "systems ldd-score --metrics")
    first = records[0]["full"]["metrics"]
    labels = {name: metrics.get(name).label if name in metrics.names() else name
              for name in names}
    rows = [{"set": "full test set", "metric": labels[name], "phenomenon": None,
             "distance": None, "sentences": records[0]["full"]["sentences"],
             **{r["system"]: _ldd_score_cell(r["full"]["metrics"][name], {}, delta=False)
                for r in records}} for name in names]
    for set_name in _set_order(records):
        entry = records[0]["sets"][set_name]
        if entry["phenomenon"] != REORDER and entry["bin"] not in bins:
            continue
        for name in names:
            rows.append({"set": set_name, "metric": labels[name],
                         "phenomenon": entry["phenomenon"], "distance": bin_title(entry["bin"]),
                         "sentences": entry["sentences"],
                         **{r["system"]: _ldd_score_cell(r["sets"][set_name]["metrics"][name],
                                                         r["sets"][set_name]["metrics"][name]
                                                         or {})
                            for r in records}})
    notes = _ldd_notes(testset, records, catalogue, udpipe, aligner)
    notes.insert(1, "Cell: score [95% CI] Δ against the full test set (first rows), on the same "
                    "resamples as BLEU; each metric's sets are Holm-adjusted together, ▼/▲ "
                    "significantly below/above (lower is better for "
                    + (", ".join(labels[n] for n in names
                                 if not metrics.get(n).higher_is_better) or "none") + "). "
                    "Signatures: " + "; ".join(f"{labels[n]} `{first[n]['signature']}`"
                                              for n in names) + ".")
    return pd.DataFrame(rows), notes


def ldd_distance_table(records: Sequence[Mapping], catalogue: Mapping[tuple[str, str], dict],
                       min_sentences: int = 50, udpipe: str | None = None,
                       aligner: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Table 5 with systems as columns: BLEU [95% CI] of the lexical sets by distance bin,
    for sets of at least ``min_sentences`` sentences, and per phenomenon Spearman's ρ between
    BLEU and distance over those bins (All = 0, ≥k = k)."""
    testset, systems, records = _ldd_records(records)
    omitted = []
    by_phenomenon: dict[str, list[str]] = {}
    for name in _set_order(records):
        entry = records[0]["sets"][name]
        if entry["phenomenon"] == REORDER:
            continue
        if entry["sentences"] < min_sentences:
            omitted.append(f"{entry['phenomenon']} {bin_title(entry['bin'])} "
                           f"({entry['sentences']})")
            continue
        by_phenomenon.setdefault(entry["phenomenon"], []).append(name)
    rows = []
    for phenomenon, names in by_phenomenon.items():
        for name in names:
            entry = records[0]["sets"][name]
            rows.append({"set": name, "phenomenon": phenomenon,
                         "distance": bin_title(entry["bin"]), "sentences": entry["sentences"],
                         **{r["system"]: _ldd_bleu_cell(r["sets"][name], delta=False)
                            for r in records}})
        ranked = [n for n in names if not parse_bin(records[0]["sets"][n]["bin"]).exact]
        distances = {n: float(parse_bin(records[0]["sets"][n]["bin"]).distance)
                     for n in ranked}
        row = {"set": None, "phenomenon": phenomenon,
               "distance": "Spearman ρ (BLEU, distance)", "sentences": None}
        for record in records:
            bleu = {n: record["sets"][n]["bleu"]["score"] for n in ranked
                    if record["sets"][n]["bleu"] is not None}
            c = rank_correlation(distances, bleu)
            row[record["system"]] = (f"{c['rho']:+.2f} (n {c['n']})"
                                     if c["rho"] is not None else
                                     f"— ({c['reason'].replace('systems', 'bins')})")
        rows.append(row)
    notes = _ldd_notes(testset, records, catalogue, udpipe, aligner, marks=False)
    notes.insert(1, f"Cell: BLEU [95% CI]; only sets of at least {min_sentences} sentences. "
                    "Omitted as smaller: " + (", ".join(omitted) or "none") + ".")
    notes.insert(2, "Spearman ρ (scipy.stats.spearmanr) between each bin's BLEU and its "
                    "minimum distance (All = 0, ≥k = k) over the bins shown (n): from at most "
                    "four nested sets it is only indicative, so no p-value is given.")
    # object columns: a count beside the ρ rows' empty cell stays a count
    frame = pd.DataFrame(rows, columns=["set", "phenomenon", "distance", "sentences",
                                        *systems], dtype=object)
    shown = [name for names in by_phenomenon.values() for name in names]
    return frame, notes + intervals.notes(_ldd_misses(records, shown, False))


def ldd_ribes_table(records: Sequence[Mapping], catalogue: Mapping[tuple[str, str], dict],
                    udpipe: str | None = None, aligner: str | None = None
                    ) -> tuple[pd.DataFrame, list[str]]:
    """Table 6 with systems as columns: RIBES [95% CI] of the full test set and of the
    reordering sets, Δ against the full test set with its verdict."""
    testset, systems, records = _ldd_records(records)

    def cell(entry: Mapping, delta: bool) -> str | None:
        ribes = entry["ribes"]
        return _ldd_score_cell(ribes, ribes or {}, delta, digits=4)

    rows = [{"set": "full test set", "distance": None,
             "sentences": records[0]["full"]["sentences"],
             **{r["system"]: cell(r["full"], False) for r in records},
             "below full test set": None, "interval below": None}]
    described = set()
    for name in _set_order(records):
        entry = records[0]["sets"][name]
        if entry["phenomenon"] != REORDER:
            continue
        scored = [r["sets"][name]["ribes"] for r in records if r["sets"][name]["ribes"]]
        rows.append({"set": name, "distance": bin_title(entry["bin"]),
                     "sentences": entry["sentences"],
                     **{r["system"]: cell(r["sets"][name], True) for r in records},
                     **_below_counts(records, name, "ribes")})
        described.update(f"{x['implementation']}, α = {x['alpha']}, β = {x['beta']}, tokens: "
                         f"{x['tokens']}" for x in scored)
    notes = _ldd_notes(testset, records, catalogue, udpipe, aligner)
    notes.insert(1, "Cell: RIBES [95% CI] (0-1, the mean over sentences of NKT · P1^α · "
                    "BP^β; the interval from the same sentence bootstrap as BLEU's) and Δ "
                    "against the full test set (first row), tested as BLEU is (▼/▲: p "
                    "Holm-adjusted over the system's reordering sets). 'below full test set': "
                    "systems whose set RIBES is lower; 'interval below': those significantly "
                    "below (▼).")
    notes += [f"RIBES: {d}." for d in sorted(described)]
    notes.append("Paper: Choshen & Abend (2019), Table 6, score their own models on newstest2013 "
                 "and Books, not these systems (ldd_table6 puts their numbers beside ours); "
                 "they find RIBES lower on the reordering set than on the full test set, the "
                 "direction tested here.")
    unscored = [f"{r['system']}: {name_lines(r['ribes_unscored'])}" for r in records
                if r.get("ribes_unscored")]
    if unscored:
        notes.append(f"RIBES leaves out the lines whose hypothesis or reference has over "
                     f"{MAX_TOKENS:,} tokens (nltk's word alignment is super-linear in length); "
                     f"they stay in BLEU: {'; '.join(unscored)}.")
    return pd.DataFrame(rows), notes
