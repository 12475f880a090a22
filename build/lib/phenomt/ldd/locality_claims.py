"""Choshen & Abend's locality-bias claims (Section 3.2 and Table 1) tested on this run's models.

The paper (Section 3.2, on Table 1): the BiLSTM (Nematus) and the Transformer with sinusoidal
positions lose BLEU when the source tokens are permuted; with learned positions BLEU is
"essentially the same" for PERMUTED, REVERSED and PERPOSEMB as for REGULAR (the settings are
defined in Section 3.1, PERPOSEMB in its footnote 3). Each claim compares one setting (A) with
REGULAR (B) of the same architecture and positions. Every run translates the same held-out
source sentences (the split depends on ``locality.split_seed`` only), so the tests pair seed i
of A with seed i of B and, within it, sentence j with sentence j.

Tests of a claim:

- over seeds (training runs): Student's paired t-test of the per-seed BLEU;
- over sentences (the main sentence-level test): a paired *cluster* bootstrap of corpus BLEU
  on the outputs of all seeds stacked. A source sentence appears once per seed, and its
  translations by the different seeds are correlated (the same sentence is easy or hard for
  every model), so the resampling unit is the source sentence with all its seeds' rows
  (:func:`resample.cluster_weights`, the sentence index as the cluster label). Resampling the
  stacked rows independently would count k seeds' rows of one sentence as k independent
  sentences and give too narrow an interval. This test holds the trained models fixed: the
  variation between training runs is the seed test's part;
- seeds x sentences, shown for reading, not a test: a two-level bootstrap over seeds and
  sentences (:func:`resample.hierarchical_weights`), whose interval covers both sources. With
  the handful of seeds a run trains (3 in ``config/findings.yaml``: 10 distinct draws of the
  seed level) its seed level is too coarse to test with, and the t-test already covers it;
- no-change claims also get two one-sided tests (TOST) of |A - B| < ``margin`` BLEU, over
  seeds (:func:`resample.seed_equivalence`) and over sentences on the cluster bootstrap's
  resampled differences (:func:`resample.bootstrap_equivalence`).

Every p-value that can decide a verdict (two per loss claim, four per no-change claim) is one
family: Holm's adjustment runs over all of them (:func:`resample.holm`), and the verdicts read
the adjusted p-values (:func:`verdict`). The margin is the paper's own effect: the drop of the
sinusoidal Transformer on PERMUTED source (Table 1: 25.08 -> 23.90, -1.18 BLEU), the smallest
change the paper reads as a locality bias; a change smaller than that is what "essentially the
same" has to mean here. A run of smoke-scale models (``locality.judge_claims`` false:
``--smoke-scale``) is not judged. Score records need their per-sentence statistics
(``--samples N``).
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
#: The verdict of every claim of a run whose models trained a few updates.
NOT_JUDGED = "not judged: smoke scale"
#: The LSTM runs' encoder, as the config trained it (fairseq's ``--encoder-bidirectional``).
ENCODERS = ("bidirectional", "unidirectional")
#: What the LSTM claim's model is called, by the encoder that was trained.
LSTM_LABELS = {"bidirectional": "BiLSTM (bidirectional encoder)",
               "unidirectional": "LSTM (unidirectional encoder)",
               None: "LSTM (encoder direction not stated)"}
#: Table 1's sinusoidal PERMUTED - REGULAR (25.08 -> 23.90), if the paper table lacks it.
PAPER_SINUSOIDAL_DROP = 1.18


def paper_margin() -> float:
    """The equivalence margin of the no-change claims: the size of the paper's smallest
    reported locality effect, sinusoidal positions on PERMUTED source (Table 1)."""
    delta = papers.lookup(PAPER, "Table 1", "transformer/sinusoidal/permuted", "delta")
    return abs(delta) if delta is not None else PAPER_SINUSOIDAL_DROP


@dataclass(frozen=True)
class LocalityClaim:
    """Setting ``a`` against REGULAR for one architecture and positional embedding;
    ``expect``: -1 for a loss, 0 for no change; ``source``: where the paper says it."""

    claim: str
    arch: str
    pos_emb: str
    setting: str
    expect: int
    source: str

    def key(self, setting: str) -> tuple[str, str, str]:
        return (self.arch, self.pos_emb, setting)

    def text(self, lstm_encoder: str | None = None) -> str:
        """The claim, naming the LSTM as it was trained."""
        return self.claim.format(lstm=LSTM_LABELS[lstm_encoder])


CLAIMS = (
    LocalityClaim("{lstm} loses BLEU on PERMUTED source", "lstm", "none", "permuted", -1,
                  "Section 3.2, Table 1 (Nematus BiLSTM)"),
    LocalityClaim("sinusoidal positions lose BLEU on PERMUTED source", "transformer",
                  "sinusoidal", "permuted", -1, "Section 3.2, Table 1"),
    LocalityClaim("learned positions: PERMUTED as good as REGULAR", "transformer", "learned",
                  "permuted", 0, "Section 3.2, Table 1"),
    LocalityClaim("learned positions: REVERSED as good as REGULAR", "transformer", "learned",
                  "reversed", 0, "Section 3.2, Table 1"),
    LocalityClaim("learned positions: PERPOSEMB as good as REGULAR", "transformer", "learned",
                  "perposemb", 0, "Section 3.2, Table 1; Section 3.1, footnote 3"),
)


@dataclass(frozen=True)
class Evidence:
    """One level of a claim's tests (over seeds or over sentences): its own difference A - B
    and its p-values, adjusted for the table's family of tests. ``p``: the two-sided test of
    no difference; ``p_equivalence``: the two one-sided tests of |A - B| < margin (no-change
    claims). ``None``: not tested (one seed has no seed test)."""

    difference: float
    p: float | None
    p_equivalence: float | None = None

    def significant(self, alpha: float) -> bool:
        return self.p is not None and self.p < alpha

    def equivalent(self, alpha: float) -> bool:
        return self.p_equivalence is not None and self.p_equivalence < alpha


def verdict(expect: int, seeds: Evidence, sentences: Evidence, *, margin: float,
            alpha: float = resample.ALPHA, judge: bool = True) -> str:
    """The verdict of one claim from its adjusted tests; each test's direction is the sign of
    its own difference.

    Loss claims (``expect`` -1): *reproduced* when both tests find A below B; *opposite* when
    a test finds A above B and none below; *conflicting* when one finds it below and the other
    above; *mixed: loss over seeds/sentences only* when one finds the loss and the other
    nothing (with one seed there is no seed test); *not significant* otherwise.
    No-change claims (``expect`` 0): *equivalent within ±margin* when both TOSTs show the
    difference inside the margin; else *differs* when a difference test rejects; else *not
    shown*. Failing to find a difference never reproduces a no-change claim. Smoke-scale
    models (``judge`` false) are *not judged*."""
    if not judge:
        return NOT_JUDGED
    levels = {"seeds": seeds, "sentences": sentences}
    if expect == 0:
        if all(level.equivalent(alpha) for level in levels.values()):
            return f"equivalent within ±{margin:.2f}"
        if any(level.significant(alpha) for level in levels.values()):
            return "differs"
        return "not shown"
    found = [name for name, level in levels.items()
             if level.significant(alpha) and np.sign(level.difference) == np.sign(expect)]
    against = [name for name, level in levels.items()
               if level.significant(alpha) and np.sign(level.difference) == -np.sign(expect)]
    if found and against:
        return "conflicting"
    if against:
        return "opposite"
    if len(found) == 2:
        return "reproduced"
    if found:
        missing = " (one training run: no seed test)" if seeds.p is None else ""
        return f"mixed: loss over {found[0]} only{missing}"
    return "not significant"


# --------------------------------------------------------------------------- the tests

@dataclass(frozen=True)
class ClaimTests:
    """The raw tests of one claim on its paired seeds."""

    seeds: int
    sentences: int
    by_seed: resample.SeedTest
    by_sentence: resample.Comparison
    both: resample.Comparison | None
    equivalence_seeds: resample.Equivalence | None
    equivalence_sentences: resample.Equivalence | None


def sentence_clusters(seeds: int, sentences: int) -> np.ndarray:
    """The cluster label of every row of ``seeds`` stacked outputs of the same
    ``sentences``: the source sentence's index (row ``g * sentences + j`` is sentence j)."""
    return np.tile(np.arange(sentences), seeds)


