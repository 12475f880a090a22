"""The intervals of the given-systems records and tables (phenomt.systems.intervals): percentile
bootstrap intervals clipped to the score's range, flagged with a reason when they miss the
score; hand-worked cases."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from phenomt.cli import build_parser
from phenomt.core.metrics import base as base_module
from phenomt.core.metrics import resample
from phenomt.core.metrics.redundancy import score_sentences
from phenomt.systems import intervals, scores

WORDS = ["time", "market", "river", "light", "table", "garden", "window", "summer", "letter",
         "music", "bridge", "mountain", "doctor", "village", "morning", "house", "road"]


def _corpus(n: int) -> list[str]:
    """``n`` distinct references of eight words."""
    return [" ".join(WORDS[(i * k + k) % len(WORDS)] for k in range(1, 9)) + " ."
            for i in range(n)]


def _keep(line: str, words: int) -> str:
    """The first ``words`` words of a line, the rest replaced by one repeated word."""
    tokens = line.split()
    return " ".join(tokens[:words] + ["thing"] * (len(tokens) - words))


def run(*argv: object) -> int:
    args = build_parser(["phenomt.systems.cli"]).parse_args([str(a) for a in argv])
    return int(args.handler(args) or 0)


# --------------------------------------------------------------------------- by hand

def test_an_interval_wholly_above_the_score_is_flagged():
    # resampled scores whose 2.5th percentile (12) lies above the score (10): at least 97.5%
    # of them are above it
    found = intervals.checked_interval(10.0, 12.0, 15.0, bounds=(0.0, 100.0), samples=1000)
    assert found == {"ci_low": 12.0, "ci_high": 15.0, "ci_contains_score": False,
                     "ci_reason": "interval does not contain the score: at least 97.5% of the "
                                  "1000 resampled scores lie above it (a skewed bootstrap "
                                  "distribution)"}
    below = intervals.checked_interval(0.5, 0.1, 0.4, bounds=(0.0, 1.0), samples=200)
    assert below["ci_contains_score"] is False and "lie below it" in below["ci_reason"]
    # with a handful of resamples their number is the reason
    few = intervals.checked_interval(33.54, 33.64, 33.64, bounds=(0.0, 100.0), samples=1)
    assert few["ci_reason"] == "interval does not contain the score: only 1 resample"
    assert intervals.reason(1.0, 2.0, 3.0, 20, 0.95).endswith("only 20 resamples")


def test_a_sacrebleu_form_interval_that_misses_its_score_names_its_centre():
    # 30 resampled scores of 0 and 970 of 10: mean 9.7, 95% range [0, 10], so sacreBLEU's
    # interval is 9.7 -+ 5 = [4.7, 14.7]; a score of 4 lies below it although only 97.0% of
    # the resamples lie above 4, so the percentile interval's reason would be false here
    values = np.array([0.0] * 30 + [10.0] * 970)
    low, high = resample.interval_of(values, "sacrebleu")
    assert (low, high) == pytest.approx((4.7, 14.7))
    found = intervals.checked_interval(4.0, low, high, bounds=(0.0, 100.0), samples=1000,
                                       method="sacrebleu")
    assert found["ci_contains_score"] is False
    assert found["ci_reason"] == ("interval does not contain the score: sacreBLEU's interval "
                                  "is centred on the mean of the 1000 resampled scores, which "
                                  "lies above it (a skewed bootstrap distribution)")
    assert "97.5%" not in found["ci_reason"]


def test_intervals_are_clipped_to_the_score_range():
    # sacreBLEU's mean ± half-width of the 1 MB-line case, clipped: BLEU is at least 0
    found = intervals.checked_interval(0.62, -4.68, 30.59, bounds=(0.0, 100.0), samples=1000)
    assert (found["ci_low"], found["ci_high"]) == (0.0, 30.59)
    assert found["ci_contains_score"] is True and found["ci_reason"] is None
    # TER has no upper bound; a ratio none above 1; both bounds outside the range collapse
    ter = intervals.checked_interval(150.0, -1.0, 250.0, bounds=(0.0, None), samples=1000)
    assert (ter["ci_low"], ter["ci_high"]) == (0.0, 250.0)
    ratio = intervals.checked_interval(1.0, 1.2, 1.5, bounds=(0.0, 1.0), samples=1000)
    assert (ratio["ci_low"], ratio["ci_high"], ratio["ci_contains_score"]) == (1.0, 1.0, True)


def test_rounding_is_not_a_miss_and_no_interval_is_no_verdict():
    # a bootstrap of identical sentences: bounds equal to the score up to float rounding
    assert intervals.checked_interval(1 / 3, 0.3333333333333333, 1 / 3 + 1e-15,
                                      bounds=(0.0, 1.0), samples=10)["ci_contains_score"]
    none = intervals.checked_interval(0.5, None, None, bounds=(0.0, 1.0), samples=10)
    assert none == {"ci_low": None, "ci_high": None, "ci_contains_score": None,
                    "ci_reason": None}
    nan = intervals.checked_interval(0.5, float("nan"), 0.6, bounds=(0.0, 1.0), samples=10)
    assert nan["ci_low"] is None and nan["ci_contains_score"] is None


def test_cells_and_notes():
    entry = {"ci_contains_score": False, "ci_reason": "interval does not contain the score: "
                                                       "only 1 resample"}
    assert intervals.mark("33.54 [33.64, 33.64]", entry) == "33.54 [33.64, 33.64] ‡"
    assert intervals.mark("1.00 [0.50, 2.00]", {"ci_contains_score": True}) == \
        "1.00 [0.50, 2.00]"
    assert intervals.mark(None, entry) is None
    assert intervals.notes([("t A BLEU", entry["ci_reason"]), ("t B BLEU", entry["ci_reason"]),
                            ("t A CRR", "interval does not contain the score: x")]) == [
        "‡ Interval does not contain the score: only 1 resample: t A BLEU, t B BLEU.",
        "‡ Interval does not contain the score: x: t A CRR."]


# --------------------------------------------------------------------------- the resampling

def test_one_resample_above_the_ratio_gives_the_flag():
    # two sentences: one of ratio 1/1, one of 0/1; the pooled ratio is 1/2. One resample of
    # two draws is AA (1), AB (1/2) or BB (0); seed 11 draws both times the first sentence,
    # so the resampled distribution (one score, 1) lies wholly above 1/2.
    stats = np.array([[1.0, 1.0], [0.0, 1.0]])
    assert (resample.resample_weights(2, samples=1, seed=11) == [[2, 0]]).all()
    found = resample.bootstrap(stats, resample.ratio(0, 1), samples=1, seed=11)
    assert (found.value, found.low, found.high) == (0.5, 1.0, 1.0)
    checked = intervals.checked_interval(found.value, found.low, found.high,
                                         bounds=(0.0, 1.0), samples=1)
    assert checked["ci_contains_score"] is False
    assert checked["ci_reason"] == "interval does not contain the score: only 1 resample"


def test_bleu_with_one_resample_says_why_its_interval_misses_the_score():
    # the `--samples 1` case: BLEU 33.54 [33.64, 33.64] printed without a word
    refs = _corpus(40)
    hyps = [_keep(line, 3 + i % 5) for i, line in enumerate(refs)]
    found = scores.significance(hyps, refs, samples=1, seed=1, metrics=("bleu", "chrf"))
    for entry in found.values():
        assert entry["ci_low"] == entry["ci_high"] != pytest.approx(entry["score"])
        assert entry["ci_contains_score"] is False
        assert entry["ci_reason"] == "interval does not contain the score: only 1 resample"
    many = scores.significance(hyps, refs, samples=500, seed=1, metrics=("bleu", "chrf"))
    for entry in many.values():
        assert entry["ci_low"] < entry["score"] < entry["ci_high"]
        assert entry["ci_contains_score"] is True and entry["ci_reason"] is None


def test_bleu_interval_stays_in_range_with_a_1mb_hypothesis_line():
    # One hypothesis line of 500,000 tokens: the corpus BLEU is near 0, but a resample that
    # misses the line (about 1 in e) scores some 45, so sacreBLEU's mean ± half-width went
    # below 0 (here 19.69 ± 29.37). The percentile interval stays within 0-100 and holds
    # the score.
    refs = _corpus(20)
    hyps = [_keep(line, 6) for line in refs]
    hyps[7] = "a " * 500_000
    found = scores.significance(hyps, refs, samples=1000, seed=12345, metrics=("bleu",))
    bleu = found["bleu"]
    assert bleu["score"] < 0.1
    assert 0.0 <= bleu["ci_low"] <= bleu["score"] <= bleu["ci_high"] <= 100.0
    assert bleu["ci_high"] > 40 and bleu["ci_contains_score"] is True
    assert "mean" not in bleu and "ci_halfwidth" not in bleu


def test_the_interval_is_the_registered_metric_percentile_bootstrap():
    refs = _corpus(30)
    hyps = [_keep(line, 2 + i % 6) for i, line in enumerate(refs)]
    found = scores.significance(hyps, refs, samples=300, seed=5, metrics=("bleu", "ter"))
    from phenomt.core.metrics import base

    for key in ("bleu", "ter"):
        metric = base.get(key)
        expected = resample.bootstrap(metric.statistics(hyps, refs), metric.score,
                                      samples=300, seed=5)
        assert found[key]["score"] == pytest.approx(expected.value)
        assert (found[key]["ci_low"], found[key]["ci_high"]) == (expected.low, expected.high)


@pytest.mark.parametrize("test", ["bs", "ar"])
def test_the_test_signature_names_every_setting_of_the_test(test):
    refs = _corpus(12)
    hyps, base = [_keep(line, 5) for line in refs], [_keep(line, 3) for line in refs]
    found = scores.significance(hyps, refs, base, test=test, samples=50, ci_samples=40,
                                seed=9)
    for key in ("bleu", "chrf"):
        settings = "|bs:40" if test == "ar" else ""
        assert found[key]["test_signature"] == (f"{found[key]['signature']}|test:{test}|"
                                                f"{test}:50{settings}|ci:percentile|seed:9")
    assert found["bleu"]["p_value"] is not None


def test_the_paired_tests_come_from_the_one_engine():
    """bs: the paired bootstrap of the registry's statistics on the test set's resamples;
    ar: paired approximate randomization of the same statistics."""
    refs = _corpus(12)
    hyps, base = [_keep(line, 5) for line in refs], [_keep(line, 3) for line in refs]
    metric = base_module.get("bleu")
    a, b = metric.statistics(hyps, refs), metric.statistics(base, refs)
    found = scores.significance(hyps, refs, base, test="bs", samples=60, seed=4)
    assert found["bleu"]["p_value"] == resample.paired_bootstrap(a, b, metric.score,
                                                                 samples=60, seed=4).p
    found = scores.significance(hyps, refs, base, test="ar", samples=60, seed=4)
    assert found["bleu"]["p_value"] == resample.paired_randomization(a, b, metric.score,
                                                                     trials=60, seed=4)


def test_sacrebleu_interval_form_is_an_option_centred_on_the_resamples_mean():
    refs = _corpus(12)
    hyps = [_keep(line, 4) for line in refs]
    metric = base_module.get("bleu")
    engine = resample.Resampler(len(refs), 200, 3)
    _, values = engine.resampled(metric.score, metric.statistics(hyps, refs))
    found = scores.significance(hyps, refs, samples=200, seed=3, interval="sacrebleu",
                                metrics=("bleu",))["bleu"]
    low, high = resample.interval_of(values, "sacrebleu")
    assert (found["ci_low"], found["ci_high"]) == pytest.approx((max(low, 0), min(high, 100)))
    assert (low + high) / 2 == pytest.approx(values.mean())


def test_redundancy_intervals_carry_the_flag():
    # one sentence with a repeat (CRR 1/2), one without: pooled CRR 1/4 over two resampled
    # sentences; a single resample drawing the first sentence twice (seed 11, above) scores 1/2
    results = score_sentences([["a", "a", "b"], ["c", "d", "e"]], [["x"], ["y"]],
                              [["a", "b"], ["c", "d", "e"]])
    found = scores.bootstrap_ratios(results, samples=1, seed=11)
    assert found["crr"] == pytest.approx(0.25) and found["crr_ci"] == [0.5, 0.5]
    assert found["crr_ci_contains_score"] is False
    assert found["crr_ci_reason"] == "interval does not contain the score: only 1 resample"
    many = scores.bootstrap_ratios(results, samples=200, seed=4)
    assert many["crr_ci"][0] <= many["crr"] <= many["crr_ci"][1]
    assert many["crr_ci_contains_score"] is True
    assert many["redundancy_ci"][0] >= 0.0 and many["redundancy_ci"][1] <= 1.0


# --------------------------------------------------------------------------- tables

def test_systems_bleu_table_marks_and_explains_a_missed_interval(tmp_path):
    refs = _corpus(40)
    ref = tmp_path / "ref.en"
    ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
    hyp = tmp_path / "mine.en"
    hyp.write_text("\n".join(_keep(line, 3 + i % 5) for i, line in enumerate(refs)) + "\n",
                   encoding="utf-8")
    record = tmp_path / "mine.json"
    assert run("systems", "score", "--testset", "toy", "--system", "mine", "--hyp", hyp,
               "--ref", ref, "--target-lang", "en", "--samples", "1", "--seed", "1",
               "--output", record) == 0
    saved = json.loads(record.read_text(encoding="utf-8"))
    assert saved["subsets"]["all"]["bleu"]["ci_contains_score"] is False
    assert "percentile" in saved["test"]["interval"]
    md, out = tmp_path / "t.md", tmp_path / "t.csv"
    assert run("table", "systems-bleu", "--scores", record, "--md", md, "--csv", out) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["BLEU [95% CI]"].endswith(" ‡") and row["chrF [95% CI]"].endswith(" ‡")
    text = md.read_text(encoding="utf-8")
    assert ("‡ Interval does not contain the score: only 1 resample: toy mine BLEU (all "
            "lines), toy mine chrF (all lines).") in text
    assert "percentile intervals of a sentence bootstrap (1 resamples, seed 1)" in text


def test_figures_draw_an_interval_that_misses_its_value(tmp_path):
    # matplotlib refuses negative error bars: the part of the interval on the far side of the
    # value is drawn, from the value
    from phenomt.core.figures import Score, parse_score
    from phenomt.systems.figures import REDUNDANCY_COLUMN, draw_redundancy

    assert parse_score("33.54 [33.64, 33.64] ‡").errors == pytest.approx((0.0, 0.1))
    assert Score(5.0, 1.0, 4.0).errors == (4.0, 0.0) and Score(5.0).errors == (0.0, 0.0)
    rows = [{"test set": "t", "system": "A", "kind": "", "lines": "all",
             REDUNDANCY_COLUMN: "12.00 [13.00, 14.00] ‡"},
            {"test set": "t", "system": "B", "kind": "", "lines": "all",
             REDUNDANCY_COLUMN: "10.00 [9.00, 11.00]"}]
    figure = draw_redundancy(rows)
    figure.savefig(tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 0
