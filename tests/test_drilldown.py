"""The report's drill-down: the sentences behind a challenge-set, bucket or example cell
(``phenomt systems sentences``) and their HTML under the table's rows, clicked open in a real
headless browser."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from phenomt.core import report
from phenomt.core.io import InputError
from phenomt.systems import sentences

SOURCES = ["Er ruft sie an .", "Sie sieht ihn .", "Er gibt es auf ."]
REFERENCES = ["He calls her.", "She sees him.", "He gives it up."]
HYPOTHESES = {"A": ["He phones her.", "She sees him.", "He quits."],
              "B": ["He calls her up.", "She looks at him.", "He gives up."]}


def _sets(tmp_path: Path) -> dict[str, str]:
    """A particle set of lines 1 and 3 (head and particle starred), as extraction writes it."""
    prefix = tmp_path / "particle.all"
    Path(f"{prefix}.ids").write_text("1\n3\n", encoding="utf-8")
    Path(f"{prefix}.src_marked").write_text("Er *ruft* sie *an* .\nEr *gibt* es *auf* .\n",
                                            encoding="utf-8")
    return {"particle.all": str(prefix)}


ANALYSIS = {
    "length": {"buckets": [{"bucket": "<10", "sentences": 3, "lines": [1, 2, 3]},
                           {"bucket": "[10, 20)", "sentences": 0, "lines": []}]},
    "frequency": {"frequencies": "hand", "buckets": [
        {"bucket": "<1", "lines": {"3": ["gives"], "1": ["calls"]}}]},
    "examples": {"systems": {"B": {"system_better": [{"line": 3}],
                                   "baseline_better": [{"line": 2}]}}},
}


def test_the_record_lists_each_groups_lines_and_their_texts_once(tmp_path):
    sets = {name: sentences.read_set(prefix) for name, prefix in _sets(tmp_path).items()}
    record = sentences.sentences_record(testset="toy", sources=SOURCES, references=REFERENCES,
                                        hypotheses=HYPOTHESES, sets=sets, analysis=ANALYSIS,
                                        shown=1)
    groups = record["groups"]
    # the set keeps its size (2) and shows its first line (shown=1) with its marked source
    assert groups["set:particle.all"]["size"] == 2
    assert groups["set:particle.all"]["lines"] == [1]
    assert groups["set:particle.all"]["marked_source"] == {"1": "Er *ruft* sie *an* ."}
    assert groups["length:<10"]["lines"] == [1, 2, 3]
    assert groups["length:[10, 20)"]["lines"] == []
    assert groups["frequency:<1"]["lines"] == [1, 3]  # in line order
    assert groups["frequency:<1"]["reference_words"] == {"3": ["gives"], "1": ["calls"]}
    assert set(groups) >= {"line:2", "line:3"}
    assert sorted(record["texts"], key=int) == ["1", "2", "3"]
    assert record["texts"]["3"] == {"source": SOURCES[2], "reference": REFERENCES[2],
                                    "hypotheses": {"A": "He quits.", "B": "He gives up."}}


def test_bad_set_files_and_lines_beyond_the_test_set_are_refused(tmp_path):
    prefix = tmp_path / "bad"
    Path(f"{prefix}.ids").write_text("1\nx\n", encoding="utf-8")
    Path(f"{prefix}.src_marked").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.ids:2: 'x' is not a line number"):
        sentences.read_set(prefix)
    Path(f"{prefix}.ids").write_text("1\n", encoding="utf-8")
    with pytest.raises(InputError, match="2 lines, but"):
        sentences.read_set(prefix)
    with pytest.raises(ValueError, match="line 9 beyond the test set's 3 lines"):
        sentences.sentences_record(testset="toy", sources=SOURCES, references=REFERENCES,
                                   hypotheses=HYPOTHESES, sets={"s": ([9], ["x"])})
    with pytest.raises(ValueError, match="A: 2 lines for 3"):
        sentences.sentences_record(testset="toy", sources=SOURCES, references=REFERENCES,
                                   hypotheses={"A": HYPOTHESES["A"][:2]})


def test_rows_name_their_groups():
    assert report.row_group(["set", "sentences", "A"], ["particle.ge1", "79", "35.8"]) == \
        "set:particle.ge1"
    assert report.row_group(["system", "line", "source"], ["B", "629", "x"]) == "line:629"
    header = ["analysis", "bucket", "size", "system"]
    assert report.row_group(header, ["word F by frequency", "<1", "240", "A"]) == \
        "frequency:<1"
    assert report.row_group(header, ["BLEU by reference length", "[10, 20)", "9", "A"]) == \
        "length:[10, 20)"
    assert report.row_group(["set", "A"], ["", "1"]) is None  # the Spearman rows
    assert report.row_group(["phenomenon", "A"], ["particle", "1"]) is None


def test_marked_words_are_escaped_and_highlighted():
    assert report._marked("Er *ruft* sie *an* <b> * .") == \
        "Er <mark>ruft</mark> sie <mark>an</mark> &lt;b&gt; * ."
    assert report._with_words("He gives it up; gives.", ["gives", "up"]) == \
        "He <mark>gives</mark> it <mark>up</mark>; <mark>gives</mark>."
    assert report._with_words("a<b", []) == "a&lt;b"


def _page(tmp_path: Path) -> Path:
    """A challenge-set table (two rows of one set, a row of none) with its sentences."""
    sets = {name: sentences.read_set(prefix) for name, prefix in _sets(tmp_path).items()}
    record = sentences.sentences_record(testset="toy", sources=SOURCES, references=REFERENCES,
                                        hypotheses=HYPOTHESES, sets=sets)
    (tmp_path / "sentences.json").write_text(json.dumps(record), "utf-8")
    (tmp_path / "t.csv").write_text("set,metric,A,B\nfull test set,BLEU,30.1,29.0\n"
                                    "particle.all,BLEU,20.0,25.0\nparticle.all,chrF,50.0,51.0\n",
                                    encoding="utf-8")
    (tmp_path / "t.md").write_text("# Toy challenge sets\n\n| x |\n\n- a note\n", "utf-8")
    page = tmp_path / "t.html"
    done = subprocess.run([sys.executable, "-m", "phenomt.cli", "report", "table", "--csv",
                           str(tmp_path / "t.csv"), "--md", str(tmp_path / "t.md"),
                           "--sentences", str(tmp_path / "sentences.json"), "--output",
                           str(page)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return page


def test_one_drill_row_per_run_of_rows_of_a_group(tmp_path):
    text = _page(tmp_path).read_text(encoding="utf-8")
    assert text.count('class="drill"') == 1
    assert text.count('<label for="drill-0"') == 8  # both rows' four cells
    assert "<mark>ruft</mark>" in text and "He gives up." in text


def test_a_click_on_a_cell_opens_its_sentences_in_a_browser(tmp_path, monkeypatch):
    from selenium.webdriver.common.by import By

    from tests.test_report import browser_paths, click, open_browser, wait_for

    chromium, driver_path = browser_paths()
    monkeypatch.setenv("SE_OFFLINE", "true")
    page = _page(tmp_path)
    driver = open_browser(chromium, driver_path)
    try:
        driver.get(page.as_uri())
        panel = driver.find_element(By.CSS_SELECTOR, 'div.sentences[data-group="set:particle.all"]')
        assert not panel.is_displayed()
        click(driver, (By.XPATH, "//label[normalize-space(text())='25.0']"))
        wait_for(driver, "document.querySelector('div.sentences').offsetHeight > 0")
        assert panel.is_displayed()
        shown = panel.text
        for expected in ("line 1", "line 3", "He calls her.", "He phones her.",
                         "He gives up.", "He quits."):
            assert expected in shown
        marks = [m.text for m in panel.find_elements(By.TAG_NAME, "mark")]
        assert marks == ["ruft", "an", "gibt", "auf"]
        click(driver, (By.XPATH, "//label[normalize-space(text())='chrF']"))  # closes again
        wait_for(driver, "document.querySelector('div.sentences').offsetHeight === 0")
    finally:
        driver.quit()


def test_pos_buckets_open_their_sentences_with_the_words_marked():
    analysis = {**ANALYSIS, "pos": {"parse": "hand", "buckets": [
        {"bucket": "VERB", "lines": {"1": ["calls"], "3": ["gives"]}}]}}
    record = sentences.sentences_record(testset="toy", sources=SOURCES, references=REFERENCES,
                                        hypotheses=HYPOTHESES, analysis=analysis)
    assert record["groups"]["pos:VERB"]["lines"] == [1, 3]
    header = ["analysis", "bucket", "size", "system"]
    assert report.row_group(header, ["word recall by POS", "VERB", "2", "A"]) == "pos:VERB"
    page = report.table_html("t", header, [["word recall by POS", "VERB", "2", "A"]],
                             sentences=[record])
    assert "He <mark>calls</mark> her." in page and "He <mark>gives</mark> it up." in page


def test_redundant_tokens_are_the_ones_crr_and_drr_count_by_hand():
    from phenomt.systems.scores import redundancy_setup

    # the reference's ten most frequent tokens are stopwords: w0 ... w9, not "cat"
    references = [[f"w{i}" for i in range(12)]] * 5 + [["a", "cat", "sat"]]
    setup = redundancy_setup(references, "en", "de")
    # cat sat cat cat: the third token repeats the first, not adjacent (discontinuous); the
    # fourth repeats the third (continuous); the reference has one cat, so no exemption
    found = sentences.redundant_tokens(setup, ["cat", "sat", "cat", "cat"], ["Katze"],
                                       ["a", "cat", "sat"])
    assert found == {"tokens": ["cat", "sat", "cat", "cat"], "continuous": [3],
                     "discontinuous": [2]}
    html = report._redundancy_marked(found)
    assert html == ('cat sat <mark class="drr" title="DRR">cat</mark> '
                    '<mark class="crr" title="CRR">cat</mark>')
    # a stopword repeats freely
    assert sentences.redundant_tokens(setup, ["w1", "x", "w1"], ["y"], ["a"])[
        "discontinuous"] == []
    # the drill-down shows the output as written, then the tokens counted, marked
    tokens = {"tokens": ["das", ",", "was", "das", "Sporthilfe", "@-@", "Stiftung"],
              "continuous": [], "discontinuous": [3]}
    record = {"systems": ["A"], "texts": {"1": {
        "source": "that, what", "reference": "das, was",
        "hypotheses": {"A": "das, was das Sporthilfe-Stiftung"}, "redundant": {"A": tokens}}}}
    page = report.drill_html({"label": "all", "lines": [1]}, record)
    assert ("<dd>das, was das Sporthilfe-Stiftung<br><small class=\"tokens\">tokens: das , "
            'was <mark class="drr" title="DRR">das</mark> Sporthilfe @-@ Stiftung</small></dd>'
            in page)


def test_each_lines_marks_agree_with_the_test_sets_crr_drr_job():
    from phenomt.systems.scores import redundancy_setup

    refs = [["a", "cat", "sat", "."], ["the", "dog", "ran", "."], ["a", "bird", "sang", "."]]
    srcs = [["x"], ["y"], ["z"]]
    hyps = [["cat", "cat", "sat", "cat", "."], ["dog", "ran", "dog", "."], ["bird", "."]]
    setup = redundancy_setup(refs, "en", "de")
    whole = setup.results(hyps, srcs, refs)  # what systems_redundancy computes
    for n, found in enumerate(whole):
        marks = sentences.redundant_tokens(setup, hyps[n], srcs[n], refs[n])
        assert marks["continuous"] == sorted({j for _, j in found.continuous_pairs})
        assert marks["discontinuous"] == sorted({j for _, j in found.discontinuous_pairs})


def test_the_sentences_command_writes_the_record_and_refuses_bad_input(tmp_path, capsys):
    from phenomt.cli import main

    prefix = _sets(tmp_path)["particle.all"]
    for name, lines in (("src", SOURCES), ("ref", REFERENCES), ("a", HYPOTHESES["A"]),
                        ("b", HYPOTHESES["B"]),
                        ("tok.src", SOURCES), ("tok.ref", [r.replace(".", " .")
                                                           for r in REFERENCES])):
        (tmp_path / name).write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    out = tmp_path / "sentences.json"
    args = ["systems", "sentences", "--testset", "toy", "--src", str(tmp_path / "src"),
            "--ref", str(tmp_path / "ref"), "--hyp", f"A={tmp_path / 'a'}",
            f"B={tmp_path / 'b'}", "--set", f"particle.all={prefix}",
            "--tokens", str(tmp_path / "tok.src"), str(tmp_path / "tok.ref"),
            "--source-lang", "de", "--target-lang", "en", "--output", str(out)]
    assert main(args) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["groups"]["set:particle.all"]["lines"] == [1, 3]
    assert record["texts"]["1"]["redundant"]["A"]["tokens"] == ["He", "phones", "her", "."]
    capsys.readouterr()
    out.unlink()
    with pytest.raises(SystemExit) as usage:  # a usage error, before anything is read
        main([*args[:8], "--hyp", f"A={tmp_path / 'a'}", f"A={tmp_path / 'b'}", *args[11:]])
    assert usage.value.code == 2 and "a system named twice" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([a for a in args if a not in ("--source-lang", "de")])
    assert "--tokens needs --source-lang" in capsys.readouterr().err
    assert not out.exists()


# --- LTCR pairs (the hand-made set of tests/test_ltcr.py, whose docstring judges every pair)


def _mini_ltcr(tmp_path: Path):
    """The mini set's pair file, its source rows, and its hypotheses (hyp.txt) as system A."""
    from phenomt.core.metrics import ltcr
    from tests.test_ltcr import DATA, MINI
    from tests.test_ltcr import run as run_lexcons

    path = tmp_path / "pairs.json"
    assert run_lexcons(["lexcons", "pairs", "--testset", str(MINI), "--output", str(path)]) == 0
    hyps = (DATA / "hyp.txt").read_text(encoding="utf-8").splitlines()
    return ltcr.read_pair_file(path), hyps, DATA / "hyp.align"


