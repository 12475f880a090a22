"""Tables of given systems: BLEU/chrF with intervals and significance, CRR/DRR with intervals
and the paired test of two systems, MQM error rates beside metrics with their correlation.

Every table names each system's origin and licence (from ``data/sysout_systems.tsv``, or from
the record itself for a user's own system), the test set, its size and the signatures.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

import pandas as pd

from phenomt.core.io import InputError

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


def _num(value: float | None, digits: int = 2, scale: float = 1.0) -> str | None:
    return None if value is None else f"{value * scale:.{digits}f}"


def interval_cell(value: float | None, low: float | None, high: float | None,
                  digits: int = 2, scale: float = 1.0) -> str | None:
    """``value [low, high]``; the value alone when there is no interval."""
    if value is None:
        return None
    if low is None or high is None:
        return _num(value, digits, scale)
    return (f"{_num(value, digits, scale)} [{_num(low, digits, scale)}, "
            f"{_num(high, digits, scale)}]")


def _p_cell(entry: Mapping) -> str | None:
    if entry.get("p_value") is None:
        return None
    marker = " *" if entry.get("significant") else ""
    return f"{entry['p_value']:.4f}{marker}"


def _ordered(records: Sequence[Mapping]) -> list[tuple[Mapping, str]]:
    """(record, subset) pairs: by test set, the main subset first, then by system name."""
    pairs = [(r, name) for r in records for name in r["subsets"]]
    return sorted(pairs, key=lambda p: (p[0]["testset"], p[1] != p[0]["main"], p[1],
                                        p[0]["system"]))


def _readme_bleu(info: Mapping, record: Mapping, subset: str) -> str | None:
    if record.get("mask") is not None and subset == record["main"]:
        return info.get("readme_bleu_official") or None
    return info.get("readme_bleu") or None


def bleu_table(records: Sequence[Mapping], catalogue: Mapping[tuple[str, str], dict]
               ) -> tuple[pd.DataFrame, list[str]]:
    """BLEU and chrF per system with 95% intervals and the paired test against the baseline."""
    rows = []
    for record, subset in _ordered(records):
        entry = record["subsets"][subset]
        bleu, chrf = entry["bleu"], entry["chrf"]
        info = system_info(catalogue, record["testset"], record["system"], record)
        rows.append({
            "test set": record["testset"], "lines": subset, "sentences": entry["sentences"],
            "system": record["system"] + (" (baseline)" if record["is_baseline"] else ""),
            "kind": info.get("kind") or None,
            "BLEU [95% CI]": interval_cell(bleu["score"], bleu["ci_low"], bleu["ci_high"]),
            "ΔBLEU": _num(bleu["difference"]), "p (BLEU)": _p_cell(bleu),
            "chrF [95% CI]": interval_cell(chrf["score"], chrf["ci_low"], chrf["ci_high"]),
            "ΔchrF": _num(chrf["difference"]), "p (chrF)": _p_cell(chrf),
            "empty lines": entry["empty_lines"],
            "README BLEU": _readme_bleu(info, record, subset),
            "origin": info["origin"], "licence": info["licence"]})
    notes = ["Δ and p are against the test set's baseline system (the row marked baseline); "
             "* marks p < 0.05."]
    for testset in sorted({r["testset"] for r in records}):
        mine = [r for r in records if r["testset"] == testset]
        first = mine[0]
        main = first["subsets"][first["main"]]
        test = first["test"]
        sizes = ", ".join(f"{name}: {s['sentences']} sentences"
                          for name, s in first["subsets"].items())
        notes.append(
            f"{testset} ({sizes}; reference {first['reference']}): baseline "
            f"{first['baseline'] or 'none'}; {test['name']} from sacreBLEU ({test['samples']} "
            f"samples, seed {test['seed']}); BLEU signature `{main['bleu']['signature']}`, "
            f"chrF signature `{main['chrf']['signature']}`, test signature "
            f"`{main['bleu']['test_signature']}`.")
        if first.get("mask") is not None:
            notes.append(f"{testset}: the main result is on the lines marked in "
                         f"{first['mask']} ({first['main']}); 'all' lines are secondary.")
        empty = [f"{r['system']} ({r['empty_lines']})" for r in mine if r["empty_lines"]]
        if empty:
            notes.append(f"{testset}: empty lines are scored as empty hypotheses: "
                         f"{', '.join(empty)}.")
    notes.append("README BLEU: the sysout README's score of the same file (one decimal).")
    return pd.DataFrame(rows), notes


def _comparison_cell(comparison: Mapping, subset: str) -> str | None:
    tested = comparison["subsets"].get(subset)
    if tested is None:
        return None
    parts = []
    for measure, label in (("crr", "CRR"), ("drr", "DRR"), ("redundancy", "CRR+DRR")):
        result = tested.get(measure)
        if result is None:
            continue
        low, high = result["difference_ci"]
        marker = " *" if result["significant"] else ""
        parts.append(f"Δ{label} {result['difference'] * 100:+.2f} [{low * 100:+.2f}, "
                     f"{high * 100:+.2f}] p={result['p_bootstrap']:.4f}{marker}")
    return f"vs {comparison['b']}: " + "; ".join(parts)


def redundancy_table(records: Sequence[Mapping], comparisons: Sequence[Mapping],
                     catalogue: Mapping[tuple[str, str], dict]
                     ) -> tuple[pd.DataFrame, list[str]]:
    """CRR, DRR and their sum in percent per system, with sentence-bootstrap intervals, and
    the paired test of system pairs (e.g. a non-autoregressive system against its AR twin)."""
    by_pair = {(c["testset"], c["a"]): c for c in comparisons}
    rows = []
    for record, subset in _ordered(records):
        entry = record["subsets"][subset]
        info = system_info(catalogue, record["testset"], record["system"], record)
        comparison = by_pair.get((record["testset"], record["system"]))
        row = {"test set": record["testset"], "lines": subset, "sentences": entry["sentences"],
               "system": record["system"], "kind": info.get("kind") or None}
        for measure, label in (("crr", "CRR %"), ("drr", "DRR %"),
                               ("redundancy", "CRR+DRR %")):
            ci = entry[f"{measure}_ci"] or [None, None]
            row[f"{label} [95% CI]"] = interval_cell(entry[measure], ci[0], ci[1], 2, 100.0)
        row.update({"tokens": entry["tokens"], "empty lines": entry["empty_lines"],
                    "paired test": None if comparison is None
                    else _comparison_cell(comparison, subset),
                    "origin": info["origin"], "licence": info["licence"]})
        rows.append(row)
    notes = ["Ratios are pooled over sentences (sum of redundant tokens over sum of |Y| - 1) and "
             "given in percent; intervals are percentile intervals of a sentence bootstrap."]
    for testset in sorted({r["testset"] for r in records}):
        first = next(r for r in records if r["testset"] == testset)
        s, b = first["settings"], first["bootstrap"]
        sizes = ", ".join(f"{name}: {x['sentences']} sentences"
                          for name, x in first["subsets"].items())
        notes.append(
            f"{testset} ({sizes}): {s['level']} level, target tokens by {s['target_tokenizer']}, "
            f"source tokens by {s['source_tokenizer']}; case {s['case']}; redundant = "
            f"{s['redundant']}; stopwords = {s['stopword_rule']}: "
            f"{' '.join(s['stopwords'])}; exemptions: {s['exemptions']}; bootstrap "
            f"{b['samples']} samples, seed {b['seed']}. The same settings for every system.")
    for c in comparisons:
        t = c["test"]
        notes.append(f"Paired test {c['a']} against {c['b']} on {c['testset']}: Δ = a - b in "
                     f"percentage points with its paired sentence-bootstrap interval "
                     f"({t['bootstrap_samples']} samples, seed {t['seed']}); p from the "
                     f"bootstrap (* p < {t['alpha']}); randomization p: " + "; ".join(
                         f"{name} {m}: {res['p_randomization']:.4f}"
                         for name, sub in c["subsets"].items()
                         for m, res in sub.items() if isinstance(res, Mapping)) + ".")
    return pd.DataFrame(rows), notes


def mqm_table(record: Mapping, catalogue: Mapping[tuple[str, str], dict], testset: str
              ) -> tuple[pd.DataFrame, list[str]]:
    """MQM category rates per system beside the metric columns, with Spearman's ρ."""
    rows = []
    metrics = record.get("metrics", {})
    for system, rates in record["systems"].items():
        info = system_info(catalogue, testset, system)
        row = {"system": system, "annotated segments": rates["segments"]}
        for category in record["categories"]:
            c = rates["categories"][category]
            row[f"{category} (per segment, errors)"] = f"{c['rate']:.4f} ({c['errors']})"
        for column, values in metrics.items():
            row[column] = _num(values.get(system), 4)
        row.update({"origin": info["origin"], "licence": info["licence"]})
        rows.append(row)
    notes = [f"{testset}: MQM annotations {record['annotations']} ({record['rows']} rows); "
             "rate = annotated errors of the category per annotated segment."]
    for c in record["correlations"]:
        if c["rho"] is None:
            result = f"no ρ ({c['reason']})"
        else:
            result = f"ρ = {c['rho']:+.3f}, p = {c['p']:.4f}"
        flags = [f for f, on in (("weak evidence: n < " + str(record["weak_below"]), c["weak"]),
                                 ("few annotated errors", c["few_errors"])) if on]
        notes.append(f"Spearman {c['metric']} vs {c['category']}: n = {c['n']}, {result}, "
                     f"{c['errors']} errors" + (f" ({'; '.join(flags)})" if flags else "") + ".")
    return pd.DataFrame(rows), notes
