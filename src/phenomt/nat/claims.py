"""The NAT paper's claims about its trained models, each tested on this run's outputs with a
paired sentence bootstrap (:mod:`phenomt.core.metrics.resample`).

Wang et al. claim (Sections 5-6, Tables 5 and 10), and we test on every language pair and test
set of the run:

- (a) knowledge distillation lowers CRR, for CMLM and for GLAT;
- (b) the OaXE loss lowers CRR, for CMLM and for GLAT, on raw and on distilled data;
- (c) GLAT is less redundant (CRR) than CMLM, and DA-Transformer the least of all NAT models;
- (d) knowledge distillation raises BLEU, for every NAT model.

Each comparison A against B is one row: both scores, A - B with its 95% paired-bootstrap
interval, the two-sided p, and a verdict: *reproduced* (significant, in the claimed
direction), *opposite* (significant, the other way) or *not significant*. The paper's own
numbers for the same pair and training data stand beside ours. A claim that groups several
comparisons (DAT lowest) holds when every one of them is reproduced. The records must carry
their per-sentence statistics (``phenomt score bleu|redundancy --bootstrap N``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from phenomt.core import papers
from phenomt.core.lazy import pandas as pd
from phenomt.core.metrics import resample
from phenomt.core.metrics.bleu import bleu_score_of
from phenomt.core.metrics.redundancy import measure_score
from phenomt.core.tables import format_number, interval_cell, load_json, load_score, write_table
from phenomt.nat.recipes import NAT_MODELS, SYSTEM_LABELS

PAPER = "wang_nat"
VERDICTS = {"reproduced": "reproduced", "opposite": "opposite", "ns": "not significant"}


@dataclass(frozen=True)
class Comparison:
    """One tested comparison: system ``a`` against ``b`` on ``measure``; ``expect`` is -1
    when the claim says a < b and +1 when it says a > b."""

    claim: str
    a: str
    b: str
    measure: str
    expect: int


def paper_claims(models: Sequence[str]) -> list[Comparison]:
    """The comparisons of claims (a)-(d) among the NAT ``models`` a run trained."""
    have = set(models)
    found: list[Comparison] = []
    for model in ("cmlm", "glat"):
        found.append(Comparison(f"(a) distillation lowers CRR ({SYSTEM_LABELS[model]})",
                                f"{model}.distilled", f"{model}.raw", "crr", -1))
    for model in ("cmlm", "glat"):
        for data in ("raw", "distilled"):
            found.append(Comparison(f"(b) OaXE lowers CRR ({SYSTEM_LABELS[model]}, {data})",
                                    f"{model}_oaxe.{data}", f"{model}.{data}", "crr", -1))
    for data in ("raw", "distilled"):
        found.append(Comparison(f"(c) GLAT below CMLM in CRR ({data})", f"glat.{data}",
                                f"cmlm.{data}", "crr", -1))
        for other in models:
            if other != "dat":
                found.append(Comparison(f"(c) DAT lowest CRR ({data})", f"dat.{data}",
                                        f"{other}.{data}", "crr", -1))
    for model in models:
        found.append(Comparison(f"(d) distillation raises BLEU ({SYSTEM_LABELS[model]})",
                                f"{model}.distilled", f"{model}.raw", "bleu", +1))
    return [c for c in found if {c.a.split(".")[0], c.b.split(".")[0]} <= have]


@dataclass(frozen=True)
class Scored:
    """One system's BLEU and redundancy records on one test set."""

    bleu: dict
    redundancy: dict
    bleu_path: str
    redundancy_path: str

    def statistics(self, measure: str) -> np.ndarray:
        if measure == "bleu":
            return resample.record_statistics(self.bleu, self.bleu_path)
        return resample.record_statistics(self.redundancy, self.redundancy_path)


def _group(score_pairs: Sequence[tuple[str | Path, str | Path]]
           ) -> dict[tuple[str, str], dict[str, Scored]]:
    """(direction, test set) -> system -> its records."""
    groups: dict[tuple[str, str], dict[str, Scored]] = {}
    for bleu_path, redundancy_path in score_pairs:
        bleu, redundancy = load_score(bleu_path, "bleu"), load_json(redundancy_path)
        meta = bleu["meta"]
        key = (meta["direction"], meta["testset"])
        groups.setdefault(key, {})[meta["system"]] = Scored(bleu, redundancy, str(bleu_path),
                                                            str(redundancy_path))
    return groups


def _verdict(comparison: resample.Comparison, expect: int, alpha: float) -> str:
    if not comparison.p < alpha:
        return VERDICTS["ns"]
    return VERDICTS["reproduced" if np.sign(comparison.difference) == expect else "opposite"]


def _paper_value(pair: str, system: str, measure: str) -> float | None:
    model, data = system.split(".")
    table, column = ("Table 5", "bleu") if measure == "bleu" else ("Table 10", measure)
    return papers.lookup(PAPER, table, f"{pair}/{data}/{model}", column)


