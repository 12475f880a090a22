"""Every system of a test set against every other: Holm-adjusted pairwise tests on shared
resamples and WMT-style significance clusters in the systems table."""

from __future__ import annotations

import pytest

from phenomt.core.metrics import resample
from phenomt.core.metrics.base import get
from phenomt.systems import ranking, scores, tables
from tests.test_systems import _corpus, _damage


def _records(tmp_path, outputs: dict[str, list[str]], refs: list[str], baseline: str):
    ref = tmp_path / "ref.en"
    ref.write_text("".join(f"{r}\n" for r in refs), encoding="utf-8")
    for name, lines in outputs.items():
        (tmp_path / f"{name}.en").write_text("".join(f"{h}\n" for h in lines),
                                             encoding="utf-8")
    records = []
    for name in outputs:
        hyp = tmp_path / f"{name}.en"
        records.append(scores.score_record(
            testset="t.de-en", system=name, hyp=hyp, ref=ref, target_lang="en",
            baseline=baseline, baseline_hyp=tmp_path / f"{baseline}.en", samples=300,
            seed=7))
    return records


def test_systems_fall_into_significance_clusters(tmp_path):
    refs = _corpus(60)
    outputs = {"good": [_damage(r, 7) for r in refs], "poor": [_damage(r, 3) for r in refs],
               "poor-too": [_damage(r, 3) for r in refs]}
    records = _records(tmp_path, outputs, refs, baseline="poor")
    ranked = ranking.rank(records, "bleu")
    assert ranked.clusters == [["good"], ["poor", "poor-too"]]
    assert ranked.pairs == 3
    # the adjusted p are Holm's of the three raw pair p-values, tested on shared resamples
    bleu = get("bleu")
    stats = {r["system"]: bleu.statistics(outputs[r["system"]], refs) for r in records}
    engine = resample.Resampler(len(refs), 300, 7)
    pairs = [("good", "poor"), ("good", "poor-too"), ("poor", "poor-too")]
    raw = []
    for a, b in pairs:
        sa, va = engine.resampled(bleu.score, stats[a])
        sb, vb = engine.resampled(bleu.score, stats[b])
        raw.append(engine.compare(sa, va, sb, vb).p)
    assert [ranked.raw[p] for p in pairs] == pytest.approx(raw)
    assert [ranked.adjusted[p] for p in pairs] == pytest.approx(resample.holm(raw))
    assert ranked.adjusted["poor", "poor-too"] == 1.0  # identical outputs

    frame, notes = tables.bleu_table(records, {})
    row = {r["system"]: r for r in frame.to_dict("records")}
    assert row["good"]["BLEU cluster"] == "1" and row["poor (baseline)"]["BLEU cluster"] == "2"
    assert row["good"]["p adj. (BLEU)"].endswith(" *")
    assert row["poor (baseline)"]["p adj. (BLEU)"] is None
    assert any(n.startswith("Cluster: systems ranked as WMT ranks them") for n in notes)


def test_lower_is_better_metrics_rank_the_other_way(tmp_path):
    refs = _corpus(60)
    outputs = {"good": [_damage(r, 7) for r in refs], "poor": [_damage(r, 2) for r in refs]}
    records = _records(tmp_path, outputs, refs, baseline="poor")
    for record in records:  # TER instead of BLEU and chrF
        record["metrics"] = ["ter"]
    ter = get("ter")
    for record in records:
        stats = ter.statistics(outputs[record["system"]], refs)
        record["subsets"]["all"]["ter"] = {"statistics": {"rows": stats.tolist()}}
    assert ranking.rank(records, "ter").clusters == [["good"], ["poor"]]
