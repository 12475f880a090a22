"""Every interval and test of a table says in its notes what it covers (resampling unit,
resamples or trials, seed, one training run or one given output), and several tests of one
table are Holm-adjusted with the mark on the adjusted p only: LTCR tables, the systems'
redundancy and BLEU tables, the NAT results tables."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from phenomt.cli import main
from phenomt.core.metrics import resample
from phenomt.lexcons import results, stats
from phenomt.nat.tables import interval_notes
from phenomt.systems import scores, tables
from tests.test_lexcons_models import _record
from tests.test_systems import DATA, REF, _corpus, _damage, two_outputs


def _ltcr(documents: int, samples: int, seed: int) -> dict:
    """A hand-made `score ltcr` record whose intervals name their bootstrap."""
    record = _record((4, 4, 2), (2, 2, 1))
    record["documents"] = documents
    record["intervals"] = {"level": 0.95, "samples": samples, "seed": seed,
                           "unit": "document", "l_all": [0.25, 0.75], "l_anno": None}
    record["stemmer"] = "nltk PorterStemmer"
    return record


# --------------------------------------------------------------------------- LTCR

def test_lexcons_sets_table_notes_name_the_document_bootstrap(tmp_path):
    paths = []
    for key, documents in (("doc2doc/concat", 7), ("news/concat", 13)):
        path = tmp_path / f"{key.replace('/', '_')}.json"
        path.write_text(json.dumps(_ltcr(documents, 321, 17)), encoding="utf-8")
        paths.append(f"{key}={path}")
    md = tmp_path / "sets.md"
    assert main(["lexcons", "sets-table", "--ltcr", *paths, "--output-md", str(md),
                 "--output-csv", str(tmp_path / "sets.csv")]) == 0
    text = md.read_text(encoding="utf-8")
    assert "95% percentile bootstrap over the test documents (321 resamples, resampling " \
           "seed 17)" in text
    assert "doc2doc: 7 documents; news: 13 documents" in text
    assert "not training variation" in text


def test_lexcons_model_table_note_counts_come_from_the_records():
    records = {"sent-transformer": _ltcr(5, 2000, 99), "doc-transformer": _ltcr(5, 2000, 99)}
    note = results.interval_note(records)
    assert "95% percentile bootstrap over the test documents (2,000 resamples, resampling " \
           "seed 99), on 5 documents" in note
    assert "one training run" in note and "test documents only" in note
    # two bootstraps are both named; a record without its settings says so
    other = _ltcr(5, 300, 1)
    del other["intervals"]["seed"]
    note = results.interval_note({"a": records["sent-transformer"], "b": other})
    assert "(2,000 resamples, resampling seed 99)" in note
    assert "(300 resamples, seed not recorded)" in note


def test_lexcons_calibration_note_names_resamples_seed_and_documents():
    record = {"l_anno": 0.8, "l_all": 0.5, "judged_anno": 4, "pairs_anno": 5,
              "judged_all": 8, "pairs_all": 10, "documents": 11,
              "intervals": {"level": 0.95, "samples": 1000, "seed": 12345, "unit": "document",
                            "l_anno": [0.6, 0.9], "l_all": [0.4, 0.6]}}
    note = stats.calibration_note(record)
    assert "percentile bootstrap over the 11 test documents (1,000 resamples, resampling " \
           "seed 12345)" in note
    assert "L-Anno 80.0% [60.0, 90.0]" in note


# --------------------------------------------------------------------------- redundancy

def _redundancy(tmp_path: Path, samples: int, trials: int, seed: int):
    _, hyp_a, hyp_b = two_outputs(tmp_path)
    common = dict(testset="toy", src=DATA / "src.de", ref=REF, source_lang="de",
                  target_lang="en", samples=samples, seed=seed)
    records = [scores.redundancy_record(system=name, hyp=hyp, **common)
               for name, hyp in (("a", hyp_a), ("b", hyp_b))]
    comparison = scores.redundancy_comparison(system_a="a", hyp_a=hyp_a, system_b="b",
                                              hyp_b=hyp_b, trials=trials, **common)
    return records, comparison


def test_redundancy_randomization_p_are_holm_adjusted_with_trials_and_seed(tmp_path):
    records, comparison = _redundancy(tmp_path, samples=60, trials=70, seed=3)
    # by hand: CRR 0.01 and DRR 0.04 with CRR+DRR untested (NaN, out of the family of 2):
    # 2 x 0.01 = 0.02, then max(0.02, 1 x 0.04) = 0.04, both under 0.05. Counting the NaN
    # would give 0.03 and 0.08.
    tested = comparison["subsets"]["all"]
    for measure, p in (("crr", 0.01), ("drr", 0.04), ("redundancy", math.nan)):
        tested[measure]["p_randomization"] = p
    assert resample.holm([0.01, 0.04, math.nan])[:2] == pytest.approx([0.02, 0.04])
    frame, notes = tables.redundancy_table(records, [comparison], {})
    row = {r["system"]: r for r in frame.to_dict("records")}
    assert row["a"]["randomization p (Holm)"] == ("vs b: CRR p=0.0100, Holm 0.0200 *; "
                                                 "DRR p=0.0400, Holm 0.0400 *")
    assert row["b"]["randomization p (Holm)"] is None
    text = " ".join(notes)
    assert "(70 trials, seed 3)" in text and "the table's 2 randomization tests" in text
    assert "(60 resamples, seed 3)" in text
    assert "test sentences only" in text
    # raw p under 0.05 that Holm lifts above it carries no star
    for measure, p in (("crr", 0.03), ("drr", 0.04), ("redundancy", 0.5)):
        tested[measure]["p_randomization"] = p
    frame, _ = tables.redundancy_table(records, [comparison], {})
    cell = frame.set_index("system").loc["a", "randomization p (Holm)"]
    # Holm over 3: 3 x 0.03 = 0.09, 2 x 0.04 = 0.08 -> 0.09, 1 x 0.5
    assert cell == ("vs b: CRR p=0.0300, Holm 0.0900; DRR p=0.0400, Holm 0.0900; "
                    "CRR+DRR p=0.5000, Holm 0.5000")
    assert "*" not in cell


# --------------------------------------------------------------------------- BLEU

def _bleu_records(tmp_path: Path) -> list[dict]:
    refs = _corpus(40)
    outputs = {"good": [_damage(r, 7) for r in refs], "mid": [_damage(r, 5) for r in refs],
               "poor": [_damage(r, 3) for r in refs], "twin": [_damage(r, 3) for r in refs]}
    ref = tmp_path / "ref.en"
    ref.write_text("".join(f"{r}\n" for r in refs), encoding="utf-8")
    mask = tmp_path / "mask.txt"
    mask.write_text("".join(f"{int(i % 4 != 0)}\n" for i in range(len(refs))),
                    encoding="utf-8")
    for name, lines in outputs.items():
        (tmp_path / f"{name}.en").write_text("".join(f"{h}\n" for h in lines),
                                             encoding="utf-8")
    return [scores.score_record(testset="t.zh-en", system=name, hyp=tmp_path / f"{name}.en",
                                ref=ref, target_lang="en", baseline="poor",
                                baseline_hyp=tmp_path / "poor.en", mask=mask, samples=200,
                                seed=11, metrics=["bleu"])
            for name in outputs]


def test_bleu_secondary_subset_is_its_own_holm_family(tmp_path):
    records = _bleu_records(tmp_path)
    assert all(r["main"] == "official" for r in records)
    # by hand on the 'all' lines: good 0.01, mid 0.04, twin NaN (untested, out of the
    # family of 2): 2 x 0.01 = 0.02, max(0.02, 0.04) = 0.04
    for record in records:
        entry = record["subsets"]["all"]["bleu"]
        if record["system"] != "poor":
            entry["p_value"] = {"good": 0.01, "mid": 0.04, "twin": math.nan}[record["system"]]
    frame, notes = tables.bleu_table(records, {})
    rows = {(r["lines"], r["system"]): r for r in frame.to_dict("records")}
    assert rows["all", "good"]["p (BLEU)"] == "0.0100"
    assert rows["all", "good"]["p adj. (BLEU)"] == "0.0200 *"
    assert rows["all", "mid"]["p adj. (BLEU)"] == "0.0400 *"
    assert rows["all", "twin"]["p adj. (BLEU)"] is None
    assert rows["all", "poor (baseline)"]["p adj. (BLEU)"] is None
    # the main subset keeps the pairwise family the clusters come from
    assert rows["official", "good"]["p adj. (BLEU)"] is not None
    assert rows["official", "good"]["BLEU cluster"] is not None
    text = " ".join(notes)
    assert "all lines, BLEU: 2 tests" in text
    assert "secondary subset" in text and "its own family" in text
    assert "200 resamples, seed 11" in text
    # raw 0.03 and 0.04 pass unadjusted; Holm over 2 lifts both to 0.06: no star anywhere
    for record in records:
        if record["system"] in ("good", "mid"):
            record["subsets"]["all"]["bleu"]["p_value"] = {"good": 0.03,
                                                           "mid": 0.04}[record["system"]]
    rows = {(r["lines"], r["system"]): r
            for r in tables.bleu_table(records, {})[0].to_dict("records")}
    assert rows["all", "good"]["p adj. (BLEU)"] == "0.0600"
    assert rows["all", "mid"]["p adj. (BLEU)"] == "0.0600"
    assert not rows["all", "good"]["p (BLEU)"].endswith("*")


# --------------------------------------------------------------------------- NAT

def test_nat_interval_notes_name_the_resampling_seed_and_one_training_run(tmp_path):
    paths = []
    for name, samples, seed in (("a", 1000, 1), ("b", 1000, 1), ("c", 500, 4)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"bootstrap": {"samples": samples, "seed": seed,
                                                  "confidence": 0.95}}), encoding="utf-8")
        paths.append(path)
    notes = interval_notes(paths)
    assert len(notes) == 2  # once per distinct bootstrap
    assert "bootstrap over the test sentences (1,000 sentence resamples, resampling seed 1)" \
        in notes[0]
    assert "(500 sentence resamples, resampling seed 4)" in notes[1]
    assert all("one training run" in n and "not training variation" in n for n in notes)