def run_tests(bleu_a: Sequence[float], bleu_b: Sequence[float],
              stats_a: Sequence[np.ndarray], stats_b: Sequence[np.ndarray],
              score: resample.Score, *, samples: int = resample.DEFAULT_SAMPLES,
              seed: int = resample.DEFAULT_SEED, margin: float | None = None) -> ClaimTests:
    """The tests of one claim: per-seed BLEU and per-sentence statistics of A and B, seed by
    seed in the same order; ``margin``: also the equivalence tests (no-change claims)."""
    k, n = len(stats_a), len(stats_a[0])
    stacked_a, stacked_b = np.vstack(stats_a), np.vstack(stats_b)
    by_seed = resample.paired_seed_test(bleu_a, bleu_b)
    clustered = resample.cluster_weights(sentence_clusters(k, n), samples, seed)
    by_sentence = resample.paired_test(stacked_a, stacked_b, score, clustered)
    both = None
    if k > 1:
        both = resample.paired_test(stacked_a, stacked_b, score,
                                    resample.hierarchical_weights(k, n, samples, seed))
    eq_seeds = eq_sentences = None
    if margin is not None:
        eq_seeds = resample.seed_equivalence(bleu_a, bleu_b, margin) if k > 1 else None
        eq_sentences = resample.bootstrap_equivalence(by_sentence, margin)
    return ClaimTests(k, n, by_seed, by_sentence, both, eq_seeds, eq_sentences)