def _label(system: str) -> str:
    model, data = system.split(".")
    return f"{SYSTEM_LABELS.get(model, model)} {data}"


def claims_table(score_pairs: Sequence[tuple[str | Path, str | Path]], *,
                 samples: int = resample.DEFAULT_SAMPLES, seed: int = resample.DEFAULT_SEED,
                 alpha: float = resample.ALPHA) -> pd.DataFrame:
    """One row per comparison of :func:`paper_claims` on every pair and test set; one whose
    systems this run did not train is listed as not tested."""
    rows = []
    for (pair, testset), systems in sorted(_group(score_pairs).items()):
        for claim in paper_claims(list(NAT_MODELS)):
            if claim.a not in systems or claim.b not in systems:
                missing = " and ".join(_label(s) for s in (claim.a, claim.b) if s not in systems)
                rows.append({"claim": claim.claim, "pair": pair, "test set": testset,
                             "A": _label(claim.a), "B": _label(claim.b),
                             "verdict": f"not tested: no {missing} in this run"})
                continue
            a, b = systems[claim.a], systems[claim.b]
            if claim.measure == "bleu":
                score = bleu_score_of(a.bleu["signature"])
                scale, unit = 1.0, "BLEU"
            else:
                score, scale, unit = measure_score(claim.measure), 100.0, "CRR (%)"
            tested = resample.paired_bootstrap(a.statistics(claim.measure),
                                               b.statistics(claim.measure), score,
                                               samples=samples, seed=seed)
            paper_a, paper_b = (_paper_value(pair, s, claim.measure) for s in (claim.a, claim.b))
            rows.append({
                "claim": claim.claim, "pair": pair, "test set": testset, "measure": unit,
                "A": _label(claim.a), "B": _label(claim.b),
                "A score": format_number(tested.a, 2, scale),
                "B score": format_number(tested.b, 2, scale),
                "A - B [95% CI]": interval_cell(tested.difference, tested.low, tested.high, 2,
                                                scale),
                "p": f"{tested.p:.4f}",
                "verdict": _verdict(tested, claim.expect, alpha),
                "paper A": format_number(paper_a, 1), "paper B": format_number(paper_b, 1),
            })
    return pd.DataFrame(rows)


def claim_summary(table: pd.DataFrame) -> list[str]:
    """One line per claim: reproduced when all its comparisons are."""
    lines = []
    if table.empty:
        return lines
    for claim, rows in table.groupby("claim", sort=False):
        verdicts = [v for v in rows["verdict"] if not v.startswith("not tested")]
        if not verdicts:
            lines.append(f"{claim}: not tested in this run.")
            continue
        if all(v == VERDICTS["reproduced"] for v in verdicts):
            overall = "reproduced"
        elif VERDICTS["opposite"] in verdicts:
            overall = "not reproduced (a comparison goes the other way)"
        elif VERDICTS["reproduced"] in verdicts:
            overall = "partly reproduced"
        else:
            overall = "not reproduced (no significant difference)"
        lines.append(f"{claim}: {overall} ({len(verdicts)} comparison"
                     f"{'s' if len(verdicts) > 1 else ''}).")
    return lines


def _claims_command(args: argparse.Namespace) -> int:
    frame = claims_table(args.scores, samples=args.samples, seed=args.seed)
    notes = [
        "A - B and its 95% interval come from a paired sentence bootstrap "
        f"({args.samples:,} resamples, seed {args.seed}; the same resampled sentences for "
        "both systems); p is two-sided, from the centred bootstrap distribution of A - B. "
        "Verdict: reproduced = p < 0.05 in the claimed direction; opposite = p < 0.05 the "
        "other way.",
        "Paper A/B: the paper's Table 5 (BLEU) or Table 10 (CRR) number of the same pair, "
        "model and training data, at its scale (WMT data, 300k updates).",
        *args.note, *claim_summary(frame)]
    write_table(frame, args.md, args.csv,
                "The NAT paper's claims on this run: paired tests", notes)
    return 0


def register_cli(tree) -> None:
    from phenomt.core.cliargs import positive_int
    from phenomt.nat.tables import parse_score_pair

    p = tree.add("table nat-claims",
                 "The NAT paper's claims (a)-(d) tested on this run's systems (paired bootstrap)",
                 _claims_command)
    p.add_argument("--scores", nargs="+", required=True, type=parse_score_pair,
                   metavar="BLEU_JSON=REDUNDANCY_JSON",
                   help="score records of every system, with per-sentence statistics")
    p.add_argument("--samples", type=positive_int, default=resample.DEFAULT_SAMPLES)
    p.add_argument("--seed", type=positive_int, default=resample.DEFAULT_SEED)
    p.add_argument("--note", action="append", default=[], help="a note under the table")
    p.add_argument("--md", required=True)
    p.add_argument("--csv", required=True)
