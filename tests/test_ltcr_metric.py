"""LTCR as a registered metric: per-sentence rows, document resampling, and its reach into
``systems score`` through ``--setting`` (the hand-made set of tests/test_ltcr.py, whose
docstring works out every pair's verdict)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from phenomt.cli import build_parser
from phenomt.core.io import InputError
from phenomt.core.metrics import base, ltcr, resample
from phenomt.lexcons.chains import build_pairs
from phenomt.lexcons.testset import read_testset
from phenomt.systems import ranking, tables
from tests.test_ltcr import DATA, MINI
from tests.test_ltcr import run as run_lexcons


def run_systems(*argv: object) -> int:
    args = build_parser(["phenomt.systems.cli"]).parse_args([str(a) for a in argv])
    return int(args.handler(args) or 0)


def hand_rows(subset: str) -> np.ndarray:
    testset = read_testset(MINI)
    pairs = build_pairs(testset)
    hypotheses = [line.split() for line in (DATA / "hyp.txt").read_text("utf-8").splitlines()]
    alignments = ltcr.read_alignment(DATA / "hyp.align", testset.source_sentences(),
                                     hypotheses)
    verdicts = ltcr.judge_hypothesis(pairs.pairs, pairs.offsets, hypotheses, alignments,
                                     ltcr.make_stemmer(), ltcr.load_function_words())
    return ltcr.sentence_rows(pairs.pairs, verdicts, pairs.offsets, testset.sentences, subset)


def test_each_pair_is_counted_at_its_later_sentence():
    # test-1 (rows 0-2): s1 gets 医生 00-12 C and 医院 02-10 C; s2 the other 7 pairs, of
    # which 医生 00-24 and 12-24 are consistent. test-2 (rows 3-5): s1 gets 政府 00-12 C and
    # 政策 03-10 C; s2 gets 政府 00-20 I, 12-20 I and 宣布 01-21 C (政策's two pairs ending
    # at s2t3 are unjudged).
    assert hand_rows("all").tolist() == [[0, 0], [2, 2], [7, 2], [0, 0], [2, 2], [3, 1]]
    # L-Anno: chain 医生 00, 12, 20 (1 of 3); 政府 00-12 C and 政策 03-10 C
    assert hand_rows("anno").tolist() == [[0, 0], [1, 1], [2, 0], [0, 0], [2, 2], [0, 0]]


def test_score_is_the_ratio_of_the_summed_rows():
    metric = base.get("ltcr")
    assert metric.score(hand_rows("all").sum(axis=0)) == pytest.approx(50.0)  # 7 of 14
    assert metric.score(hand_rows("anno").sum(axis=0)) == pytest.approx(60.0)  # 3 of 5
    assert np.isnan(metric.score(np.zeros(2)))
    assert metric.scores(np.array([[14, 7], [0, 0], [4, 4]])).tolist()[::2] == [50.0, 100.0]


@pytest.fixture(scope="module")
def pair_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("ltcr-pairs") / "pairs.json"
    assert run_lexcons(["lexcons", "pairs", "--testset", str(MINI), "--output", str(path)]) == 0
    return path


def test_pair_file_holds_the_test_sets_pairs(pair_file, tmp_path):
    found = ltcr.read_pair_file(pair_file)
    pairs = build_pairs(read_testset(MINI))
    assert found.pairs == pairs.pairs and found.offsets == pairs.offsets == [0, 3]
    assert found.sentences == [3, 3] and found.annotated and found.name == "mini"
    assert found.source == read_testset(MINI).source_sentences()
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "other"}', encoding="utf-8")
    with pytest.raises(InputError, match="bad.json: not a pair-set file"):
        ltcr.read_pair_file(bad)
    record = json.loads(pair_file.read_text(encoding="utf-8"))
    record["sentences"] = [3, 1]  # a pair now ends outside its document
    bad.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(InputError, match="bad.json: pairs or sentences outside"):
        ltcr.read_pair_file(bad)


@pytest.fixture(scope="module")
def aligner(tmp_path_factory):
    model = tmp_path_factory.mktemp("ltcr-model") / "model"
    assert run_lexcons(["lexcons", "align-train", "--testset", str(MINI), "--model-dir",
                        str(model)]) == 0
    return model


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("ltcr-ref") / "ref.en"
    path.write_text("".join(" ".join(s) + "\n" for s in read_testset(MINI)
                            .reference_sentences()), encoding="utf-8")
    return path


def test_registered_metric_equals_the_ltcr_command(tmp_path, pair_file, aligner, reference):
    hyps = (DATA / "hyp.txt").read_text(encoding="utf-8").splitlines()
    refs = reference.read_text(encoding="utf-8").splitlines()
    out = tmp_path / "record.json"
    assert run_lexcons(["score", "ltcr", "--testset", str(MINI), "--hyp", str(DATA / "hyp.txt"),
                        "--align-model", str(aligner), "--output", str(out),
                        "--samples", "10"]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    metric = base.get("ltcr", pairs=str(pair_file), align_model=str(aligner))
    stats = metric.statistics(hyps, refs)
    assert stats.sum(axis=0).tolist() == [record["judged_all"], record["consistent_all"]]
    assert metric.score(stats.sum(axis=0)) == pytest.approx(100 * record["l_all"])
    anno = base.get("ltcr", pairs=str(pair_file), align_model=str(aligner), subset="anno")
    assert anno.score(anno.statistics(hyps, refs).sum(axis=0)) == pytest.approx(
        100 * record["l_anno"])
    signature = metric.signature()
    assert "testset:mini" in signature and "pairs:16" in signature
    assert "unit:document" in signature
    with pytest.raises(ValueError, match="6 sentences"):
        metric.statistics(hyps[:5], refs[:5])


def test_documents_are_drawn_whole(pair_file, aligner):
    metric = base.get("ltcr", pairs=str(pair_file), align_model=str(aligner))
    assert metric.clusters(6) == ["0", "0", "0", "1", "1", "1"]
    weights = metric.engine(6, samples=200, seed=3).weights
    # every sentence of a document is drawn as often as the document
    assert (weights[:, :3] == weights[:, [0]]).all()
    assert (weights[:, 3:] == weights[:, [3]]).all()
    assert set(np.unique(weights[:, 0] + weights[:, 3])) == {2.0}  # two documents drawn
    assert base.get("bleu").clusters(6) is None


def test_cluster_sums_by_hand():
    rows = np.array([[1, 0], [2, 1], [3, 3], [4, 0]])
    assert resample.cluster_sums(rows, ["b", "a", "b", "a"]).tolist() == [[4, 3], [6, 1]]
    assert resample.cluster_sums(rows, None).tolist() == rows.tolist()
    with pytest.raises(ValueError, match="3 cluster labels for 4 rows"):
        resample.cluster_sums(rows, ["a", "b", "c"])


@pytest.mark.parametrize("test", ["bs", "ar"])
def test_systems_score_names_ltcr_with_its_settings(tmp_path, pair_file, aligner, reference,
                                                    test):
    worse = tmp_path / "worse.txt"
    worse.write_text((DATA / "hyp.txt").read_text("utf-8").replace("doctors", "medics"),
                     encoding="utf-8")
    records = []
    for name, hyp, extra in (("A", DATA / "hyp.txt", ["--baseline", "A"]),
                             ("B", worse, ["--baseline", "A", "--baseline-hyp",
                                           DATA / "hyp.txt"])):
        out = tmp_path / f"{name}.json"
        assert run_systems("systems", "score", "--testset", "mini", "--system", name,
                           "--hyp", hyp, "--ref", reference, "--target-lang", "en",
                           "--metrics", "bleu", "ltcr", "--test", test, "--samples", "100",
                           "--setting", f"ltcr.pairs={pair_file}", f"ltcr.align_model={aligner}",
                           "--output", out, *extra) == 0
        records.append(json.loads(out.read_text(encoding="utf-8")))
    cell = records[1]["subsets"]["all"]["ltcr"]
    assert cell["unit"] == "document" and records[1]["subsets"]["all"]["bleu"]["unit"] == \
        "sentence"
    assert cell["statistics"]["clusters"] == ["0", "0", "0", "1", "1", "1"]
    if test == "ar":
        assert cell["p_value"] is not None and 0 < cell["p_value"] <= 1
    else:  # two documents are too few to resample: the difference is shown, not tested
        assert cell["p_value"] is None and cell["untested"].startswith("2 document(s)")
        assert cell["difference"] is not None
    assert cell["baseline_score"] == records[0]["subsets"]["all"]["ltcr"]["score"]
    ranked = ranking.rank(records, "ltcr")
    assert ranked is not None and ranked.pairs == 1
    frame, notes = tables.bleu_table(records, {})
    assert "LTCR [95% CI]" in frame.columns and "LTCR cluster" in frame.columns
    assert any("LTCR resamples and swaps whole documents" in note for note in notes)


def test_settings_are_checked_before_scoring():
    assert base.parse_settings(["ltcr.subset=anno", "chrf.word_order=2"]) == {
        "ltcr": {"subset": "anno"}, "chrf": {"word_order": 2}}
    for text, message in (("ltcr.subset", "expected METRIC.SETTING=VALUE"),
                          ("meteor.x=1", "unknown metric 'meteor'"),
                          ("ltcr.colour=red", "ltcr has no setting 'colour'"),
                          ("chrf.word_order=two", "'two' is no int"),
                          ("ltcr.subset=some", "one of all, anno")):
        with pytest.raises(ValueError, match=message):
            base.parse_settings([text])
    with pytest.raises(ValueError, match="given twice"):
        base.parse_settings(["ltcr.subset=all", "ltcr.subset=anno"])


def test_ltcr_refuses_a_mask_and_unscored_settings(tmp_path, reference, capsys):
    mask = tmp_path / "mask"
    mask.write_text("1\n" * 6, encoding="utf-8")
    common = ["systems", "score", "--testset", "mini", "--system", "A", "--hyp",
              DATA / "hyp.txt", "--ref", reference, "--target-lang", "en", "--output",
              tmp_path / "x.json"]
    with pytest.raises(SystemExit):
        run_systems(*common, "--metrics", "bleu", "ltcr", "--mask", mask,
                    "--setting", "ltcr.pairs=p.json", "ltcr.align_model=m")
    assert "ltcr scores whole documents" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run_systems(*common, "--metrics", "bleu", "--setting", "ltcr.subset=anno")
    assert "settings given for ltcr, which are not scored" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