def _runs(paths: Sequence[str | Path]) -> dict[tuple[str, str, str], dict[int, tuple]]:
    """(arch, pos_emb, setting) -> seed -> (BLEU, per-sentence statistics, signature)."""
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


def _mean_std(values: Sequence[float]) -> str:
    if len(values) < 2:
        return format_number(values[0]) if values else "—"
    return f"{np.mean(values):.2f} ± {np.std(values, ddof=1):.2f}"


def _p(value: float | None) -> str | None:
    return None if value is None else f"{value:.4f}"


#: The p-value columns of the table: (raw column, Holm column).
P_COLUMNS = (("p seeds", "p seeds (Holm)"), ("p sentences", "p sentences (Holm)"),
             ("p equiv. seeds", "p equiv. seeds (Holm)"),
             ("p equiv. sentences", "p equiv. sentences (Holm)"))


COLUMNS = ("claim", "paper", "A", "B", "runs A / B", "paired seeds", "sentences",
           "A BLEU (mean ± std)", "B BLEU (mean ± std)", "Δ over seeds", "p seeds",
           "p seeds (Holm)", "Δ over sentences [95% CI]", "p sentences", "p sentences (Holm)",
           "Δ seeds × sentences [95% CI]", "p equiv. seeds", "p equiv. seeds (Holm)",
           "p equiv. sentences", "p equiv. sentences (Holm)", "verdict", "paper Δ",
           "BLEU signature")


