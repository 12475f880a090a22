"""The claims tables (NAT claims a-d, locality claims): hand-made score records whose verdicts
follow by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phenomt.core.io import InputError
from phenomt.core.metrics import resample
from phenomt.core.metrics.base import get, score_record
from phenomt.ldd import locality_claims
from phenomt.nat import claims

SIGNATURE = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
REFS = [f"a small dog number {i} runs on the green grass" for i in range(20)]
GOOD = REFS
BAD = [f"a dog {i} is running in grass" for i in range(20)]


def _bleu_record(tmp_path, name: str, hyps: list[str], **meta) -> dict:
    hyp, ref = tmp_path / f"{name}.hyp", tmp_path / "ref"
    hyp.write_text("\n".join(hyps) + "\n", encoding="utf-8")
    ref.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    # as `phenomt score bleu --samples 50 --meta KEY=VALUE ...` writes it
    return score_record(get("bleu"), hyps, REFS, samples=50,
                        meta={key: str(value) for key, value in meta.items()})


def _write(tmp_path, name: str, record: dict) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return str(path)


def _nat_pair(tmp_path, system: str, hyps: list[str], continuous: int) -> tuple[str, str]:
    bleu = _bleu_record(tmp_path, system, hyps, direction="de-en", testset="t", system=system)
    # every sentence: `continuous` continuous pairs of |Y| - 1 = 4, no discontinuous one
    redundancy = {"crr": continuous / 4, "drr": 0.0, "sentences": 20,
                  "statistics": {"rows": [[continuous, 0, 4]] * 20}}
    return _write(tmp_path, f"{system}.bleu", bleu), _write(tmp_path, f"{system}.red", redundancy)


def test_the_claims_of_the_models_a_run_trained():
    # CMLM and GLAT only: (a) for both, (c) GLAT vs CMLM on both data, (d) for both;
    # nothing of OaXE or DAT.
    found = claims.paper_claims(["cmlm", "glat"])
    assert [(c.a, c.b, c.measure) for c in found] == [
        ("cmlm.distilled", "cmlm.raw", "crr"), ("glat.distilled", "glat.raw", "crr"),
        ("glat.raw", "cmlm.raw", "crr"), ("glat.distilled", "cmlm.distilled", "crr"),
        ("cmlm.distilled", "cmlm.raw", "bleu"), ("glat.distilled", "glat.raw", "bleu")]
    every = claims.paper_claims(["cmlm", "cmlm_oaxe", "glat", "glat_oaxe", "dat"])
    # DAT against the four other models, on raw and distilled data
    assert sum(c.claim.startswith("(c) DAT lowest") for c in every) == 8
    assert sum(c.claim.startswith("(b)") for c in every) == 4


def test_nat_claims_table_verdicts(tmp_path):
    pairs = [
        # CMLM: distillation removes the one repeat of every sentence and fixes BLEU
        _nat_pair(tmp_path, "cmlm.raw", BAD, 1), _nat_pair(tmp_path, "cmlm.distilled", GOOD, 0),
        # GLAT: raw and distilled outputs alike
        _nat_pair(tmp_path, "glat.raw", GOOD, 1), _nat_pair(tmp_path, "glat.distilled", GOOD, 1),
    ]
    # one family of 10 tested comparisons (claims a, c, d and e): the floor p of 1,000
    # resamples, 1/1001, times 10 stays below 0.05
    table = claims.claims_table(pairs, samples=1000)
    verdicts = {(row["claim"], row["A"], row["B"]): row["verdict"]
                for row in table.to_dict("records")}
    assert verdicts[("(a) distillation lowers CRR (CMLM)", "CMLM distilled", "CMLM raw")] \
        == "reproduced"
    assert verdicts[("(a) distillation lowers CRR (GLAT)", "GLAT distilled", "GLAT raw")] \
        == "not significant"
    # GLAT raw (25%) against CMLM raw (25%): equal; distilled GLAT 25% above CMLM's 0%
    assert verdicts[("(c) GLAT below CMLM in CRR (raw)", "GLAT raw", "CMLM raw")] \
        == "not significant"
    assert verdicts[("(c) GLAT below CMLM in CRR (distilled)", "GLAT distilled",
                     "CMLM distilled")] == "opposite"
    assert verdicts[("(d) distillation raises BLEU (CMLM)", "CMLM distilled", "CMLM raw")] \
        == "reproduced"
    row = table[table["claim"] == "(a) distillation lowers CRR (CMLM)"].iloc[0]
    assert (row["A score"], row["B score"]) == ("0.00", "25.00")
    assert row["A - B [95% CI]"] == "-25.00 [-25.00, -25.00]"
    assert float(row["p"]) == pytest.approx(1 / 1001, abs=1e-4)
    assert float(row["p (Holm)"]) == pytest.approx(10 / 1001, abs=1e-4)
    # the paper's Table 10 CRR of CMLM on raw De->En data stands beside ours
    assert row["paper B"] is not None
    # a comparison of models the run did not train is listed, not dropped
    assert verdicts[("(b) OaXE lowers CRR (CMLM, raw)", "CMLM+OaXE raw", "CMLM raw")] \
        == "not tested: no CMLM+OaXE raw in this run"
    summary = claims.claim_summary(table)
    assert "(b) OaXE lowers CRR (GLAT, raw): not tested in this run." in summary
    assert "(a) distillation lowers CRR (CMLM): reproduced (1 comparison)." in summary
    assert ("(c) GLAT below CMLM in CRR (distilled): contradicted: significantly opposite "
            "(GLAT distilled vs CMLM distilled)." in summary)
    assert "(a) distillation lowers CRR (GLAT): not shown: not significant (1 comparison)." \
        in summary


def test_nat_claims_need_sentence_statistics(tmp_path):
    bleu, red = _nat_pair(tmp_path, "cmlm.raw", BAD, 1)
    bleu2, red2 = _nat_pair(tmp_path, "cmlm.distilled", GOOD, 0)
    path = Path(red2)
    record = json.loads(path.read_text(encoding="utf-8"))
    del record["statistics"]
    path.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(InputError, match="--samples"):
        claims.claims_table([(bleu, red), (bleu2, red2)])


def _locality(tmp_path, arch, pos_emb, setting, seed, hyps) -> str:
    record = _bleu_record(tmp_path, f"{arch}.{pos_emb}.{setting}.{seed}", hyps, arch=arch,
                          pos_emb=pos_emb, setting=setting, seed=seed)
    return _write(tmp_path, f"{arch}.{pos_emb}.{setting}.s{seed}", record)


def test_locality_claims_table(tmp_path):
    paths = []
    for seed in (1, 2, 3):
        # LSTM: permuted worse on every seed; learned positions: identical outputs
        paths += [_locality(tmp_path, "lstm", "none", "regular", seed, GOOD),
                  _locality(tmp_path, "lstm", "none", "permuted", seed, BAD),
                  _locality(tmp_path, "transformer", "learned", "regular", seed, GOOD),
                  _locality(tmp_path, "transformer", "learned", "permuted", seed, GOOD)]
    table = locality_claims.claims_table(paths, samples=200, lstm_encoder="bidirectional")
    rows = {row["claim"]: row for row in table.to_dict("records")}
    assert rows["sinusoidal positions lose BLEU on PERMUTED source"]["verdict"] == (
        "not tested: no run of PERMUTED (transformer, sinusoidal positions) or REGULAR "
        "(transformer, sinusoidal positions)")
    assert rows["learned positions: PERPOSEMB as good as REGULAR"]["verdict"] == (
        "not tested: no run of PERPOSEMB (transformer, learned positions)")
    # the claim names the LSTM as it was trained
    lstm = rows["BiLSTM (bidirectional encoder) loses BLEU on PERMUTED source"]
    assert lstm["paired seeds"] == 3 and lstm["runs A / B"] == "3 / 3"
    assert lstm["B BLEU (mean ± std)"] == "100.00 ± 0.00" and lstm["sentences"] == "20"
    # the same loss on every seed: infinite t, p = 0; every resample loses too
    assert lstm["p seeds"] == "0.0000"
    assert float(lstm["p sentences"]) == pytest.approx(1 / 201, abs=1e-4)
    # Holm over the 6 tests of the table (2 of the loss claim, 4 of the no-change claim):
    # p = 0, 0, 1/201, 1/201, 1, 1 -> 0, 0, 4/201, 4/201 (3/201 raised to its predecessor),
    # 1, 1
    assert lstm["p seeds (Holm)"] == "0.0000"
    assert float(lstm["p sentences (Holm)"]) == pytest.approx(4 / 201, abs=1e-4)
    assert lstm["verdict"] == "reproduced"
    assert lstm["paper Δ"].startswith("-") and lstm["p equiv. seeds"] is None
    learned = rows["learned positions: PERMUTED as good as REGULAR"]
    assert learned["Δ over seeds"] == "+0.00" and learned["p sentences"] == "1.0000"
    # identical outputs: every resampled difference is 0, inside ±1.18 on both sides
    assert float(learned["p equiv. sentences (Holm)"]) == pytest.approx(4 / 201, abs=1e-4)
    assert learned["p equiv. seeds (Holm)"] == "0.0000"
    assert learned["verdict"] == "equivalent within ±1.18"


@pytest.mark.parametrize("expect, seeds, sentences, expected", [
    # loss claims: each test's direction is the sign of its own difference
    (-1, (-2.0, 0.01), (-2.0, 0.001), "reproduced"),
    (-1, (-2.0, 0.20), (-2.0, 0.001), "mixed: loss over sentences only"),
    (-1, (-0.1, 0.20), (-0.1, 0.400), "not significant"),
    (-1, (2.0, 0.01), (2.0, 0.001), "opposite"),
    (-1, (-2.0, None), (-2.0, 0.001),  # one seed: no seed test
     "mixed: loss over sentences only (one training run: no seed test)"),
    # the seed and the sentence differences have opposite signs
    (-1, (-2.0, 0.01), (0.3, 0.400), "mixed: loss over seeds only"),
    (-1, (2.0, 0.01), (-0.3, 0.400), "opposite"),
    (-1, (-0.3, 0.40), (2.0, 0.001), "opposite"),
    (-1, (2.0, 0.01), (-2.0, 0.001), "conflicting"),
    (-1, (-2.0, 0.01), (2.0, 0.001), "conflicting"),
])
def test_locality_verdicts(expect, seeds, sentences, expected):
    found = locality_claims.verdict(expect, locality_claims.Evidence(*seeds),
                                    locality_claims.Evidence(*sentences), margin=1.18,
                                    alpha=resample.ALPHA)
    assert found == expected


@pytest.mark.parametrize("seeds, sentences, expected", [
    # (difference, p of no difference, p of equivalence), all after Holm
    ((0.1, 0.90, 0.010), (0.1, 0.80, 0.001), "equivalent within ±1.18"),
    # a significant difference well inside the margin is still equivalent
    ((0.4, 0.03, 0.010), (0.4, 0.01, 0.001), "equivalent within ±1.18"),
    ((0.1, 0.90, 0.300), (0.1, 0.80, 0.001), "not shown"),   # 3 seeds cannot show it
    ((0.1, None, None), (0.1, 0.80, 0.001), "not shown"),    # one seed: no seed test
    ((0.1, 0.90, 0.300), (-1.5, 0.01, 0.900), "differs"),
    ((1.6, 0.01, 0.900), (0.2, 0.60, 0.200), "differs"),
    # no test rejects: not a reproduction, only not shown
    ((0.9, 0.40, 0.300), (0.9, 0.20, 0.400), "not shown"),
])
def test_locality_no_change_verdicts(seeds, sentences, expected):
    found = locality_claims.verdict(0, locality_claims.Evidence(*seeds),
                                    locality_claims.Evidence(*sentences), margin=1.18)
    assert found == expected


def test_locality_verdicts_not_judged_at_smoke_scale():
    loss = locality_claims.Evidence(-2.0, 0.001)
    for expect in (-1, 0):
        assert locality_claims.verdict(expect, loss, loss, margin=1.18, judge=False) == \
            "not judged: smoke scale"


def test_locality_claims_refuse_runs_on_different_sentences(tmp_path):
    paths = [_locality(tmp_path, "lstm", "none", "regular", 1, GOOD)]
    record = _bleu_record(tmp_path, "short", GOOD, arch="lstm", pos_emb="none",
                          setting="permuted", seed=1)
    record["statistics"]["rows"] = record["statistics"]["rows"][:10]
    paths.append(_write(tmp_path, "short", record))
    with pytest.raises(InputError, match="10 sentences in permuted but 20 in regular"):
        locality_claims.claims_table(paths)