def _hand_aligned(monkeypatch, pair_file, hyps, alignment):
    """``ltcr.align`` answering with the hand alignment of the rows asked for (found by their
    source), hypotheses split on spaces as hyp.align counts them."""
    from phenomt.core.metrics import ltcr

    whole = [tuple(h.split()) for h in hyps]
    hand = ltcr.read_alignment(alignment, pair_file.source, whole)
    row_of = {source: row for row, source in enumerate(pair_file.source)}

    def align(model, sources, targets):
        rows = [row_of[tuple(s)] for s in sources]
        assert [tuple(t) for t in targets] == [whole[r] for r in rows]
        return [hand[r] for r in rows]

    monkeypatch.setattr(ltcr, "align", align)
    monkeypatch.setattr(ltcr, "tokenize_hypotheses", lambda lines: [x.split() for x in lines])


def test_ltcr_pairs_show_the_hand_judged_verdicts_and_aligned_words(tmp_path, monkeypatch):
    pair_file, hyps, alignment = _mini_ltcr(tmp_path)
    _hand_aligned(monkeypatch, pair_file, hyps, alignment)
    group = sentences.ltcr_group("mini", pair_file, {"A": hyps}, "unused-model")
    assert group["size"] == 16 and len(group["pairs"]) == 16 and group["lines"] == [1, 2, 3,
                                                                                    4, 5, 6]
    verdicts = [p["systems"]["A"]["verdict"] for p in group["pairs"]]
    # 14 judged, 7 consistent, 2 unjudged (政策 s2t3 is "it", a function word)
    assert (verdicts.count("consistent"), verdicts.count("inconsistent"),
            verdicts.count("unjudged")) == (7, 7, 2)
    found = [(p["word"], *p["lines"], p["systems"]["A"]) for p in group["pairs"]]
    assert ("医生", 1, 2, {"first": "the doctor", "second": "doctors",
                          "verdict": "consistent"}) in found
    assert ("医生", 1, 3, {"first": "the doctor", "second": "physician",
                          "verdict": "inconsistent"}) in found
    assert ("政策", 4, 6, {"first": "policies", "second": "it", "verdict": "unjudged"}) in found
    # line 1: 医生 (t0) and 医院 (t2) starred; their aligned words "the doctor", "the hospital"
    assert group["marked_source"]["1"].split()[:3] == ["*医生*", "在", "*医院*"]
    assert group["aligned"]["1"]["A"]["marked"] == [0, 1, 4, 5]
    # the first three pairs only: their lines, and the size still counts every pair
    first = sentences.ltcr_group("mini", pair_file, {"A": hyps}, "unused-model", shown=3)
    assert len(first["pairs"]) == 3 and first["size"] == 16
    assert first["lines"] == sorted({line for p in first["pairs"] for line in p["lines"]})


