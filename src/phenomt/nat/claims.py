"""The NAT paper's claims about its trained models, each tested on this run's outputs with a
paired sentence bootstrap (:mod:`phenomt.core.metrics.resample`).

Wang et al. (arXiv 2405.02673) make these claims; :data:`SOURCES` says where, by section and
table. We test them on every language pair and test set of the run:

- (a) knowledge distillation lowers CRR, for CMLM and for GLAT;
- (b) the OaXE loss lowers CRR, for CMLM and for GLAT, on raw and on distilled data;
- (c) GLAT is less redundant (CRR) than CMLM, and DA-Transformer the least of all NAT models;
- (d) knowledge distillation raises BLEU, for every NAT model;
- (e) the paper's headline observation: DAT's redundancy is mainly discontinuous (DRR > CRR),
  that of GLAT, the OaXE models and CMLM mainly continuous (CRR > DRR), on raw and on
  distilled data. Each comparison is one system's DRR against its own CRR on the same
  sentences.

Each comparison A against B is one row: both scores, A - B with its 95% paired-bootstrap
interval, the two-sided p, its Holm adjustment and a verdict from the adjusted p.

- *Shared resamples*: one weight matrix (:func:`resample.resample_weights`) is drawn per test
  set and every comparison on that test set is tested with it (:func:`resample.paired_test`),
  so all of them are paired on the same resampled sentences.
- *Family*: Holm's adjustment runs over every comparison tested on one language pair and test
  set. Each test set is its own replication of the claims (the paper reports each pair
  separately) and is summarised on its own; a family spanning every test set of the table
  would also multiply the number of tests by the number of test sets until no p of a
  bootstrap (at least 1 / (resamples + 1)) could pass: 4 pairs x 31 comparisons would need
  at least 2,480 resamples.
- *Verdict* (adjusted p < alpha): reproduced (in the claimed direction), opposite (the other
  way), otherwise not significant; "not judged: smoke scale" for every row of a run whose
  models trained only a few updates (``judge=False``).
- *Claim summary*, per claim and test set (:func:`summarise`): reproduced when every
  comparison of the claim is reproduced; contradicted when at least one is opposite (they are
  named); partly reproduced when some are reproduced and none is opposite; not shown when none
  is significant.

Every system is one training run; the intervals resample test sentences only. The paper's
numbers for the same pair, model and training data stand beside ours. The records must carry
their per-sentence statistics (``phenomt score bleu|redundancy --samples N``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from phenomt.core import papers
from phenomt.core.io import InputError
from phenomt.core.lazy import pandas as pd
from phenomt.core.metrics import resample
from phenomt.core.metrics.bleu import bleu_score_of
from phenomt.core.metrics.redundancy import MEASURE_COLUMNS, measure_score
from phenomt.core.tables import format_number, interval_cell, write_table
from phenomt.nat.recipes import NAT_DATA, NAT_MODELS, SYSTEM_LABELS
from phenomt.nat.tables import load_scores

PAPER = "wang_nat"
VERDICTS = {"reproduced": "reproduced", "opposite": "opposite", "ns": "not significant"}
NOT_JUDGED = "not judged: smoke scale"

#: Where the paper makes each claim (its Sections 1-4 and Appendices A-D).
SOURCES = {
    "a": "Section 2 (Results: \"Knowledge distillation reduces the redundancy errors\", from "
         "the human annotation of Table 2); the automatic CRR in Table 10 (Appendix D)",
    "b": "Tables 5 and 10 (Section 3.2, Appendix D); Section 2 (Results) says the models "
         "built on CMLM \"greatly reduce the continuous repetition ratio\" (Table 2); OaXE "
         "against its base model is read from the tables' numbers",
    "c": "Section 2 (Results: every model \"greatly reduce[s] the continuous repetition "
         "ratio\" of CMLM, DAT's \"to 0%\", Table 2); the automatic CRR in Table 10",
    "d": "Table 5 (Section 3.2)",
    "e": "Section 2 (Results) and Section 1: DAT's redundancy is \"mainly in the form of "
         "discontinuous redundancy\", OaXE's and GLAT's \"mainly in the continuous form\", and "
         "\"the trend still holds in distilled data\"; from the human annotation of 100 WMT20 "
         "En->Zh sentences (Table 2, Table 9's human columns). CMLM (CRR > DRR) is not in "
         "that sentence; its CRR far above DRR is read from Tables 9 and 10",
}


@dataclass(frozen=True)
class Comparison:
    """One tested comparison: ``measure`` of system ``a`` against ``b_measure`` (the same
    measure unless given) of system ``b``; ``expect`` is -1 when the claim says A < B and +1
    when it says A > B. Claim (e) compares one system with itself: its DRR against its CRR."""

    claim: str
    a: str
    b: str
    measure: str
    expect: int
    b_measure: str | None = None

    @property
    def measure_b(self) -> str:
        return self.b_measure or self.measure


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


#: Claim (e): the form each model's redundancy mainly takes (+1: DRR > CRR, discontinuous).
FORMS = {"dat": +1, "cmlm": -1, "cmlm_oaxe": -1, "glat": -1, "glat_oaxe": -1}


def form_claims(models: Sequence[str], data: Sequence[str] = NAT_DATA) -> list[Comparison]:
    """The comparisons of claim (e), one claim per data condition: each model's DRR (A)
    against its own CRR (B), DRR > CRR expected for DAT and CRR > DRR for the others."""
    return [Comparison(f"(e) redundancy mainly discontinuous for DAT, continuous for the "
                       f"others ({condition})", f"{model}.{condition}", f"{model}.{condition}",
                       "drr", FORMS[model], b_measure="crr")
            for condition in data for model in NAT_MODELS if model in models]


def all_claims(models: Sequence[str]) -> list[Comparison]:
    """Claims (a)-(e) among ``models``."""
    return [*paper_claims(models), *form_claims(models)]


@dataclass(frozen=True)
class Scored:
    """One system's BLEU and redundancy records on one test set."""

    bleu: dict
    redundancy: dict
    bleu_path: str
    redundancy_path: str

    def statistics(self, measure: str) -> np.ndarray:
        """Per-sentence statistics of ``measure``: sacreBLEU's counts for BLEU; for a
        redundancy ratio, its count and the denominator |Y| - 1 (columns 0 and 2, so that
        :func:`measure_score` ``("crr")`` scores any of them)."""
        if measure == "bleu":
            return resample.record_statistics(self.bleu, self.bleu_path)
        rows = resample.record_statistics(self.redundancy, self.redundancy_path)
        if rows.ndim != 2 or rows.shape[1] != 3:
            raise InputError(self.redundancy_path, "expected per-sentence statistics of "
                             "three columns (continuous, discontinuous, denominator)")
        (column,) = MEASURE_COLUMNS[measure]
        return rows[:, [column, column, 2]]

    def sentences(self) -> dict[str, int]:
        """How many sentences each record's statistics hold."""
        return {self.bleu_path: len(self.statistics("bleu")),
                self.redundancy_path: len(self.statistics("crr"))}


