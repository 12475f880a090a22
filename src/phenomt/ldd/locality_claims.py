"""Choshen & Abend's locality-bias claims (Section 3.1, Table 1) tested on this run's models.

The paper claims: the BiLSTM and the Transformer with sinusoidal positions lose BLEU when the
source tokens are permuted; with learned positions BLEU is "essentially the same" for
PERMUTED and PERPOSEMB as for REGULAR. Each claim compares one setting (A) with REGULAR (B) of
the same architecture and positions, with two paired tests:

- over seeds: Student's paired t-test of the per-seed BLEU (seed i of A against seed i of B);
- over sentences: a paired sentence bootstrap of corpus BLEU, the outputs of every seed stacked
  (sentence j of seed i of A against the same of B). Every run translates the same held-out
  sentences (the split depends on ``locality.split_seed`` only), so the pairs are the same
  source sentences, permuted or not.

Verdicts: a "loses BLEU" claim is *reproduced* when both tests find A below B (p < 0.05),
*opposite* when either finds A above B, *mixed* when only one finds the loss, *not
significant* otherwise. A "no change" claim is reproduced when neither test finds a
difference. Score records need their per-sentence statistics (``--bootstrap N``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from phenomt.core import papers
from phenomt.core.io import InputError
from phenomt.core.lazy import pandas as pd
from phenomt.core.metrics import resample
from phenomt.core.metrics.bleu import bleu_score_of
from phenomt.core.tables import format_number, interval_cell, load_score, write_table

PAPER = "choshen_abend_2019"


@dataclass(frozen=True)
class LocalityClaim:
    """Setting ``a`` against REGULAR for one architecture and positional embedding;
    ``expect``: -1 for a loss, 0 for no change."""

    claim: str
    arch: str
    pos_emb: str
    setting: str
    expect: int

    def key(self, setting: str) -> tuple[str, str, str]:
        return (self.arch, self.pos_emb, setting)


CLAIMS = (
    LocalityClaim("BiLSTM loses BLEU on PERMUTED source", "lstm", "none", "permuted", -1),
    LocalityClaim("sinusoidal positions lose BLEU on PERMUTED source", "transformer",
                  "sinusoidal", "permuted", -1),
    LocalityClaim("learned positions: PERMUTED as good as REGULAR", "transformer", "learned",
                  "permuted", 0),
    LocalityClaim("learned positions: PERPOSEMB as good as REGULAR", "transformer", "learned",
                  "perposemb", 0),
)


def _runs(paths: Sequence[str | Path]) -> dict[tuple[str, str, str], dict[int, tuple]]:
    """(arch, pos_emb, setting) -> seed -> (BLEU, per-sentence statistics)."""
    found: dict[tuple[str, str, str], dict[int, tuple]] = {}
    for path in paths:
        record = load_score(path, "bleu")
        stats = resample.record_statistics(record, path)
        meta = record["meta"]
        try:
            key = (meta["arch"], meta["pos_emb"], meta["setting"])
            seed = int(meta["seed"])
        except (KeyError, ValueError) as err:
            raise InputError(path, f"not a locality score record ({err})") from None
        found.setdefault(key, {})[seed] = (float(record["score"]), stats, record["signature"])
    return found


def verdict(expect: int, p_seeds: float | None, sentence_test: resample.Comparison,
            alpha: float = resample.ALPHA) -> str:
    """The verdict of one claim from its two tests (module docstring)."""
    diff = sentence_test.difference
    directions = []
    if p_seeds is not None and p_seeds < alpha:
        directions.append(np.sign(diff))
    if sentence_test.p < alpha:
        directions.append(np.sign(diff))
    if expect == 0:
        return "reproduced" if not directions else "not reproduced (BLEU differs)"
    if any(d == -expect for d in directions):
        return "opposite"
    if len(directions) == 2:
        return "reproduced"
    return "mixed" if directions else "not significant"


def _mean_std(values: Sequence[float]) -> str:
    if len(values) < 2:
        return format_number(values[0]) if values else "—"
    return f"{np.mean(values):.2f} ± {np.std(values, ddof=1):.2f}"


def claims_table(paths: Sequence[str | Path], *, samples: int = resample.DEFAULT_SAMPLES,
                 seed: int = resample.DEFAULT_SEED, alpha: float = resample.ALPHA
                 ) -> pd.DataFrame:
    """One row per claim; a claim whose two settings have no seed in common in this run is
    listed as not tested."""
    runs = _runs(paths)
    rows = []
    for claim in CLAIMS:
        a, b = runs.get(claim.key(claim.setting), {}), runs.get(claim.key("regular"), {})
        seeds = sorted(set(a) & set(b))
        if not seeds:
            missing = [f"{setting.upper()} ({claim.arch}, {claim.pos_emb} positions)"
                       for setting, found in ((claim.setting, a), ("regular", b)) if not found]
            rows.append({"claim": claim.claim, "A": claim.setting.upper(), "B": "REGULAR",
                         "seeds": 0, "verdict": "not tested: no run of " + (
                             " or ".join(missing) or "both with a common seed")})
            continue
        for s in seeds:
            if a[s][1].shape != b[s][1].shape:
                raise InputError(", ".join(map(str, paths)),
                                 f"seed {s}: {len(a[s][1])} sentences in {claim.setting} but "
                                 f"{len(b[s][1])} in regular")
        bleu_a, bleu_b = [a[s][0] for s in seeds], [b[s][0] for s in seeds]
        by_seed = resample.paired_seed_test(bleu_a, bleu_b)
        stacked_a = np.vstack([a[s][1] for s in seeds])
        stacked_b = np.vstack([b[s][1] for s in seeds])
        signature = a[seeds[0]][2]
        score = bleu_score_of(signature)
        by_sentence = resample.paired_bootstrap(stacked_a, stacked_b, score, samples=samples,
                                                seed=seed)
        paper_delta = papers.lookup(PAPER, "Table 1", "/".join(claim.key(claim.setting)),
                                    "delta")
        rows.append({
            "claim": claim.claim, "A": claim.setting.upper(), "B": "REGULAR",
            "seeds": len(seeds),
            "A BLEU (mean ± std)": _mean_std(bleu_a), "B BLEU (mean ± std)": _mean_std(bleu_b),
            "Δ over seeds": f"{by_seed.difference:+.2f}",
            "p (paired t, seeds)": "—" if by_seed.p is None else f"{by_seed.p:.4f}",
            "Δ stacked sentences [95% CI]": interval_cell(by_sentence.difference,
                                                          by_sentence.low, by_sentence.high),
            "p (paired bootstrap)": f"{by_sentence.p:.4f}",
            "verdict": verdict(claim.expect, by_seed.p, by_sentence, alpha),
            "paper Δ": "—" if paper_delta is None else f"{paper_delta:+.2f}",
            "BLEU signature": signature,
        })
    return pd.DataFrame(rows)


def _claims_command(args: argparse.Namespace) -> int:
    frame = claims_table(args.scores, samples=args.samples, seed=args.seed)
    notes = [
        "A against REGULAR of the same architecture and positions. Over seeds: paired t-test "
        "of per-seed BLEU (2 degrees of freedom with 3 seeds: weak). Over sentences: paired "
        f"bootstrap of corpus BLEU ({args.samples:,} resamples, seed {args.seed}) on the "
        "outputs of all seeds stacked, sentence by sentence.",
        "Loss claims are reproduced when both tests find A below REGULAR (p < 0.05); "
        "no-change claims when neither finds a difference.",
        "Paper Δ: Choshen & Abend Table 1 (WMT En-De, sentences of length 18, 1-5 runs).",
        *args.note]
    write_table(frame, args.md, args.csv,
                "Locality bias (Choshen & Abend Table 1): the paper's claims, paired tests",
                notes)
    return 0


def register_cli(tree: Any) -> None:
    from phenomt.core.cliargs import positive_int

    p = tree.add("table locality-claims",
                 "The locality-bias claims tested over seeds and sentences", _claims_command)
    p.add_argument("--scores", nargs="+", required=True,
                   help="phenomt score bleu --bootstrap records of every locality run")
    p.add_argument("--samples", type=positive_int, default=resample.DEFAULT_SAMPLES)
    p.add_argument("--seed", type=positive_int, default=resample.DEFAULT_SEED)
    p.add_argument("--note", action="append", default=[], help="a note under the table")
    p.add_argument("--md", required=True)
    p.add_argument("--csv", required=True)
