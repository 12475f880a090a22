"""LTCR on the hand-made test set tests/data/lexcons/mini, scored with the hand-written
alignment hyp.align (no aligner runs).

Document test-1 (医生 "doctor" ×4, 医院 "hospital" ×3; res chain 医生 at s0t0, s1t2, s2t0):
  translations (aligned tokens, lower-cased, function words dropped, Porter-stemmed):
    医生 s0t0 "the doctor" → (doctor)      医院 s0t2 "the hospital" → (hospit)
    医生 s1t2 "doctors"    → (doctor)      医院 s1t0 "Hospital"     → (hospit)
    医生 s2t0 "physician"  → (physician)   医院 s2t2 "medical center" → (medic, center)
    医生 s2t4 "doctors"    → (doctor)
  医生 pairs: 00-12 C, 00-20 I, 00-24 C, 12-20 I, 12-24 C, 20-24 I → 3 of 6
  医院 pairs: 02-10 C, 02-22 I, 10-22 I                             → 1 of 3
  L-Anno (chain 00, 12, 20): 00-12 C, 00-20 I, 12-20 I              → 1 of 3
Document test-2 (政府 ×3, 宣布 ×2, 政策 ×3; res chains 政府 s0t0 s1t2, 政策 s0t3 s1t0 s2t3):
    政府 s0t0 "The State Council" → (state, council)   宣布 s0t1 "announced" → (announc)
    政府 s1t2 "the state council" → (state, council)   宣布 s2t1 "announces" → (announc)
    政府 s2t0 "government"        → (govern)
    政策 s0t3 "policies" → (polici), s1t0 "policy" → (polici), s2t3 "it" → () unjudged
  政府: 00-12 C (multi-word), 00-20 I, 12-20 I → 1 of 3
  宣布: 01-21 C (stemming)                       → 1 of 1 (VERB)
  政策: 03-10 C, 03-23 unjudged, 10-23 unjudged  → 1 of 1 judged, 2 unjudged
  L-Anno: 政府 00-12 C; 政策 as above           → 2 of 2 judged, 2 unjudged
Totals: L-All 16 pairs, 14 judged, 7 consistent → 0.5 (2 unjudged);
        L-Anno 7 pairs, 5 judged, 3 consistent → 0.6 (2 unjudged).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from phenomt.cli import build_parser
from phenomt.core.io import InputError
from phenomt.core.metrics import ltcr
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "lexcons"
MINI = DATA / "mini"


def run(argv: list[str]) -> int:
    args = build_parser(["phenomt.lexcons.chains"]).parse_args(argv)
    return args.handler(args)


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("ltcr") / "out.json"
    assert run(["score", "ltcr", "--testset", str(MINI), "--hyp", str(DATA / "hyp.txt"),
                "--alignment", str(DATA / "hyp.align"), "--output", str(out),
                "--samples", "200"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_hand_computed_totals(scored):
    assert (scored["pairs_all"], scored["judged_all"], scored["consistent_all"]) == (16, 14, 7)
    assert scored["unjudged_all"] == 2
    assert scored["l_all"] == pytest.approx(0.5)
    assert (scored["pairs_anno"], scored["judged_anno"], scored["consistent_anno"]) == (7, 5, 3)
    assert scored["unjudged_anno"] == 2
    assert scored["l_anno"] == pytest.approx(0.6)


def test_breakdowns(scored):
    verb = scored["by_pos"]["VERB"]["all"]
    assert (verb["pairs"], verb["consistent"]) == (1, 1)
    noun = scored["by_pos"]["NOUN"]["all"]
    assert (noun["pairs"], noun["judged"], noun["consistent"]) == (15, 13, 6)
    # the only same-sentence pair is 医生 s2t0-s2t4: physician vs doctor
    same = scored["by_distance"]["0"]["all"]
    assert (same["pairs"], same["judged"], same["consistent"]) == (1, 1, 0)
    assert sum(b["all"]["pairs"] for b in scored["by_distance"].values()) == 16
    assert "PorterStemmer" in scored["stemmer"]
    low, high = scored["intervals"]["l_all"]
    assert 0.0 <= low <= high <= 1.0


def test_record_keeps_each_documents_judged_and_consistent_pairs(scored):
    # test-1: L-All 3 of 6 + 1 of 3, L-Anno 1 of 3; test-2: L-All 1/3 + 1/1 + 1/1 judged,
    # L-Anno 2 of 2 judged (the docstring's counts, per document)
    assert scored["statistics"]["columns"] == list(ltcr.STATISTICS_COLUMNS)
    assert scored["statistics"]["rows"] == [[9, 4, 3, 1], [5, 3, 2, 2]]
    stats = ltcr.document_statistics(scored, "out.json")
    assert stats.sum(axis=0).tolist() == [14, 7, 5, 3]  # the totals' judged and consistent


def test_paired_test_over_documents_by_hand():
    # a: 1 of 2 and 2 of 2 consistent; b: 0 of 2 and 1 of 2. Any resample of the two
    # documents (both twice, or one of each) gives a - b = 0.5 exactly: the interval is
    # [0.5, 0.5] and no centred resample reaches 0.5, so p = 1 / (samples + 1).
    a = np.array([[2, 1, 0, 0], [2, 2, 0, 0]], dtype=float)
    b = np.array([[2, 0, 0, 0], [2, 1, 0, 0]], dtype=float)
    tested = ltcr.paired_test(a, b, samples=99, seed=3)
    assert (tested.a, tested.b, tested.difference) == (0.75, 0.25, 0.5)
    assert (tested.low, tested.high) == (0.5, 0.5)
    assert tested.p == pytest.approx(0.01)
    same = ltcr.paired_test(a, a, samples=99)
    assert same.difference == 0.0 and same.p == 1.0
    with pytest.raises(InputError, match=r"old\.json: no per-document LTCR statistics"):
        ltcr.document_statistics({"l_all": 0.5}, "old.json")


def test_output_is_deterministic(tmp_path, scored):
    out = tmp_path / "again.json"
    run(["score", "ltcr", "--testset", str(MINI), "--hyp", str(DATA / "hyp.txt"),
         "--alignment", str(DATA / "hyp.align"), "--output", str(out), "--samples", "200"])
    assert json.loads(out.read_text(encoding="utf-8")) == scored


def test_without_res_l_anno_is_null(tmp_path):
    import shutil

    shutil.copytree(MINI / "zh2en_token", tmp_path / "set" / "zh2en_token")
    out = tmp_path / "out.json"
    run(["score", "ltcr", "--testset", str(tmp_path / "set"), "--hyp", str(DATA / "hyp.txt"),
         "--alignment", str(DATA / "hyp.align"), "--output", str(out), "--samples", "10"])
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["l_anno"] is None and record["pairs_anno"] == 0
    assert record["pairs_all"] == 16


def test_normalise_drops_function_words_and_punctuation_and_stems():
    stem = ltcr.make_stemmer("porter")
    words = ltcr.load_function_words()
    assert ltcr.normalise(["The", "Flood", "-", "resistant", "houses", "'s"], stem, words) == (
        "flood", "resist", "hous")
    assert ltcr.normalise(["of", "the", ","], stem, words) == ()


@pytest.mark.parametrize(("tokens", "expected"), [
    (["US"], ("us",)),            # an acronym, not the pronoun "us"
    (["the", "US"], ("us",)),
    (["IT", "firms"], ("it", "firm")),
    (["it"], ()),                 # the pronoun
    (["I"], ()),                  # one capital letter is no acronym
    (["€"], ("€",)),              # a currency sign translates 欧元
    (["$", "5"], ("$", "5")),
    (["%"], ()),                  # punctuation (Unicode category Po)
    (["U.S."], ("u.s.",)),
    (["would"], ()),              # only function words: unjudged (see normalise)
])
def test_normalise_keeps_acronyms_and_currency_signs(tokens, expected):
    stem = ltcr.make_stemmer("porter")
    assert ltcr.normalise(tokens, stem, ltcr.load_function_words()) == expected


def test_an_acronym_and_its_spelling_as_a_pronoun_are_judged_as_written():
    """美国 translated "US" twice is consistent; before acronyms were kept, "US" fell into
    the function word "us" and the pair went unjudged."""
    stem = ltcr.make_stemmer("porter")
    words = ltcr.load_function_words()
    pair = ltcr.Pair(0, (0, 0), (1, 0), "NOUN", True, True)
    translations = {(0, (0, 0)): ltcr.normalise(["the", "US"], stem, words),
                    (0, (1, 0)): ltcr.normalise(["US"], stem, words)}
    assert ltcr.judge([pair], translations) == [True]


def test_judge_marks_empty_translations_unjudged():
    pairs = [ltcr.Pair(0, (0, 0), (1, 0), "NOUN", True, False),
             ltcr.Pair(0, (0, 0), (1, 1), "NOUN", True, True)]
    translations = {(0, (0, 0)): ("clinic",), (0, (1, 0)): ("clinic",), (0, (1, 1)): ()}
    assert ltcr.judge(pairs, translations) == [True, None]


def test_bootstrap_is_seeded_and_skips_empty_samples():
    counts = np.array([[2, 1], [0, 0], [4, 4]])
    a = ltcr.bootstrap_ratios(counts, 50, seed=7)
    b = ltcr.bootstrap_ratios(counts, 50, seed=7)
    assert np.array_equal(a, b, equal_nan=True)
    assert ltcr.percentile_interval(np.array([np.nan, np.nan]), 0.95) is None
    curve = ltcr.sample_size_curve(counts, [1, 3], 100, seed=3)
    assert [c["documents"] for c in curve] == [1, 3]


def test_alignment_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.align"
    bad.write_text("0-0\n0-x\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.align:2"):
        ltcr.read_alignment(bad, [["a"], ["b"]], [["x"], ["y"]])
    bad.write_text("0-0\n0-5\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.align:2: point 0-5 outside"):
        ltcr.read_alignment(bad, [["a"], ["b"]], [["x"], ["y"]])


def test_hypothesis_line_count_is_checked(tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    with pytest.raises(InputError, match="has 1 lines but the test set"):
        run(["score", "ltcr", "--testset", str(MINI), "--hyp", str(short),
             "--alignment", str(DATA / "hyp.align"), "--output", str(tmp_path / "o.json")])


def test_aligner_path_trains_saves_and_reuses_a_model(tmp_path):
    """Without --alignment: sacremoses tokenization and fast_align, trained once, reused."""
    model = tmp_path / "model"
    assert run(["lexcons", "align-train", "--testset", str(MINI), "--model-dir",
                str(model)]) == 0
    assert (model / "settings.json").is_file()
    # several test sets train one aligner on all their source-reference pairs
    both = tmp_path / "both"
    assert run(["lexcons", "align-train", "--testset", str(MINI), str(MINI), "--model-dir",
                str(both)]) == 0
    single = json.loads((model / "settings.json").read_text(encoding="utf-8"))
    double = json.loads((both / "settings.json").read_text(encoding="utf-8"))
    assert double["corpora"][0]["lines"] == 2 * single["corpora"][0]["lines"]
    outs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.json"
        run(["score", "ltcr", "--testset", str(MINI), "--hyp", str(DATA / "hyp.txt"),
             "--align-model", str(model), "--output", str(out), "--samples", "10",
             "--save-alignment", str(tmp_path / f"{name}.align")])
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    record = json.loads(outs[0])
    assert record["pairs_all"] == 16 and record["settings"]["align_model"] == str(model)
    assert len(Path(tmp_path / "a.align").read_text(encoding="utf-8").splitlines()) == 6


def test_the_lexcons_aligner_goes_through_the_cache(tmp_path, monkeypatch):
    """With $PHENOMT_CACHE set, a second training on the same test set copies the models."""
    from phenomt.core import align

    monkeypatch.setenv("PHENOMT_CACHE", str(tmp_path / "cache"))
    first, second = tmp_path / "first", tmp_path / "second"
    assert run(["lexcons", "align-train", "--testset", str(MINI), "--model-dir",
                str(first)]) == 0
    assert len(list((tmp_path / "cache" / "align").iterdir())) == 1
    monkeypatch.setattr(align, "_fit", lambda *a: pytest.fail("trained although cached"))
    assert run(["lexcons", "align-train", "--testset", str(MINI), "--model-dir",
                str(second)]) == 0
    assert sorted(p.name for p in second.iterdir()) == sorted(p.name for p in first.iterdir())
    for path in first.iterdir():
        if path.name != "settings.json":  # it names each folder's own training files
            assert (second / path.name).read_bytes() == path.read_bytes(), path.name