def _score_of(measure: str, scored: Scored) -> tuple[Callable[[np.ndarray], float], float, str]:
    """The score, display scale and unit of a comparison's measure."""
    if measure == "bleu":
        return bleu_score_of(scored.bleu["signature"]), 1.0, "BLEU"
    if measure == "crr":
        return measure_score("crr"), 100.0, "CRR (%)"
    # Scored.statistics puts the measure's count where the CRR score reads it
    return measure_score("crr"), 100.0, "DRR vs CRR (%)"


def _group(score_pairs: Sequence[tuple[str | Path, str | Path]]
           ) -> dict[tuple[str, str], dict[str, Scored]]:
    """(direction, test set) -> system -> its records; one record per system and test set
    (a claims table compares one training run per system)."""
    groups: dict[tuple[str, str], dict[str, Scored]] = {}
    for bleu_path, redundancy_path in score_pairs:
        bleu, redundancy = load_scores(bleu_path, redundancy_path,
                                       ("direction", "testset", "system"))
        meta = bleu["meta"]
        key = (meta["direction"], meta["testset"])
        systems = groups.setdefault(key, {})
        if meta["system"] in systems:
            raise InputError(bleu_path, f"a second record of {meta['system']} on "
                             f"{key[0]} {key[1]} (the first: {systems[meta['system']].bleu_path});"
                             " the claims table takes one training run per system")
        systems[meta["system"]] = Scored(bleu, redundancy, str(bleu_path), str(redundancy_path))
    return groups