def claims_table(paths: Sequence[str | Path], *, samples: int = resample.DEFAULT_SAMPLES,
                 seed: int = resample.DEFAULT_SEED, alpha: float = resample.ALPHA,
                 margin: float | None = None, judge: bool = True,
                 lstm_encoder: str | None = None) -> pd.DataFrame:
    """One row per claim; a claim whose two settings have no seed in common in this run is
    listed as not tested. ``margin``: the equivalence margin (default :func:`paper_margin`);
    ``judge`` false (smoke-scale models): no verdicts; ``lstm_encoder``: how the LSTM was
    trained (:data:`ENCODERS`, ``None``: not stated)."""
    margin = paper_margin() if margin is None else margin
    runs = _runs(paths)
    rows: list[dict[str, Any]] = []
    family: list[tuple[int, str, float | None]] = []  # (row, raw column, p)
    directions: list[tuple[int, LocalityClaim, float, float]] = []
    for claim in CLAIMS:
        a, b = runs.get(claim.key(claim.setting), {}), runs.get(claim.key("regular"), {})
        seeds = sorted(set(a) & set(b))
        row: dict[str, Any] = dict.fromkeys(COLUMNS)
        row.update({
            "claim": claim.text(lstm_encoder), "paper": claim.source,
            "A": claim.setting.upper(), "B": "REGULAR", "runs A / B": f"{len(a)} / {len(b)}",
            "paired seeds": len(seeds)})
        if not seeds:
            missing = [f"{setting.upper()} ({claim.arch}, {claim.pos_emb} positions)"
                       for setting, found in ((claim.setting, a), ("regular", b)) if not found]
            row["verdict"] = "not tested: no run of " + (
                " or ".join(missing) or "both with a common seed")
            rows.append(row)
            continue
        for s in seeds:
            if a[s][1].shape != b[s][1].shape:
                raise InputError(", ".join(map(str, paths)),
                                 f"seed {s}: {len(a[s][1])} sentences in {claim.setting} but "
                                 f"{len(b[s][1])} in regular")
        signatures = {a[s][2] for s in seeds} | {b[s][2] for s in seeds}
        if len(signatures) > 1:
            raise InputError(", ".join(map(str, paths)),
                             f"{claim.setting} and regular ({claim.arch}, {claim.pos_emb}) "
                             f"are scored with different BLEU settings: {sorted(signatures)}")
        signature = signatures.pop()
        tests = run_tests([a[s][0] for s in seeds], [b[s][0] for s in seeds],
                          [a[s][1] for s in seeds], [b[s][1] for s in seeds],
                          bleu_score_of(signature), samples=samples, seed=seed,
                          margin=margin if claim.expect == 0 else None)
        index = len(rows)
        pvalues = [("p seeds", tests.by_seed.p), ("p sentences", tests.by_sentence.p)]
        if claim.expect == 0:
            pvalues += [("p equiv. seeds", None if tests.equivalence_seeds is None
                         else tests.equivalence_seeds.p),
                        ("p equiv. sentences", tests.equivalence_sentences.p)]
        family += [(index, column, p) for column, p in pvalues]
        both = tests.both
        paper_delta = papers.lookup(PAPER, "Table 1", "/".join(claim.key(claim.setting)),
                                    "delta")
        row.update({
            "sentences": str(tests.sentences),
            "A BLEU (mean ± std)": _mean_std([a[s][0] for s in seeds]),
            "B BLEU (mean ± std)": _mean_std([b[s][0] for s in seeds]),
            "Δ over seeds": f"{tests.by_seed.difference:+.2f}",
            "Δ over sentences [95% CI]": interval_cell(
                tests.by_sentence.difference, tests.by_sentence.low, tests.by_sentence.high),
            "Δ seeds × sentences [95% CI]": None if both is None else interval_cell(
                both.difference, both.low, both.high),
            **{column: _p(p) for column, p in pvalues},
            "paper Δ": "—" if paper_delta is None else f"{paper_delta:+.2f}",
            "BLEU signature": signature,
        })
        rows.append(row)
        directions.append((index, claim, tests.by_seed.difference,
                           tests.by_sentence.difference))
    adjusted = resample.holm([p for _, _, p in family])
    holm_column = dict(P_COLUMNS)
    for (index, column, _), p in zip(family, adjusted, strict=True):
        rows[index][holm_column[column]] = _p(p)
    found = {(index, column): p for (index, column, _), p in zip(family, adjusted, strict=True)}
    for index, claim, seed_difference, sentence_difference in directions:
        seeds_level = Evidence(seed_difference, found.get((index, "p seeds")),
                               found.get((index, "p equiv. seeds")))
        sentences_level = Evidence(sentence_difference, found.get((index, "p sentences")),
                                   found.get((index, "p equiv. sentences")))
        rows[index]["verdict"] = verdict(claim.expect, seeds_level, sentences_level,
                                         margin=margin, alpha=alpha, judge=judge)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def claims_notes(table: pd.DataFrame, *, samples: int, seed: int, margin: float,
                 judge: bool = True, lstm_encoder: str | None = None) -> list[str]:
    """What the table's tests are, what its intervals cover, its verdict rules and scale."""
    tested = table[table["paired seeds"] > 0]
    tests = int(tested[[raw for raw, _ in P_COLUMNS]].notna().sum().sum())
    sentences = sorted({int(n) for n in tested["sentences"]}) if len(tested) else []
    n = " or ".join(f"{s:,}" for s in sentences) or "the"
    paper = paper_margin()
    margin_source = (
        "Margin: the paper's own effect, the sinusoidal PERMUTED - REGULAR drop (Table 1: "
        "25.08 -> 23.90), the smallest BLEU change it reads as a locality bias (Section 3.2)."
        if np.isclose(margin, paper) else
        f"Margin: set for this table (--margin); the paper's smallest locality effect is "
        f"{paper:.2f} (Table 1, sinusoidal PERMUTED - REGULAR).")
    encoder = {
        "bidirectional": "The LSTM runs: fairseq's lstm with a bidirectional encoder "
                         "(--encoder-bidirectional), a BiLSTM as in the paper (Nematus).",
        "unidirectional": "The LSTM runs: fairseq's lstm with a unidirectional encoder "
                          "(no --encoder-bidirectional), unlike the paper's BiLSTM (Nematus).",
        None: "The LSTM runs' encoder direction is not stated (--lstm-encoder).",
    }[lstm_encoder]
    return [
        f"A against REGULAR of the same architecture and positions, on the same {n} held-out "
        "source sentences. Runs A / B: the training runs (seeds) of each system in this run; "
        "the tests pair seed i of A with seed i of B (paired seeds). BLEU mean ± std: over "
        "the paired training runs.",
        "Over seeds: Student's paired t-test of per-seed BLEU (paired seeds - 1 degrees of "
        "freedom: weak with 3 seeds); its Δ is the mean of the per-seed differences. It "
        "covers the variation between training runs.",
        f"Over sentences (the main sentence-level test): paired bootstrap of corpus BLEU on the "
        f"outputs of all paired seeds stacked, resampling source sentences with all their "
        f"seeds' translations together (cluster bootstrap, {samples:,} resamples, seed {seed}); "
        "its 95% interval covers the variation between test sentences, clustered by source "
        "sentence, the trained models held fixed.",
        "Seeds × sentences: a two-level bootstrap drawing the paired seeds, then the "
        "sentences; its 95% interval covers training seeds and test sentences together. "
        "Shown for reading, not a test: with a few seeds its seed level has few distinct "
        "draws (10 with 3 seeds).",
        f"Equivalence (no-change claims): two one-sided tests of |A - B| < {margin:.2f} BLEU, "
        "over seeds (paired t) and over sentences (on the cluster bootstrap's resampled "
        f"differences). {margin_source}",
        f"Holm: the {tests} p-values that can decide a verdict (seeds and sentences for every "
        "claim, and the two equivalence tests of no-change claims) are one family; the "
        "verdicts read the adjusted p (α = 0.05).",
        "Verdicts, loss claims: reproduced when both tests find A below REGULAR; mixed when "
        "one does and the other finds nothing; opposite when a test finds A above; "
        "conflicting when the two find opposite directions (each test's direction is its own "
        "Δ); not significant otherwise. No-change claims: equivalent within ±margin when both "
        "equivalence tests show it; differs when a difference test rejects and equivalence "
        "is not shown; not shown otherwise. No claim is reproduced by a test failing to "
        "reject.",
        encoder,
        "Paper Δ: Choshen & Abend Table 1 (German-English, WMT2015 training sentences of the "
        "most common length, 18; 1,000 held-out test sentences). Learned positions: REGULAR "
        "and PERMUTED 5 runs each, REVERSED and PERPOSEMB 1; the BiLSTM and sinusoidal rows 1 "
        "run each (Section 3.1): the paper's Δ has no interval.",
        *([] if judge else [
            "Not judged: the locality models of this run are smoke-scale (trained a few "
            "updates; locality.judge_claims is false), so their differences are noise, not "
            "evidence for or against the paper; the numbers only check the pipeline."]),
    ]


