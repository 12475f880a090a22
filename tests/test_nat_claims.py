"""The NAT claims table (phenomt.nat.claims): Holm-adjusted verdicts worked by hand, the claim
summary's rule, claim (e) (DRR against CRR of one system), shared resamples per test set,
smoke-scale tables without verdicts, and the plan's switch for them."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from phenomt.cli import main as cli_main
from phenomt.core.io import InputError
from phenomt.core.metrics import resample
from phenomt.core.metrics.base import get, score_record
from phenomt.core.metrics.redundancy import measure_score
from phenomt.nat import claims
from phenomt.plan import Plan, load_config, validate_config
from tests.conftest import ROOT

SENTENCES = 20
REFS = [f"a small dog number {i} runs on the green grass" for i in range(SENTENCES)]
BAD = [f"a dog {i} is running in grass" for i in range(SENTENCES)]
NOT_JUDGED = "not judged: smoke scale"


def _system(tmp_path, system: str, rows, hyps=REFS, testset: str = "t",
            direction: str = "de-en") -> tuple[str, str]:
    """BLEU and redundancy records of one system, as `phenomt score bleu|redundancy
    --samples N` write them; ``rows``: per-sentence (continuous, discontinuous, |Y| - 1)."""
    rows = [list(map(int, r)) for r in rows]
    bleu = score_record(get("bleu"), list(hyps), REFS, samples=50,
                        meta={"direction": direction, "testset": testset, "system": system})
    redundancy = {"crr": 0.0, "drr": 0.0, "sentences": len(rows),
                  "statistics": {"columns": ["continuous", "discontinuous", "denominator"],
                                 "rows": rows}}
    stem = tmp_path / f"{direction}.{testset}.{system}"
    bleu_path, red_path = f"{stem}.bleu.json", f"{stem}.red.json"
    with open(bleu_path, "w", encoding="utf-8") as out:
        json.dump(bleu, out)
    with open(red_path, "w", encoding="utf-8") as out:
        json.dump(redundancy, out)
    return bleu_path, red_path


def _constant(continuous: int, discontinuous: int) -> list[list[int]]:
    # every sentence alike, |Y| - 1 = 10: a difference with no spread, p at its floor
    return [[continuous, discontinuous, 10]] * SENTENCES


def _rows(table, claim: str) -> list[dict]:
    return [r for r in table.to_dict("records") if r["claim"] == claim]


# ------------------------------------------------------------------ Holm and verdicts by hand

def test_holm_adjusted_verdicts_by_hand():
    # raw p 0.01, 0.04, 0.03, 0.005 (m = 4). Ascending: 0.005 x 4 = 0.02; 0.01 x 3 = 0.03;
    # 0.03 x 2 = 0.06; 0.04 x 1 = 0.04, raised to the running maximum 0.06.
    raw = [0.01, 0.04, 0.03, 0.005]
    adjusted = resample.holm(raw)
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # claimed A < B (expect -1) for all four; the differences' signs:
    differences = [-2.0, -1.0, +3.0, +1.5]
    verdicts = [claims.verdict(d, p, -1) for d, p in zip(differences, adjusted, strict=True)]
    # 0.04 would pass unadjusted: after Holm it does not; 0.005 the other way: opposite
    assert verdicts == ["reproduced", "not significant", "not significant", "opposite"]
    # unadjusted the second and third would have been reproduced and opposite
    assert [claims.verdict(d, p, -1) for d, p in zip(differences, raw, strict=True)] == [
        "reproduced", "reproduced", "opposite", "opposite"]


@pytest.mark.parametrize("verdicts, expected", [
    (["reproduced"] * 4, "reproduced (4 comparisons)"),
    (["reproduced"], "reproduced (1 comparison)"),
    # one opposite among four: contradicted, and said which, not silently "not reproduced"
    (["reproduced", "reproduced", "opposite", "reproduced"],
     "contradicted: 1 of 4 comparisons significantly opposite (c), 3 reproduced"),
    (["reproduced", "not significant", "reproduced", "not significant"],
     "partly reproduced: 2 of 4 comparisons reproduced, none opposite"),
    (["not significant", "not significant"], "not shown: none of 2 comparisons significant"),
    (["not significant"], "not shown: not significant (1 comparison)"),
    (["opposite"], "contradicted: significantly opposite (a)"),
    ([NOT_JUDGED, NOT_JUDGED], NOT_JUDGED),
    ([], "not tested in this run"),
])
def test_claim_summary_rule(verdicts, expected):
    assert claims.summarise(verdicts, ["a", "b", "c", "d"][:len(verdicts)]) == expected


# ------------------------------------------------------------------ the table end to end

def _five_models(tmp_path, testset="t", direction="de-en"):
    """Raw-data systems of all five models on one test set, every sentence alike with
    |Y| - 1 = 100 (so every difference is exact, with no spread, and its p at the floor
    1/(resamples + 1)). CRR/DRR in %: CMLM 40/2, CMLM+OaXE 10/3, GLAT 5/3, GLAT+OaXE 1/3,
    DAT 2/6. DAT (2%) is below CMLM, CMLM+OaXE and GLAT but above GLAT+OaXE (1%): one
    opposite. A family of 12 tested comparisons: (b) 2, (c) 5, (e) 5.
    """
    specs = {"cmlm.raw": (40, 2), "cmlm_oaxe.raw": (10, 3), "glat.raw": (5, 3),
             "glat_oaxe.raw": (1, 3), "dat.raw": (2, 6)}
    return [_system(tmp_path, system, [[crr, drr, 100]] * SENTENCES, testset=testset,
                    direction=direction)
            for system, (crr, drr) in specs.items()]


def test_one_opposite_comparison_contradicts_the_claim_and_is_named(tmp_path):
    table = claims.claims_table(_five_models(tmp_path), samples=1000, seed=3)
    lowest = _rows(table, "(c) DAT lowest CRR (raw)")
    assert [(r["B"], r["verdict"]) for r in lowest] == [
        ("CMLM raw", "reproduced"), ("CMLM+OaXE raw", "reproduced"),
        ("GLAT raw", "reproduced"), ("GLAT+OaXE raw", "opposite")]
    summary = claims.claim_summary(table)
    assert ("(c) DAT lowest CRR (raw): contradicted: 1 of 4 comparisons significantly "
            "opposite (DAT raw vs GLAT+OaXE raw), 3 reproduced.") in summary
    # no distilled system: the distilled half of the claim is listed as not tested
    assert "(c) DAT lowest CRR (distilled): not tested in this run." in summary


def test_claim_e_rows(tmp_path):
    table = claims.claims_table(_five_models(tmp_path), samples=1000, seed=3)
    rows = _rows(table, "(e) redundancy mainly discontinuous for DAT, continuous for the "
                        "others (raw)")
    by_model = {r["A"]: r for r in rows}
    assert list(by_model) == ["CMLM raw DRR", "CMLM+OaXE raw DRR", "GLAT raw DRR",
                              "GLAT+OaXE raw DRR", "DAT raw DRR"]
    dat = by_model["DAT raw DRR"]
    assert dat["B"] == "DAT raw CRR" and dat["measure"] == "DRR vs CRR (%)"
    # DAT: DRR 6% against CRR 2%, the same sentences resampled for both
    assert (dat["A score"], dat["B score"]) == ("6.00", "2.00")
    assert dat["A - B [95% CI]"] == "4.00 [4.00, 4.00]"
    # p at the floor of 1,000 resamples; Holm over the family of 12 at that floor
    assert (dat["p"], dat["p (Holm)"]) == (f"{1 / 1001:.4f}", f"{12 / 1001:.4f}")
    assert dat["verdict"] == "reproduced"
    # the paper's Table 10, De->En raw DAT: CRR 0.0, DRR 3.8
    assert (dat["paper A"], dat["paper B"]) == ("3.8", "0.0")
    # CMLM 2 vs 40, CMLM+OaXE 3 vs 10, GLAT 3 vs 5: continuous, reproduced
    for name in ("CMLM raw DRR", "CMLM+OaXE raw DRR", "GLAT raw DRR"):
        assert by_model[name]["verdict"] == "reproduced", name
    # GLAT+OaXE: DRR 3 > CRR 1, against the claim
    assert by_model["GLAT+OaXE raw DRR"]["verdict"] == "opposite"
    assert by_model["GLAT+OaXE raw DRR"]["paper A"] == "2.8"  # DRR 2.8 > CRR 2.4 there too
    summary = claims.claim_summary(table)
    assert ("(e) redundancy mainly discontinuous for DAT, continuous for the others (raw): "
            "contradicted: 1 of 5 comparisons significantly opposite (GLAT+OaXE raw DRR vs "
            "GLAT+OaXE raw CRR), 4 reproduced.") in summary
    # distilled: no system, not tested
    distilled = _rows(table, "(e) redundancy mainly discontinuous for DAT, continuous for the "
                             "others (distilled)")
    assert distilled[0]["verdict"] == "not tested: no CMLM distilled in this run"


def test_claim_e_needs_every_sentence_of_the_system_itself(tmp_path):
    # a comparison of a system with itself is paired on the same resampled sentences: a
    # system whose DRR equals its CRR on every sentence has no difference at all (p = 1)
    rows = [[i % 3, i % 3, 10] for i in range(SENTENCES)]
    pairs = [_system(tmp_path, "dat.raw", rows)]
    table = claims.claims_table(pairs, samples=500)
    (row,) = [r for r in table.to_dict("records") if r["A"] == "DAT raw DRR"]
    assert row["A - B [95% CI]"] == "0.00 [0.00, 0.00]"
    assert float(row["p"]) == 1.0 and row["verdict"] == "not significant"


def test_every_comparison_of_a_test_set_uses_the_same_resamples(tmp_path):
    rng = np.random.default_rng(0)
    stats = {}
    pairs = []
    for system in ("cmlm.raw", "glat.raw", "dat.raw", "cmlm.distilled"):
        rows = np.column_stack([rng.integers(0, 4, SENTENCES), rng.integers(0, 3, SENTENCES),
                                rng.integers(5, 12, SENTENCES)])
        stats[system] = rows.astype(np.float64)
        pairs.append(_system(tmp_path, system, rows.tolist()))
    samples, seed = 300, 7
    table = claims.claims_table(pairs, samples=samples, seed=seed)
    weights = resample.resample_weights(SENTENCES, samples, seed)
    crr = measure_score("crr")

    def cells(test):
        return (f"{100 * test.difference:.2f} [{100 * test.low:.2f}, {100 * test.high:.2f}]",
                f"{test.p:.4f}")

    def row(claim, a):
        (found,) = [r for r in _rows(table, claim) if r["A"] == a]
        return found["A - B [95% CI]"], found["p"]

    # (c) GLAT below CMLM and (c) DAT lowest against GLAT: two comparisons, one matrix
    glat_cmlm = resample.paired_test(stats["glat.raw"], stats["cmlm.raw"], crr, weights)
    dat_glat = resample.paired_test(stats["dat.raw"], stats["glat.raw"], crr, weights)
    assert row("(c) GLAT below CMLM in CRR (raw)", "GLAT raw") == cells(glat_cmlm)
    lowest = _rows(table, "(c) DAT lowest CRR (raw)")
    (against_glat,) = [r for r in lowest if r["B"] == "GLAT raw"]
    assert (against_glat["A - B [95% CI]"], against_glat["p"]) == cells(dat_glat)
    # (e): DAT's DRR (column 1) against its CRR (column 0) on the same resamples
    dat = stats["dat.raw"]
    form = resample.paired_test(dat[:, [1, 1, 2]], dat[:, [0, 0, 2]], crr, weights)
    assert row("(e) redundancy mainly discontinuous for DAT, continuous for the others "
               "(raw)", "DAT raw DRR") == cells(form)
    # another seed's resamples give another interval: the table did use these weights
    other = resample.paired_test(stats["glat.raw"], stats["cmlm.raw"], crr,
                                 resample.resample_weights(SENTENCES, samples, seed + 1))
    assert cells(other) != cells(glat_cmlm)
    # the Holm column is Holm's adjustment of the family's raw p (displayed to 4 decimals)
    tested = table[table["p (Holm)"].notna()]
    assert len(tested) == 9  # (a) CMLM; (c) GLAT-CMLM and DAT vs 2; (d) CMLM; (e) 3 + 1
    expected = resample.holm([float(p) for p in tested["p"]])
    assert [float(p) for p in tested["p (Holm)"]] == pytest.approx(expected, abs=2e-3)


def test_each_test_set_is_its_own_family_and_summary(tmp_path):
    pairs = _five_models(tmp_path, testset="t1")
    # a second test set with two systems only: a family of 3 comparisons ((c) DAT vs CMLM,
    # (e) CMLM, (e) DAT)
    pairs += [_system(tmp_path, "cmlm.raw", _constant(4, 0), testset="t2"),
              _system(tmp_path, "dat.raw", _constant(0, 1), testset="t2")]
    table = claims.claims_table(pairs, samples=1000, seed=3)
    t2 = table[(table["test set"] == "t2") & table["p (Holm)"].notna()]
    assert len(t2) == 3
    # every p at the floor 1/1001; Holm over 3 of them: 3/1001
    assert set(t2["p"]) == {f"{1 / 1001:.4f}"} and set(t2["p (Holm)"]) == {f"{3 / 1001:.4f}"}
    t1 = table[(table["test set"] == "t1") & table["p (Holm)"].notna()]
    assert float(t1["p (Holm)"].astype(float).max()) > 3 / 1001
    summary = claims.claim_summary(table)
    assert "(c) DAT lowest CRR (raw) on de-en t2: reproduced (1 comparison)." in summary
    assert any(line.startswith("(c) DAT lowest CRR (raw) on de-en t1: contradicted")
               for line in summary)


def test_smoke_scale_tables_give_no_verdicts(tmp_path):
    table = claims.claims_table(_five_models(tmp_path), samples=200, judge=False)
    tested = table[table["p (Holm)"].notna()]
    assert len(tested) and set(tested["verdict"]) == {NOT_JUDGED}
    # numbers are still there; untested comparisons still say so
    assert tested["A - B [95% CI]"].notna().all()
    untested = table[table["p (Holm)"].isna()]
    assert untested["verdict"].str.startswith("not tested").all()
    summary = claims.claim_summary(table)
    assert "(c) DAT lowest CRR (raw): not judged: smoke scale." in summary
    assert not any("reproduced" in line or "contradicted" in line for line in summary)


def test_the_command_writes_notes_on_family_runs_and_sources(tmp_path, capsys):
    pairs = _five_models(tmp_path)
    md, csv = tmp_path / "claims.md", tmp_path / "claims.csv"
    args = ["table", "nat-claims", "--scores", *(f"{b}={r}" for b, r in pairs),
            "--samples", "200", "--seed", "3", "--smoke-scale", "--md", str(md),
            "--csv", str(csv)]
    assert cli_main(args) == 0
    text = md.read_text(encoding="utf-8")
    assert "p (Holm)" in text
    assert NOT_JUDGED in text and "reproduced |" not in text
    assert "Training runs: one per system" in text
    assert "test sentences only, not between training runs" in text
    assert "every comparison tested on one pair and test set (12 comparisons a family here)" \
        in text
    assert "Sections 5-6" not in text and "Section 2 (Results" in text
    assert "Table 10 (Appendix D)" in text
    # the paper's own automatic numbers that do not follow claim (e) are listed
    assert "GLAT+OaXE distilled de-en (CRR 1.1, DRR 2.6)" in text
    assert "nat.judge_claims is false" in text


def test_paper_form_exceptions_by_hand():
    found = claims.paper_form_exceptions()
    # Table 10: GLAT distilled En->Zh CRR 3.5 < DRR 3.6; Zh->En 3.1 = 3.1 (no direction);
    # GLAT+OaXE distilled De->En 1.1 < 2.6; DAT is discontinuous everywhere
    assert "GLAT distilled en-zh (CRR 3.5, DRR 3.6)" in found
    assert "GLAT distilled zh-en (CRR 3.1, DRR 3.1)" in found
    assert "GLAT+OaXE distilled de-en (CRR 1.1, DRR 2.6)" in found
    assert not any(line.startswith(("DAT ", "CMLM raw", "CMLM distilled")) for line in found)


# ------------------------------------------------------------------ inputs

def test_systems_on_different_sentences_are_refused(tmp_path):
    pairs = [_system(tmp_path, "cmlm.raw", _constant(4, 0)),
             _system(tmp_path, "glat.raw", _constant(1, 0)[:10])]
    with pytest.raises(InputError, match="statistics of 10 sentences, but 20"):
        claims.claims_table(pairs, samples=100)


def test_two_records_of_one_system_are_refused(tmp_path):
    first = _system(tmp_path, "cmlm.raw", _constant(4, 0))
    (tmp_path / "again").mkdir()
    second = _system(tmp_path / "again", "cmlm.raw", _constant(3, 0))
    with pytest.raises(InputError, match="a second record of cmlm.raw"):
        claims.claims_table([first, second], samples=100)


# ------------------------------------------------------------------ the plan's switch

@pytest.fixture
def config():
    return load_config(ROOT / "config" / "config.yaml")


def _with(config, top=None, **nat):
    changed = copy.deepcopy(config)
    changed["nat"].update(nat)
    changed.update(top or {})
    return Plan(validate_config(changed))


def test_the_plan_passes_smoke_scale_from_the_config(config):
    plan = Plan(config)
    assert config["nat"]["judge_claims"] is False
    assert plan.nat.claims_args().endswith(" --smoke-scale")
    assert plan.nat.claims_args().startswith("--samples ")
    assert "--smoke-scale" not in _with(config, judge_claims=True).nat.claims_args()
    # null follows the run's scale: smoke -> no verdicts, findings or paper -> verdicts
    assert "--smoke-scale" in _with(config, judge_claims=None).nat.claims_args()
    assert "--smoke-scale" not in _with(config, {"scale": "findings"},
                                        judge_claims=None).nat.claims_args()


@pytest.mark.parametrize("path, judged", [
    ("config/config.yaml", False), (".test/config/tiny.yaml", False),
    ("config/findings.yaml", True), ("config/papers/wang_nat.yaml", True)])
def test_configs_say_whether_claims_are_judged(path, judged):
    config = load_config(ROOT / path)
    assert config["nat"]["judge_claims"] is judged
    assert Plan(config).nat.judge_claims is judged