def test_ltcr_pairs_agree_with_the_metrics_pass_over_the_whole_test_set(tmp_path):
    """A trained aligner: the shown pairs' lines aligned alone give the verdicts the
    registered metric's alignment of every line gives."""
    from phenomt.core.metrics import ltcr
    from tests.test_ltcr import MINI
    from tests.test_ltcr import run as run_lexcons

    pair_file, hyps, _ = _mini_ltcr(tmp_path)
    model = tmp_path / "model"
    assert run_lexcons(["lexcons", "align-train", "--testset", str(MINI), "--model-dir",
                        str(model)]) == 0
    tokens = ltcr.tokenize_hypotheses(hyps)
    whole = ltcr.judge_hypothesis(pair_file.pairs, pair_file.offsets, tokens,
                                  ltcr.align(model, pair_file.source, tokens),
                                  ltcr.make_stemmer(), ltcr.load_function_words())
    names = {True: "consistent", False: "inconsistent", None: "unjudged"}
    expected = [names[v] for p, v in zip(pair_file.pairs, whole, strict=True) if p.in_all]
    for shown in (2, 16):  # lines of the second document only in the longer one
        group = sentences.ltcr_group("mini", pair_file, {"A": hyps}, model, shown=shown)
        assert [p["systems"]["A"]["verdict"] for p in group["pairs"]] == expected[:shown]


