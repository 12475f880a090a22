"""The locality claims table's statistics: the clustered and two-level bootstraps against the
naive one, Holm's family, the equivalence tests, directions taken from each test's own
difference, smoke scale, and what the plan hands the table. Hand-made data whose answers
follow by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from phenomt.cli import build_parser
from phenomt.core.metrics import resample
from phenomt.core.metrics.base import get, score_record
from phenomt.core.nmt import fairseq_options
from phenomt.ldd import locality_claims
from phenomt.plan import Plan
from phenomt.plan.config import load_config

ROOT = Path(__file__).resolve().parents[1]
REFS = [f"a small dog number {i} runs on the green grass" for i in range(20)]
GOOD = REFS
BAD = [f"a dog {i} is running in grass" for i in range(20)]
SAMPLES = 200
CORRECT = resample.ratio(0, 1)  # share of correct words: column 0 over column 1


# --------------------------------------------------------------------------- resampling

def _accuracy_rows(correct: list[int], words: int = 10) -> np.ndarray:
    return np.array([[c, words] for c in correct], dtype=np.float64)


def _width(comparison: resample.Comparison) -> float:
    return comparison.high - comparison.low


def test_clustered_interval_is_wider_than_the_naive_one():
    """Three seeds that translate every sentence alike (within-sentence correlation 1): the
    stacked rows hold no more information than one seed's. The cluster bootstrap gives
    exactly the interval of one seed's rows; resampling the 120 rows independently
    counts them as 120 sentences and narrows the interval by about sqrt(3)."""
    rng = np.random.default_rng(7)
    n, k = 40, 3
    a = _accuracy_rows(list(rng.integers(3, 11, n)))
    b = _accuracy_rows(list(rng.integers(0, 8, n)))
    tests = locality_claims.run_tests([0.0] * k, [0.0] * k, [a] * k, [b] * k, CORRECT,
                                      samples=1000, seed=3)
    clustered = tests.by_sentence
    naive = resample.paired_bootstrap(np.vstack([a] * k), np.vstack([b] * k), CORRECT,
                                      samples=1000, seed=3)
    assert clustered.difference == pytest.approx(naive.difference)
    one_seed = resample.paired_test(a, b, CORRECT,
                                    resample.cluster_weights(np.arange(n), 1000, 3))
    assert (clustered.low, clustered.high) == pytest.approx((one_seed.low, one_seed.high))
    assert _width(clustered) > 1.4 * _width(naive)
    assert 1.4 < _width(clustered) / _width(naive) < 2.1  # about sqrt(3) = 1.73


def test_sentence_clusters_are_the_source_sentences():
    assert list(locality_claims.sentence_clusters(3, 2)) == [0, 1, 0, 1, 0, 1]
    weights = resample.cluster_weights(locality_claims.sentence_clusters(3, 4), 50, 1)
    # every resample gives all seeds' rows of a sentence the same count
    assert (weights[:, :4] == weights[:, 4:8]).all() and (weights[:, :4] == weights[:, 8:]).all()
    assert (weights[:, :4].sum(axis=1) == 4).all()


def test_two_level_interval_covers_the_seeds_too():
    """Seeds that disagree (A ahead by 3, 1 and -1 correct words of 10 on every sentence):
    the cluster bootstrap holds the three trained models fixed, so its interval is a point;
    the seeds x sentences bootstrap also draws the seeds and spreads."""
    n = 30
    b = _accuracy_rows([5] * n)
    a = [_accuracy_rows([8] * n), _accuracy_rows([6] * n), _accuracy_rows([4] * n)]
    tests = locality_claims.run_tests([0.8, 0.6, 0.4], [0.5] * 3, a, [b] * 3, CORRECT,
                                      samples=SAMPLES, seed=2)
    assert tests.by_sentence.difference == pytest.approx(0.1)
    assert _width(tests.by_sentence) == pytest.approx(0.0)
    assert tests.both is not None and _width(tests.both) > 0.1
    # the two-level draws stay within the seeds' range: -0.1 .. +0.3
    assert tests.both.low >= -0.1 - 1e-9 and tests.both.high <= 0.3 + 1e-9
    # one seed: no seed level to draw, no seed test
    single = locality_claims.run_tests([0.8], [0.5], a[:1], [b], CORRECT, samples=SAMPLES)
    assert single.both is None and single.by_seed.p is None


def test_equivalence_tests_of_a_no_change_claim():
    """A - B = +0.2 on every seed, the sentences alike: inside ±1.18 over sentences (the
    bootstrap never leaves 0.2) and over seeds (no spread: p = 0)."""
    n = 20
    a, b = _accuracy_rows([7] * n), _accuracy_rows([5] * n)
    tests = locality_claims.run_tests([10.2, 11.2, 12.2], [10.0, 11.0, 12.0], [a] * 3,
                                      [b] * 3, CORRECT, samples=SAMPLES, margin=1.18)
    assert tests.equivalence_sentences.p == pytest.approx(1 / (SAMPLES + 1))
    assert tests.equivalence_seeds.p == 0.0
    # a margin smaller than the difference: both sides' p of the sentences are 1
    far = locality_claims.run_tests([10.2, 11.2, 12.2], [10.0, 11.0, 12.0], [a] * 3, [b] * 3,
                                    CORRECT, samples=SAMPLES, margin=0.1)
    assert far.equivalence_sentences.p == 1.0 and far.equivalence_seeds.p == 1.0
    # loss claims get no equivalence test
    loss = locality_claims.run_tests([1.0, 2.0], [0.0, 0.5], [a] * 2, [b] * 2, CORRECT,
                                     samples=SAMPLES)
    assert loss.equivalence_seeds is None and loss.equivalence_sentences is None


def test_the_margin_is_the_papers_sinusoidal_drop():
    # Table 1: SinePEs REGULAR 25.08, PERMUTED 23.90 (-1.18)
    assert locality_claims.paper_margin() == pytest.approx(1.18)


# --------------------------------------------------------------------------- the table

def _record(tmp_path: Path, arch: str, pos_emb: str, setting: str, seed: int,
            hyps: list[str], score: float | None = None) -> str:
    """A ``phenomt score bleu --samples`` record of one locality run; ``score`` replaces
    its corpus BLEU (the per-seed number the seed test reads)."""
    record = score_record(get("bleu"), hyps, REFS, samples=50,
                          meta={"arch": arch, "pos_emb": pos_emb, "setting": setting,
                                "seed": str(seed)})
    if score is not None:
        record["score"] = score
    path = tmp_path / f"{arch}.{pos_emb}.{setting}.s{seed}.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return str(path)


def _rows(table) -> dict[str, dict]:
    return {row["claim"]: row for row in table.to_dict("records")}


LSTM = "BiLSTM (bidirectional encoder) loses BLEU on PERMUTED source"
SINUSOIDAL = "sinusoidal positions lose BLEU on PERMUTED source"
PERMUTED = "learned positions: PERMUTED as good as REGULAR"
REVERSED = "learned positions: REVERSED as good as REGULAR"
PERPOSEMB = "learned positions: PERPOSEMB as good as REGULAR"


def _every_claim(tmp_path: Path) -> list[str]:
    """Three seeds of every setting, each seed translating alike. LSTM: PERMUTED worse on
    every sentence. Sinusoidal: the same outputs (no loss). Learned positions, REGULAR good
    on the second half of the sentences only: PERMUTED the same outputs; REVERSED bad on
    every sentence; PERPOSEMB good on the first half only, so that it is better on half the
    sentences and worse on the other half: a difference of 0 whose interval is wide."""
    half_b = BAD[:10] + GOOD[10:]
    half_a = GOOD[:10] + BAD[10:]
    paths = []
    for seed in (1, 2, 3):
        paths += [
            _record(tmp_path, "lstm", "none", "regular", seed, GOOD),
            _record(tmp_path, "lstm", "none", "permuted", seed, BAD),
            _record(tmp_path, "transformer", "sinusoidal", "regular", seed, GOOD),
            _record(tmp_path, "transformer", "sinusoidal", "permuted", seed, GOOD),
            _record(tmp_path, "transformer", "learned", "regular", seed, half_b),
            _record(tmp_path, "transformer", "learned", "permuted", seed, half_b),
            _record(tmp_path, "transformer", "learned", "reversed", seed, BAD),
            _record(tmp_path, "transformer", "learned", "perposemb", seed, half_a)]
    return paths


#: Resamples of the tables with every claim: a family of 16 p-values needs the floor p
#: 1/(samples + 1) times up to 16 below 0.05.
FAMILY_SAMPLES = 1000


def test_holm_family_and_verdicts_of_every_path(tmp_path):
    table = locality_claims.claims_table(_every_claim(tmp_path), samples=FAMILY_SAMPLES,
                                         lstm_encoder="bidirectional")
    rows = _rows(table)
    assert list(rows) == [LSTM, SINUSOIDAL, PERMUTED, REVERSED, PERPOSEMB]
    # 2 loss claims x 2 tests + 3 no-change claims x 4 tests = 16 p-values in one family
    raw = [(claim, column, float(row[column])) for claim, row in rows.items()
           for column, _ in locality_claims.P_COLUMNS if row[column] is not None]
    assert len(raw) == 16
    adjusted = resample.holm([p for _, _, p in raw])
    for (claim, column, _), p in zip(raw, adjusted, strict=True):
        assert float(rows[claim][dict(locality_claims.P_COLUMNS)[column]]) == \
            pytest.approx(p, abs=1e-4)
    # the LSTM: p seeds 0 (the same loss on every seed) stays 0; p sentences, the floor
    # 1/1001, is multiplied by at most 16
    lstm = rows[LSTM]
    assert lstm["p seeds (Holm)"] == "0.0000" and lstm["verdict"] == "reproduced"
    assert float(lstm["p sentences"]) == pytest.approx(1 / 1001, abs=1e-4)
    assert 1 / 1001 < float(lstm["p sentences (Holm)"]) <= 16 / 1001
    # sinusoidal: the same outputs, no loss in either test
    assert rows[SINUSOIDAL]["verdict"] == "not significant"
    assert rows[SINUSOIDAL]["p seeds"] == "1.0000"
    assert rows[PERMUTED]["verdict"] == "equivalent within ±1.18"
    assert rows[REVERSED]["verdict"] == "differs"
    # PERPOSEMB: neither a difference nor an equivalence shown (a no-change claim is not
    # reproduced by a test failing to reject)
    perposemb = rows[PERPOSEMB]
    assert perposemb["verdict"] == "not shown"
    assert float(perposemb["p sentences (Holm)"]) >= 0.05
    assert float(perposemb["p equiv. sentences (Holm)"]) >= 0.05
    low, high = perposemb["Δ over sentences [95% CI]"].split("[")[1].rstrip("]").split(", ")
    assert float(low) < -1.18 or float(high) > 1.18
    # every row says how many runs each system had
    assert set(table["runs A / B"]) == {"3 / 3"} and set(table["sentences"]) == {"20"}
    assert all(cell is not None for cell in table["Δ seeds × sentences [95% CI]"])


def test_each_test_takes_its_own_direction(tmp_path):
    """The per-seed BLEU of the records says PERMUTED is above REGULAR on every seed (by 5, 6
    and 7: t = 10.4, p = 0.009), while its sentences are worse everywhere: the two tests
    disagree, and the verdict says so instead of reading both in the sentence test's
    direction (which would make it "reproduced")."""
    paths = []
    for seed, (up, base) in zip((1, 2, 3), ((25.0, 20.0), (27.0, 21.0), (29.0, 22.0)),
                                strict=True):
        paths += [_record(tmp_path, "lstm", "none", "regular", seed, GOOD, score=base),
                  _record(tmp_path, "lstm", "none", "permuted", seed, BAD, score=up)]
    lstm = _rows(locality_claims.claims_table(paths, samples=SAMPLES))[
        "LSTM (encoder direction not stated) loses BLEU on PERMUTED source"]
    assert lstm["Δ over seeds"] == "+6.00" and lstm["Δ over sentences [95% CI]"][0] == "-"
    assert float(lstm["p seeds (Holm)"]) < 0.05 and float(lstm["p sentences (Holm)"]) < 0.05
    assert lstm["verdict"] == "conflicting"
    # the seeds up but not significantly (+3, -1, +1): the sentences alone find the loss
    paths = []
    for seed, (up, base) in zip((1, 2, 3), ((23.0, 20.0), (20.0, 21.0), (23.0, 22.0)),
                                strict=True):
        paths += [_record(tmp_path, "lstm", "none", "regular", seed, GOOD, score=base),
                  _record(tmp_path, "lstm", "none", "permuted", seed, BAD, score=up)]
    lstm = _rows(locality_claims.claims_table(paths, samples=SAMPLES,
                                              lstm_encoder="unidirectional"))[
        "LSTM (unidirectional encoder) loses BLEU on PERMUTED source"]
    assert lstm["Δ over seeds"] == "+1.00"
    assert lstm["verdict"] == "mixed: loss over sentences only"


def test_one_seed_has_no_seed_test(tmp_path):
    paths = [_record(tmp_path, "lstm", "none", "regular", 1, GOOD),
             _record(tmp_path, "lstm", "none", "permuted", 1, BAD),
             _record(tmp_path, "transformer", "learned", "regular", 1, GOOD),
             _record(tmp_path, "transformer", "learned", "permuted", 1, GOOD)]
    rows = _rows(locality_claims.claims_table(paths, samples=SAMPLES,
                                              lstm_encoder="bidirectional"))
    lstm, learned = rows[LSTM], rows[PERMUTED]
    assert lstm["p seeds"] is None and lstm["Δ seeds × sentences [95% CI]"] is None
    assert lstm["verdict"] == "mixed: loss over sentences only (one training run: no seed test)"
    # equivalence over sentences is shown, over seeds it cannot be: not shown
    assert learned["p equiv. seeds"] is None and learned["verdict"] == "not shown"
    assert float(learned["p equiv. sentences (Holm)"]) < 0.05


def test_smoke_scale_gives_no_verdicts(tmp_path):
    table = locality_claims.claims_table(_every_claim(tmp_path), samples=SAMPLES,
                                         judge=False)
    assert set(table["verdict"]) == {"not judged: smoke scale"}
    # the tests are still computed and shown
    assert table["p sentences (Holm)"].notna().all()


def test_claims_command(tmp_path):
    """The command as the rule calls it, with the plan's arguments: notes say what each
    interval covers, the family, the margin and the scale."""
    scores = _every_claim(tmp_path)
    md, csv = tmp_path / "claims.md", tmp_path / "claims.csv"

    def run(*extra: str) -> str:
        argv = ["table", "locality-claims", "--scores", *scores, "--samples",
                str(FAMILY_SAMPLES),
                "--seed", "1", *extra, "--note", "Scale: 20 updates per run.", "--md",
                str(md), "--csv", str(csv)]
        args = build_parser(modules=("phenomt.ldd.locality_claims",)).parse_args(argv)
        assert int(args.handler(args) or 0) == 0
        return md.read_text(encoding="utf-8")

    text = run("--lstm-encoder", "bidirectional")
    assert "| BiLSTM (bidirectional encoder) loses BLEU on PERMUTED source |" in text
    assert "clustered by source sentence" in text and "Holm: the 16 p-values" in text
    assert "Runs A / B: the training runs (seeds) of each system" in text
    assert "|A - B| < 1.18 BLEU" in text and "not judged" not in text
    assert "- Scale: 20 updates per run." in text
    smoke = run("--lstm-encoder", "bidirectional", "--smoke-scale")
    assert smoke.count("not judged: smoke scale") == 5 and "Not judged: the locality" in smoke
    csv_text = csv.read_text(encoding="utf-8")
    assert "p sentences (Holm)" in csv_text.splitlines()[0]
    wide = run("--margin", "2.5")
    assert "|A - B| < 2.50 BLEU" in wide and "equivalent within ±2.50" in wide
    assert "Margin: set for this table (--margin)" in wide
    assert "Margin: the paper's own effect" in text
    with pytest.raises(SystemExit):
        run("--margin", "0")


# --------------------------------------------------------------------------- the plan

@pytest.mark.parametrize("config, smoke", [
    ("config/config.yaml", True), (".test/config/tiny.yaml", True),
    ("config/findings.yaml", False), ("config/papers/choshen_abend.yaml", False)])
def test_the_plan_says_scale_and_encoder(config, smoke):
    plan = Plan(load_config(ROOT / config))
    args = plan.locality.claims_args()
    assert ("--smoke-scale" in args) == smoke
    assert "--lstm-encoder bidirectional" in args
    lstm = next(r for r in plan.locality.runs() if ".lstm." in r)
    assert "--encoder-bidirectional" in fairseq_options(plan.locality.train_options(lstm))


def test_judge_claims_follows_the_top_level_scale_when_unset():
    config = load_config(ROOT / "config" / "findings.yaml")
    for scale, judged in (("smoke", False), ("findings", True), ("paper", True), (None, False)):
        config["scale"], config["locality"]["judge_claims"] = scale, None
        assert Plan(config).locality.judge_claims is judged
    config["locality"]["judge_claims"] = True
    config["scale"] = "smoke"
    assert Plan(config).locality.judge_claims  # an explicit setting wins
    del config["locality"]["lstm"]["encoder_bidirectional"]
    assert "--lstm-encoder unidirectional" in Plan(config).locality.claims_args()