def _claims_command(args: argparse.Namespace) -> int:
    margin = paper_margin() if args.margin is None else args.margin
    judge = not args.smoke_scale
    frame = claims_table(args.scores, samples=args.samples, seed=args.seed, margin=margin,
                         judge=judge, lstm_encoder=args.lstm_encoder)
    notes = [*claims_notes(frame, samples=args.samples, seed=args.seed, margin=margin,
                           judge=judge, lstm_encoder=args.lstm_encoder), *args.note]
    write_table(frame, args.md, args.csv,
                "Locality bias (Choshen & Abend Section 3.2, Table 1): the paper's claims, "
                "paired tests", notes)
    return 0


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def register_cli(tree: Any) -> None:
    from phenomt.core.cliargs import positive_int

    p = tree.add("table locality-claims",
                 "The locality-bias claims tested over seeds and sentences", _claims_command)
    p.add_argument("--scores", nargs="+", required=True,
                   help="phenomt score bleu --samples records of every locality run")
    p.add_argument("--samples", type=positive_int, default=resample.DEFAULT_SAMPLES)
    p.add_argument("--seed", type=positive_int, default=resample.DEFAULT_SEED)
    p.add_argument("--smoke-scale", action="store_true",
                   help="the models trained only a few updates: no verdicts (the verdict "
                        f"column says {NOT_JUDGED!r})")
    p.add_argument("--lstm-encoder", choices=ENCODERS, default=None,
                   help="the LSTM runs' encoder as trained (names the LSTM claim's model)")
    p.add_argument("--margin", type=_positive_float, default=None,
                   help="equivalence margin of the no-change claims, BLEU (default: the "
                        "paper's sinusoidal PERMUTED drop, Table 1, 1.18)")
    p.add_argument("--note", action="append", default=[], help="a note under the table")
    p.add_argument("--md", required=True)
    p.add_argument("--csv", required=True)