def _sentences(systems: Mapping[str, Scored], names: Sequence[str]) -> int:
    """The number of test sentences every record of ``names`` holds; an error naming the
    file when one holds another number."""
    counts = {path: n for name in names for path, n in systems[name].sentences().items()}
    first_path, first = next(iter(counts.items()))
    for path, n in counts.items():
        if n != first:
            raise InputError(path, f"statistics of {n} sentences, but {first} in {first_path}: "
                             "paired tests need the same test sentences")
    return first


def verdict(difference: float, adjusted_p: float, expect: int,
            alpha: float = resample.ALPHA) -> str:
    """The verdict of one comparison from its Holm-adjusted p."""
    if not adjusted_p < alpha:
        return VERDICTS["ns"]
    return VERDICTS["reproduced" if np.sign(difference) == expect else "opposite"]


def _paper_value(pair: str, system: str, measure: str) -> float | None:
    model, data = system.split(".")
    table, column = ("Table 5", "bleu") if measure == "bleu" else ("Table 10", measure)
    return papers.lookup(PAPER, table, f"{pair}/{data}/{model}", column)


def _label(system: str, measure: str | None = None) -> str:
    model, data = system.split(".")
    label = f"{SYSTEM_LABELS.get(model, model)} {data}"
    return f"{label} {measure.upper()}" if measure else label


def _labels(claim: Comparison) -> tuple[str, str]:
    if claim.a == claim.b:
        return _label(claim.a, claim.measure), _label(claim.b, claim.measure_b)
    return _label(claim.a), _label(claim.b)


def claims_table(score_pairs: Sequence[tuple[str | Path, str | Path]], *,
                 samples: int = resample.DEFAULT_SAMPLES, seed: int = resample.DEFAULT_SEED,
                 alpha: float = resample.ALPHA, judge: bool = True) -> pd.DataFrame:
    """One row per comparison of :func:`all_claims` on every pair and test set; one whose
    systems this run did not train is listed as not tested. The comparisons of a test set
    share one resample weight matrix and form one Holm family; ``judge=False`` (smoke-scale
    models) gives every tested row the verdict :data:`NOT_JUDGED`."""
    rows = []
    for (pair, testset), systems in sorted(_group(score_pairs).items()):
        claims = all_claims(list(NAT_MODELS))
        tested_names = sorted({s for c in claims for s in (c.a, c.b) if s in systems})
        weights = (resample.resample_weights(_sentences(systems, tested_names), samples, seed)
                   if tested_names else None)
        found: list[tuple[dict, Comparison, resample.Comparison | None]] = []
        for claim in claims:
            label_a, label_b = _labels(claim)
            row = {"claim": claim.claim, "pair": pair, "test set": testset, "A": label_a,
                   "B": label_b}
            if claim.a not in systems or claim.b not in systems:
                missing = " and ".join(dict.fromkeys(_label(s) for s in (claim.a, claim.b)
                                                     if s not in systems))
                row["verdict"] = f"not tested: no {missing} in this run"
                found.append((row, claim, None))
                continue
            a, b = systems[claim.a], systems[claim.b]
            score, scale, unit = _score_of(claim.measure, a)
            tested = resample.paired_test(a.statistics(claim.measure),
                                          b.statistics(claim.measure_b), score, weights)
            row["measure"] = unit
            if not np.isfinite(tested.difference):
                row["verdict"] = "not tested: no score (no sentence of two or more tokens)"
                found.append((row, claim, None))
                continue
            paper_a = _paper_value(pair, claim.a, claim.measure)
            paper_b = _paper_value(pair, claim.b, claim.measure_b)
            row.update({
                "A score": format_number(tested.a, 2, scale),
                "B score": format_number(tested.b, 2, scale),
                "A - B [95% CI]": interval_cell(tested.difference, tested.low, tested.high, 2,
                                                scale),
                "p": f"{tested.p:.4f}",
                "paper A": format_number(paper_a, 1), "paper B": format_number(paper_b, 1),
            })
            found.append((row, claim, tested))
        adjusted = resample.holm([t.p if t is not None else None for _, _, t in found])
        for (row, claim, tested), p_holm in zip(found, adjusted, strict=True):
            if tested is not None and p_holm is not None:
                row["p (Holm)"] = f"{p_holm:.4f}"
                row["verdict"] = (verdict(tested.difference, p_holm, claim.expect, alpha)
                                  if judge else NOT_JUDGED)
            rows.append(row)
    columns = ["claim", "pair", "test set", "measure", "A", "B", "A score", "B score",
               "A - B [95% CI]", "p", "p (Holm)", "verdict", "paper A", "paper B"]
    return pd.DataFrame(rows, columns=columns)