def test_ltcr_table_rows_open_their_test_sets_pairs(tmp_path, monkeypatch):
    pair_file, hyps, alignment = _mini_ltcr(tmp_path)
    _hand_aligned(monkeypatch, pair_file, hyps, alignment)
    refs = [f"reference {i}" for i in range(6)]
    record = sentences.sentences_record(testset="mini", sources=[f"s{i}" for i in range(6)],
                                        references=refs, hypotheses={"A": hyps},
                                        ltcr=(pair_file, "unused-model"))
    assert list(record["groups"]) == ["ltcr:mini"]
    header = ["test set", "system", "L-All % [95% CI]", "pairs"]
    assert report.row_group(header, ["mini", "A (baseline)", "50.0 [40, 60]", "16"]) == \
        "ltcr:mini"
    other = {**record, "testset": "other", "groups": {}}
    page = report.table_html("LTCR", header, [["mini", "A", "50.0", "16"],
                                              ["mini", "reference (calibration)", "80", "16"],
                                              ["other", "A", "40.0", "9"]],
                             sentences=[other, record])
    assert page.count('class="drill"') == 1 and page.count('<label for="drill-0"') == 8
    assert '<td class="inconsistent" title="inconsistent">the doctor / physician ≠</td>' in page
    assert "<mark>医生</mark>" in page
    assert '<mark class="ltcr">doctor</mark>' in page
    assert "16 of 16 pairs" not in page and "16 pairs" in page
    with pytest.raises(ValueError, match="pair set has 6 sentences, the test set 2"):
        sentences.sentences_record(testset="mini", sources=["a", "b"], references=["a", "b"],
                                   hypotheses={"A": ["a", "b"]},
                                   ltcr=(pair_file, "unused-model"))
