"""Every system of a test set against every other: Holm-adjusted pairwise tests on shared
resamples and WMT-style significance clusters in the systems table."""

from __future__ import annotations

import pytest

from phenomt.core.io import InputError
from phenomt.core.metrics import resample
from phenomt.core.metrics.base import get
from phenomt.systems import ranking, scores, tables
from tests.test_systems import _corpus, _damage


def _records(tmp_path, outputs: dict[str, list[str]], refs: list[str], baseline: str,
             **options):
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
            seed=7, **options))
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
    # only the adjusted p carries the mark: a star on the raw p would be uncorrected
    assert not row["good"]["p (BLEU)"].endswith("*")
    assert float(row["good"]["p (BLEU)"]) == pytest.approx(ranked.raw["good", "poor"], abs=5e-5)
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


def test_a_metric_is_ranked_with_the_settings_it_was_scored_with(tmp_path):
    refs = _corpus(60)
    outputs = {"good": [_damage(r, 7) for r in refs], "poor": [_damage(r, 4) for r in refs]}
    # chrF++ (word n-grams up to 2): its statistics have word columns that plain chrF ignores
    records = _records(tmp_path, outputs, refs, baseline="poor", metrics=("chrf",),
                       settings={"chrf": {"word_order": 2}})
    assert all("nw:2" in r["subsets"]["all"]["chrf"]["signature"] for r in records)
    ranked = ranking.rank(records, "chrf")
    # the ranking tests the pair on the records' resamples (same count and seed): with the
    # records' own metric its raw p is the score job's p against the baseline
    good = next(r for r in records if r["system"] == "good")
    assert ranked.raw["good", "poor"] == pytest.approx(good["subsets"]["all"]["chrf"]["p_value"])
    chrf_pp = scores.recorded_metric(good, "chrf")
    rows = good["subsets"]["all"]["chrf"]["statistics"]["rows"]
    import numpy as np

    assert chrf_pp.score(np.asarray(rows).sum(0)) == pytest.approx(
        good["subsets"]["all"]["chrf"]["score"])
    assert get("chrf").score(np.asarray(rows).sum(0)) != pytest.approx(
        good["subsets"]["all"]["chrf"]["score"])  # plain chrF would score them otherwise


def test_systems_scored_with_other_settings_are_not_ranked_together(tmp_path):
    refs = _corpus(30)
    outputs = {"good": [_damage(r, 7) for r in refs], "poor": [_damage(r, 4) for r in refs]}
    records = _records(tmp_path, outputs, refs, baseline="poor", metrics=("chrf",))
    other = _records(tmp_path, outputs, refs, baseline="poor", metrics=("chrf",),
                     settings={"chrf": {"word_order": 2}})
    with pytest.raises(InputError, match="other chrf settings"):
        ranking.rank([records[0], other[1]], "chrf")


def test_an_undefined_difference_sets_no_cluster_boundary(tmp_path):
    # CRR of a system with no hypothesis of two tokens is undefined (NaN): its pairs are no
    # tests, so the others' adjusted p and clusters are those of the family without it,
    # wherever it is listed
    refs = _corpus(40)
    outputs = {"a": refs, "b": [r + " " + r.split()[0] for r in refs],
               "c": [" ".join(w for w in r.split() for _ in (0, 1)) for r in refs],
               "empty": ["x"] * len(refs)}
    source = tmp_path / "src.de"
    source.write_text("".join(f"{r}\n" for r in refs), encoding="utf-8")
    records = {r["system"]: r for r in _records(tmp_path, outputs, refs, baseline="a",
                                                metrics=("crr",), src=source,
                                                source_lang="de")}
    assert records["empty"]["subsets"]["all"]["crr"]["score"] != \
        records["empty"]["subsets"]["all"]["crr"]["score"]  # NaN
    alone = ranking.rank([records[s] for s in ("a", "b", "c")], "crr")
    for order in (("empty", "a", "b", "c"), ("a", "b", "c", "empty")):
        ranked = ranking.rank([records[s] for s in order], "crr")
        for pair, q in alone.adjusted.items():
            assert ranked.adjusted[pair] == pytest.approx(q)
        assert ranked.clusters == alone.clusters and ranked.cluster_of("empty") is None