def summarise(verdicts: Sequence[str], names: Sequence[str] = ()) -> str:
    """The summary of one claim on one test set from the verdicts of its tested comparisons
    (``names``: their labels, to name the opposite ones): reproduced when all are reproduced;
    contradicted when at least one is opposite; partly reproduced when some are reproduced
    and none is opposite; not shown when none is significant."""
    n = len(verdicts)
    if n == 0:
        return "not tested in this run"
    if any(v == NOT_JUDGED for v in verdicts):
        return NOT_JUDGED
    reproduced = sum(v == VERDICTS["reproduced"] for v in verdicts)
    opposite = [i for i, v in enumerate(verdicts) if v == VERDICTS["opposite"]]
    of = f"of {n} comparison{'s' if n > 1 else ''}"
    if reproduced == n:
        return f"reproduced ({of[3:]})"
    if opposite:
        which = f" ({'; '.join(names[i] for i in opposite)})" if names else ""
        if n == 1:
            return f"contradicted: significantly opposite{which}"
        return (f"contradicted: {len(opposite)} {of} significantly opposite{which}, "
                f"{reproduced} reproduced")
    if reproduced:
        return f"partly reproduced: {reproduced} {of} reproduced, none opposite"
    if n == 1:
        return "not shown: not significant (1 comparison)"
    return f"not shown: none {of} significant"


def claim_summary(table: pd.DataFrame) -> list[str]:
    """One line per claim (per claim and test set when the table has several), by
    :func:`summarise`."""
    if table.empty:
        return []
    several = table[["pair", "test set"]].drop_duplicates().shape[0] > 1
    lines = []
    for (claim, pair, testset), rows in table.groupby(["claim", "pair", "test set"],
                                                      sort=False):
        tested = rows[~rows["verdict"].str.startswith("not tested")]
        names = [f"{a} vs {b}" for a, b in zip(tested["A"], tested["B"], strict=True)]
        where = f" on {pair} {testset}" if several else ""
        overall = summarise(list(tested["verdict"]), names)
        lines.append(f"{claim}{where}: {overall}.")
    return lines


def paper_form_exceptions() -> list[str]:
    """The paper's own Table 10 cells where its automatic CRR and DRR do not follow claim
    (e): ``"GLAT distilled en-de (CRR 1.3, DRR 2.4)"``."""
    found = []
    for pair in ("en-zh", "zh-en", "en-de", "de-en"):
        for data in NAT_DATA:
            for model, expect in FORMS.items():
                row = f"{pair}/{data}/{model}"
                crr = papers.lookup(PAPER, "Table 10", row, "crr")
                drr = papers.lookup(PAPER, "Table 10", row, "drr")
                if crr is not None and drr is not None and np.sign(drr - crr) != expect:
                    found.append(f"{SYSTEM_LABELS[model]} {data} {pair} "
                                 f"(CRR {crr:.1f}, DRR {drr:.1f})")
    return found


def table_notes(frame: pd.DataFrame, samples: int, seed: int, judge: bool = True,
                alpha: float = resample.ALPHA) -> list[str]:
    """The notes under the claims table: method, family, rules, training runs, sources."""
    tested = frame[frame["p (Holm)"].notna()] if not frame.empty else frame
    sizes = sorted({len(rows) for _, rows in tested.groupby(["pair", "test set"])})
    family = (f" ({' or '.join(str(s) for s in sizes)} comparisons a family here)"
              if sizes else "")
    exceptions = paper_form_exceptions()
    notes = [
        f"A - B and its 95% interval: paired sentence bootstrap ({samples:,} resamples, seed "
        f"{seed}), one resample weight matrix drawn per test set and used by every comparison "
        "on it, for both sides (claim (e): one system's DRR against its own CRR on the same "
        "resampled sentences). p is two-sided, from the centred bootstrap distribution of "
        f"A - B; the smallest p {samples:,} resamples can give is {1 / (samples + 1):.4f}.",
        "p (Holm): Holm's adjustment over the family of every comparison tested on one pair "
        f"and test set{family}: each test set is its own replication (the paper reports each "
        "pair separately) and is summarised on its own below; one family for the whole table "
        "would multiply its size by the number of test sets until no bootstrap p could pass.",
        f"Verdict, from the Holm-adjusted p: reproduced = below {alpha} in the claimed "
        f"direction; opposite = below {alpha} the other way; otherwise not significant. A "
        "claim (per test set) is reproduced when all its comparisons are reproduced, "
        "contradicted when at least one is opposite (named), partly reproduced when some are "
        "reproduced and none is opposite, not shown when none is significant.",
        "Training runs: one per system (one seed). The intervals and p cover the variation "
        "between test sentences only, not between training runs: another seed can move a "
        "model by more than its interval, and a difference between two systems may be one of "
        "runs rather than of methods.",
        "Paper A/B: the paper's number of the same pair, model and training data, at its "
        "scale (WMT20 data, transformer-base, 300k updates, batch size 480K, presumably "
        "tokens): Table 5 "
        "for BLEU, Table 10 (Appendix D) for CRR and, in claim (e), DRR.",
        *(f"({letter}) in the paper: {source}." for letter, source in SOURCES.items()),
    ]
    if exceptions:
        notes.append(
            "Claim (e) rests on the human annotation: the paper's own automatic CRR and DRR "
            "(Table 10), which this table computes, do not follow it in "
            f"{len(exceptions)} cells: {'; '.join(exceptions)}.")
    if not judge:
        notes.append(
            "Not judged: the models of this run are smoke-scale (trained a few updates; "
            "nat.judge_claims is false), so their differences are noise, not evidence for or "
            "against the paper; the numbers are shown to check the pipeline only.")
    return notes


def _claims_command(args: argparse.Namespace) -> int:
    judge = not args.smoke_scale
    frame = claims_table(args.scores, samples=args.samples, seed=args.seed, judge=judge)
    notes = [*table_notes(frame, args.samples, args.seed, judge), *args.note,
             *claim_summary(frame)]
    write_table(frame, args.md, args.csv,
                "The NAT paper's claims on this run: paired tests", notes)
    return 0


def register_cli(tree) -> None:
    from phenomt.core.cliargs import positive_int
    from phenomt.nat.tables import parse_score_pair

    p = tree.add("table nat-claims",
                 "The NAT paper's claims (a)-(e) tested on this run's systems (paired bootstrap, "
                 "Holm-adjusted per test set)",
                 _claims_command)
    p.add_argument("--scores", nargs="+", required=True, type=parse_score_pair,
                   metavar="BLEU_JSON=REDUNDANCY_JSON",
                   help="score records of every system, with per-sentence statistics")
    p.add_argument("--samples", type=positive_int, default=resample.DEFAULT_SAMPLES)
    p.add_argument("--seed", type=positive_int, default=resample.DEFAULT_SEED)
    p.add_argument("--smoke-scale", action="store_true",
                   help="the models trained only a few updates: no verdicts (the verdict "
                        f"column says {NOT_JUDGED!r})")
    p.add_argument("--note", action="append", default=[], help="a note under the table")
    p.add_argument("--md", required=True)
    p.add_argument("--csv", required=True)
