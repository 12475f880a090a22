"""`phenomt systems evaluate`: your own outputs added to a configured test set."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from phenomt.core.io import InputError
from phenomt.evaluate import parse_hyp, with_systems
from phenomt.plan import load_config
from tests.conftest import ROOT

TINY = ROOT / ".test" / "config" / "tiny.yaml"


def test_files_become_systems_of_the_test_set(tmp_path):
    hyp = tmp_path / "mine.en"
    hyp.write_text("a\n")
    config = with_systems(load_config(TINY, validate=False), "newstest2021.de-en",
                          [parse_hyp(str(hyp)), parse_hyp(f"other={hyp}")])
    outputs = config["systems"]["testsets"]["newstest2021.de-en"]["outputs"]
    assert outputs["mine"]["path"] == str(hyp) and outputs["other"]["path"] == str(hyp)
    assert "VolcTrans-AT" in outputs  # the configured systems stay


def test_bad_requests_are_refused_with_the_reason(tmp_path):
    config = load_config(TINY, validate=False)
    with pytest.raises(InputError, match="not a configured test set 'nope'"):
        with_systems(config, "nope", [])
    with pytest.raises(InputError, match="no such file"):
        with_systems(config, "newstest2021.de-en", [("x", tmp_path / "missing")])
    hyp = tmp_path / "h.en"
    hyp.write_text("a\n")
    with pytest.raises(InputError, match="already configured"):
        with_systems(config, "newstest2021.de-en", [("VolcTrans-AT", hyp)])


@pytest.mark.integration
def test_evaluate_scores_a_new_system_beside_the_configured_ones(tmp_path, mirror):
    mine = tmp_path / "mine.en"
    shutil.copy(mirror / "sysout" / "newstest2021.de-en" / "VolcTrans-AT.en", mine)
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(
        [str(Path(sys.executable).with_name("phenomt")), "systems", "evaluate", "--testset",
         "newstest2021.de-en", "--hyp", str(mine), "--configfile", str(TINY),
         "--directory", str(tmp_path)], capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    table = tmp_path / "results" / "tables" / "systems_bleu.csv"
    assert str(table) in result.stdout
    with open(table, newline="", encoding="utf-8") as handle:
        rows = {r["system"].removesuffix(" (baseline)"): r for r in csv.DictReader(handle)}
    # the copy of VolcTrans-AT scores exactly as VolcTrans-AT
    assert {"mine", "VolcTrans-AT", "VolcTrans-GLAT"} <= set(rows)
    bleu = next(c for c in rows["mine"] if c.startswith("BLEU"))
    assert rows["mine"][bleu] == rows["VolcTrans-AT"][bleu]


# --------------------------------------------------------------------------- phenomt evaluate

def _request(tmp_path, **changes):
    from phenomt.evaluate import Request

    src, ref, hyp = (tmp_path / n for n in ("t.de", "t.en", "h.en"))
    for path in (src, ref, hyp):
        path.write_text("ein Satz\nnoch einer\n" if path == src else "a line\nanother\n",
                        encoding="utf-8")
    base = dict(src=src, ref=ref, src_lang="de", tgt_lang="en", hyps=(("mine", hyp),),
                name="t.de-en", baseline="mine", ldd=True, align_extra=(), metrics=("bleu",),
                samples=100, mirror=None)
    return Request(**{**base, **changes})


def test_langs_and_test_set_name():
    import argparse

    from phenomt.evaluate import parse_langs, testset_name

    assert parse_langs("de-en") == ("de", "en")
    assert parse_langs("DE-eng") == ("de", "en")  # ISO 639, in its shortest form
    for bad, message in (("de", "SRC-TGT"), ("de_en", "SRC-TGT"), ("de-de", "same language"),
                         ("xx-en", "'xx' is not an ISO 639"), ("en-US", "'US' is not")):
        with pytest.raises(argparse.ArgumentTypeError, match=message):
            parse_langs(bad)
    assert testset_name(Path("/x/newstest2017.de"), "en", "de") == "newstest2017.en-de"
    assert testset_name(Path("my test!.txt"), "de", "en") == "my_test.de-en"


def test_inputs_are_checked_with_file_and_line(tmp_path):
    from phenomt.evaluate import check_inputs

    request = _request(tmp_path)
    assert check_inputs(request.src, request.ref, request.hyps) == 2
    short = tmp_path / "short.en"
    short.write_text("one\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"short.en.*has 1 lines but .*t.en has 2"):
        check_inputs(request.src, request.ref, (("s", short),))
    blank = tmp_path / "blank.de"
    blank.write_text("ein Satz\n \n", encoding="utf-8")
    with pytest.raises(InputError, match=r"blank.de:2: empty line"):
        check_inputs(blank, request.ref, request.hyps)
    crlf = tmp_path / "crlf.en"
    crlf.write_bytes(b"a\r\nb\r\n")
    with pytest.raises(InputError, match=r"crlf.en:1: carriage return"):
        check_inputs(request.src, request.ref, (("c", crlf),))
    with pytest.raises(InputError, match="given twice: mine"):
        check_inputs(request.src, request.ref, request.hyps * 2)
    with pytest.raises(InputError, match="no such file"):
        check_inputs(tmp_path / "nope.de", request.ref, request.hyps)


def test_generated_config_is_a_valid_plan_of_the_test_set(tmp_path):
    from phenomt.evaluate import evaluate_config, load_config_dict
    from phenomt.plan import Plan

    second = tmp_path / "other.en"
    second.write_text("x\ny\n", encoding="utf-8")
    request = _request(tmp_path)
    request = type(request)(**{**request.__dict__,
                               "hyps": (*request.hyps, ("other", second))})
    config = evaluate_config(request)
    plan = Plan(load_config_dict(config))
    plan.check()
    assert plan.systems.testsets == ["t.de-en"]
    assert plan.systems.systems("t.de-en") == ["mine", "other"]
    assert plan.systems.comparisons("t.de-en") == [("other", "mine")]
    assert plan.systems.ldd_testsets == ["t.de-en"]
    # the test set's files are linked from where they are, whatever the mirror
    assert config["downloads"]["t.de-en.de"] == {"url": None, "mirror": str(request.src)}
    # no mirror given: the official models; the target's parses the reference (POS buckets)
    assert config["ldd"]["udpipe"] == {"de": "udpipe.german-gsd-2.5",
                                       "en": "udpipe.english-ewt-2.5"}
    extra = evaluate_config(type(request)(**{**request.__dict__,
                                             "align_extra": ("multi30k.train",)}))
    extra_plan = Plan(load_config_dict(extra))
    extra_plan.check()
    assert extra_plan.ldd.align_corpora() == ["t.de-en", "multi30k.train"]
    no_ldd = evaluate_config(type(request)(**{**request.__dict__, "ldd": False}))
    assert "ldd" not in no_ldd and not Plan(load_config_dict(no_ldd)).systems.ldd_testsets
    # the POS buckets read the reference's tags; without them (--no-pos-buckets) nothing
    # tags the reference and the target's model is not fetched
    tags = plan.ldd.tags_output("t_de-en", "en")
    assert tags in plan.systems.analysis_pair_inputs("t.de-en", "other")
    assert f"--ref-conllu {tags}" in plan.systems.analysis_pair_args("t.de-en", "other")
    no_pos = evaluate_config(type(request)(**{**request.__dict__, "pos_buckets": False}))
    assert no_pos["ldd"]["udpipe"] == {"de": "udpipe.german-gsd-2.5"}
    no_pos_plan = Plan(load_config_dict(no_pos))
    no_pos_plan.check()
    assert no_pos_plan.systems.ldd_testsets == ["t.de-en"]
    inputs = no_pos_plan.systems.analysis_pair_inputs("t.de-en", "other")
    assert not any("/tags/" in path for path in inputs)
    assert "--ref-conllu" not in no_pos_plan.systems.analysis_pair_args("t.de-en", "other")


def test_a_rerun_keeps_earlier_systems_and_refuses_another_test_set(tmp_path):
    import yaml

    from phenomt.evaluate import CONFIG, evaluate_config, merged_hyps

    first = _request(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / CONFIG).write_text(yaml.safe_dump(evaluate_config(first)),
                                           encoding="utf-8")
    new = tmp_path / "new.en"
    new.write_text("a\nb\n", encoding="utf-8")
    added = merged_hyps(tmp_path / "out", _request(tmp_path, hyps=(("new", new),),
                                                   baseline="new"), baseline_given=False)
    assert [n for n, _ in added.hyps] == ["mine", "new"] and added.baseline == "mine"
    with pytest.raises(InputError, match="'mine' was .*h.en"):
        merged_hyps(tmp_path / "out", _request(tmp_path, hyps=(("mine", new),)), False)
    with pytest.raises(InputError, match="another test set"):
        merged_hyps(tmp_path / "out", _request(tmp_path, ref=new), False)


def test_freq_corpus_is_a_download_of_the_generated_config(tmp_path):
    from phenomt.evaluate import evaluate_config, load_config_dict
    from phenomt.plan import Plan

    corpus = tmp_path / "train.en"
    corpus.write_text("a line\n", encoding="utf-8")
    config = evaluate_config(_request(tmp_path, freq_corpus=corpus,
                                      hyps=(("mine", tmp_path / "h.en"),
                                            ("other", tmp_path / "h.en"))))
    assert config["downloads"]["t.de-en.freq"] == {"url": None, "mirror": str(corpus)}
    plan = Plan(load_config_dict(config))
    plan.check()
    assert plan.systems.analysis_pairs("t.de-en") == ["other"]
    assert "--freq-corpus resources/downloads/t.de-en.freq" in \
        plan.systems.analysis_pair_args("t.de-en", "other")
    assert "resources/downloads/t.de-en.freq" in plan.systems.analysis_pair_inputs(
        "t.de-en", "other")
    # without it, wordfreq's list: no frequency file among the inputs
    plain = Plan(load_config_dict(evaluate_config(_request(
        tmp_path, hyps=(("mine", tmp_path / "h.en"), ("other", tmp_path / "h.en"))))))
    assert "--freq-corpus" not in plain.systems.analysis_pair_args("t.de-en", "other")
    assert plain.systems.analysis_testsets == ["t.de-en"]


def test_the_pos_buckets_tag_a_reference_that_no_challenge_set_parses(tmp_path):
    from phenomt.evaluate import evaluate_config, load_config_dict
    from phenomt.plan import Plan

    # De->En: the sets parse the German source; the English reference is only tagged
    plan = Plan(load_config_dict(evaluate_config(_request(
        tmp_path, hyps=(("mine", tmp_path / "h.en"), ("other", tmp_path / "h.en"))))))
    plan.check()
    tags = plan.ldd.tags_output("t_de-en", "en")
    assert tags.endswith("ldd/tags/t_de-en.en.conllu")
    assert tags in plan.systems.analysis_pair_inputs("t.de-en", "other")
    args = plan.systems.analysis_pair_args("t.de-en", "other")
    assert f"--ref-conllu {tags}" in args
    # the outputs' word tokens from their CRR/DRR jobs, which the POS buckets read
    tokens = plan.systems.hyp_tokens("t.de-en", "other")
    assert tokens in plan.systems.analysis_pair_inputs("t.de-en", "other")
    assert f"other={tokens}" in args and "--hyp-tokens" in args
    assert plan.ldd.parse_args("tags") == "--tag-only" and plan.ldd.parse_args("parse") == ""
    assert not plan.ldd.is_parsed("t_de-en", "en")
    with pytest.raises(ValueError, match="unknown parse kind"):
        plan.ldd.parse_args("trees")


def _ids(tmp_path, text: str, name: str = "ids.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_docids_are_checked_with_file_and_line(tmp_path):
    from phenomt.evaluate import check_docids

    request = _request(tmp_path)  # two lines
    zh_en = ("zh", "en")
    assert check_docids(_ids(tmp_path, "talk.1\ntalk.1\n"), zh_en, request.ref, 2) == [
        "talk.1", "talk.1"]
    with pytest.raises(InputError, match=r"ids.txt:1: every one of the 2 lines is a document"):
        check_docids(_ids(tmp_path, "talk.1\ntalk.2\n"), zh_en, request.ref, 2)
    with pytest.raises(InputError, match=r"ids.txt:2: has 1 lines but .*t.en has 2: it ends"):
        check_docids(_ids(tmp_path, "talk.1\n"), zh_en, request.ref, 2)
    with pytest.raises(InputError, match=r"ids.txt:3: has 3 lines but .*t.en has 2"):
        check_docids(_ids(tmp_path, "a\na\nb\n"), zh_en, request.ref, 2)
    with pytest.raises(InputError, match=r"ids.txt:2: empty document id"):
        check_docids(_ids(tmp_path, "talk.1\n \n"), zh_en, request.ref, 2)
    with pytest.raises(InputError, match=r"ids.txt:1: carriage return"):
        check_docids(_ids(tmp_path, "a\r\na\r\n"), zh_en, request.ref, 2)
    with pytest.raises(InputError, match=r"ids.txt:3: document 'a' continues after another"):
        check_docids(_ids(tmp_path, "a\nb\na\n"), zh_en, request.ref, 3)
    with pytest.raises(InputError, match=r"ids.txt: --docids is for LTCR, which is defined "
                                         r"for zh-en only \(its repeated source words are "
                                         r"Chinese words segmented by jieba\); this test set "
                                         r"is de-en"):
        check_docids(_ids(tmp_path, "a\na\n"), ("de", "en"), request.ref, 2)
    with pytest.raises(InputError, match="nope.txt: no such file"):
        check_docids(tmp_path / "nope.txt", zh_en, request.ref, 2)


def test_docids_make_ltcr_jobs_of_the_generated_config(tmp_path):
    import yaml

    from phenomt.evaluate import CONFIG, evaluate_config, load_config_dict, merged_hyps
    from phenomt.plan import Plan

    ids = _ids(tmp_path, "talk.1\ntalk.2\n")
    request = _request(tmp_path, src_lang="zh", name="t.zh-en", ldd=False, docids=ids,
                       align_extra=("newstest2017.zh-en",))
    config = evaluate_config(request)
    plan = Plan(load_config_dict(config))
    plan.check()
    assert config["downloads"]["t.zh-en.docids"] == {"url": None, "mirror": str(ids)}
    assert plan.data.all_docids() == ["results/data/raw/t.zh-en.docids"]
    systems = plan.systems
    assert systems.ltcr_testsets == ["t.zh-en"] and systems.ltcr_sets() == ["t.zh-en"]
    # every system, then the reference scored as a hypothesis (the calibration)
    assert systems.ltcr_systems("t.zh-en") == ["mine", "reference"]
    assert systems.ltcr_hyp("t.zh-en", "reference") == "results/data/raw/t.zh-en.en"
    assert systems.ltcr_hyp("t.zh-en", "mine") == str(request.hyps[0][1])
    assert "--docids results/data/raw/t.zh-en.docids" in systems.ltcr_layout_args("t.zh-en")
    assert systems.ltcr_align_extra_inputs("t.zh-en") == [
        "results/data/tok/newstest2017.zh-en.zh", "results/data/tok/newstest2017.zh-en.en"]
    assert systems.all_ltcr() == ["results/systems/t.zh-en/mine.ltcr.json",
                                  "results/systems/t.zh-en/reference.ltcr.json"]
    assert "results/tables/systems_ltcr.md" in plan.tables()
    assert "--baseline t.zh-en=mine" in systems.ltcr_table_args()
    # LTCR is not a metric of the systems table unless named, then with its layout and aligner
    assert systems.score_inputs("t.zh-en") == []
    named_ltcr = Plan(load_config_dict(evaluate_config(
        _request(tmp_path, src_lang="zh", name="t.zh-en", ldd=False, docids=ids,
                 metrics=("bleu", "ltcr"))))).systems
    assert named_ltcr.score_inputs("t.zh-en") == ["results/systems/t.zh-en/pairs.json",
                                                  "results/systems/t.zh-en/align/settings.json"]
    assert ("--metrics bleu ltcr --setting ltcr.pairs=results/systems/t.zh-en/pairs.json "
            "ltcr.align_model=results/systems/t.zh-en/align") in named_ltcr.score_args(
                "t.zh-en", "mine")
    # a rerun without --docids keeps the earlier run's
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / CONFIG).write_text(yaml.safe_dump(config), encoding="utf-8")
    again = merged_hyps(tmp_path / "out", _request(tmp_path, src_lang="zh", name="t.zh-en",
                                                   ldd=False), False)
    assert again.docids == ids
    # no LTCR without document ids; a system cannot take the calibration row's name
    assert not Plan(load_config_dict(evaluate_config(
        _request(tmp_path, src_lang="zh", name="t.zh-en", ldd=False)))).systems.ltcr_testsets
    named = evaluate_config(_request(tmp_path, src_lang="zh", name="t.zh-en", ldd=False,
                                     docids=ids, hyps=(("reference", request.hyps[0][1]),),
                                     baseline="reference"))
    with pytest.raises(ValueError, match="no system can be named 'reference'"):
        Plan(load_config_dict(named)).check()


def _evaluate(tmp_path, mirror, *hyps: str) -> subprocess.CompletedProcess:
    """`phenomt evaluate` on newstest2021 de-en from the mirror, run from tmp_path with a PATH
    that does not hold the virtualenv."""
    data = mirror / "sysout" / "newstest2021.de-en"
    env = dict(os.environ, PATH="/usr/bin:/bin", PHENOMT_MIRROR=str(mirror))
    return subprocess.run(
        [str(Path(sys.executable).with_name("phenomt")), "evaluate",
         "--src", str(data / "_testset" / "newstest2021.de"),
         "--ref", str(data / "_testset" / "newstest2021.en"), "--langs", "de-en",
         *[a for h in hyps for a in ("--hyp", f"{h}={data / h}.en")],
         "--samples", "200", "--outdir", "eval", "--cores", "2"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=1800)


@pytest.mark.integration
def test_evaluate_any_test_set_outside_the_checkout_without_the_venv_on_path(tmp_path, mirror):
    result = _evaluate(tmp_path, mirror, "VolcTrans-AT", "VolcTrans-GLAT")
    assert result.returncode == 0, result.stderr[-3000:]
    out = tmp_path / "eval"
    lines = result.stdout.splitlines()
    # quiet: the summary and the paths; Snakemake's log is in the outdir
    assert len(lines) + len(result.stderr.splitlines()) <= 30, result.stdout + result.stderr
    # 50: the analysis of GLAT against the baseline and its merge into the test set's, the
    # one job of its three tables, their HTML views and its figure among them; the challenge
    # sets' tables in one job too; the English UDPipe model fetched and the reference parsed
    # (scatter, two shards, gather) for the POS buckets; the sentences the views open
    assert result.stderr.startswith("50 of 50 jobs run in ")
    log = (out / "snakemake.log").read_text("utf-8")
    assert "localrule systems_score:" in log and "localrule systems_sentences:" in log
    assert lines[0].startswith("newstest2021.de-en: 1000 lines, baseline VolcTrans-AT")
    summary = {line.split(":")[0].strip(): line for line in lines[1:3]}
    assert set(summary) == {"VolcTrans-AT", "VolcTrans-GLAT"}
    for line in summary.values():
        assert "BLEU" in line and "chrF" in line and "CRR+DRR" in line
        assert "challenge set" in line and "significantly below the full set" in line
    tables = out / "results" / "tables"
    for name in ("systems_bleu", "systems_redundancy", "systems_ldd_table4.newstest2021.de-en"):
        assert (tables / f"{name}.md").is_file() and f"{tables / name}.md" in result.stdout
    assert (out / "report.html").stat().st_size > 100_000
    figure = out / "results" / "figures" / "systems_ldd_sets.newstest2021.de-en.png"
    assert figure.stat().st_size > 10_000 and str(figure) in result.stdout
    with open(tables / "systems_redundancy.csv", newline="", encoding="utf-8") as handle:
        glat = next(r for r in csv.DictReader(handle) if r["system"] == "VolcTrans-GLAT")
    assert glat["paired test"].startswith("vs VolcTrans-AT: ΔCRR")

    # one more system: only its own jobs (and the tables) run
    again = _evaluate(tmp_path, mirror, "Online-B")
    assert again.returncode == 0, again.stderr[-3000:]
    ran = _ran(out)
    assert ran.count("systems_score") == 1 and ran.count("systems_redundancy") == 1
    assert ran.count("systems_ldd_score") == 1
    assert ran.count("systems_analysis_pair") == 1  # its own analysis, not GLAT's again
    assert not {"align_train", "parse", "ldd_extract_lexical"} & set(ran)
    assert "Online-B:" in again.stdout and "VolcTrans-GLAT:" in again.stdout


def test_mqm_annotations_become_an_mqm_set_of_the_test_set(tmp_path):
    import yaml

    from phenomt.evaluate import CONFIG, evaluate_config, load_config_dict, merged_hyps, mqm_set
    from phenomt.plan import Plan

    annotations = ROOT / "tests" / "data" / "systems" / "mqm.tsv"
    assert mqm_set(annotations, "t.mqm", "de", "en") == {
        "annotations": "t.mqm", "src": "de", "tgt": "en", "systems": ["A", "B", "C", "D", "ref"],
        "reference": "ref", "ltcr": False}
    assert mqm_set(annotations, "t.mqm", "zh", "en")["ltcr"] is True
    request = _request(tmp_path, mqm=annotations)
    config = evaluate_config(request)
    plan = Plan(load_config_dict(config))
    plan.check()
    assert plan.systems.mqm_sets == ["t.de-en"]
    assert config["downloads"]["t.de-en.mqm"]["mirror"] == str(annotations)
    # a rerun without --mqm keeps the annotations of the earlier run
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / CONFIG).write_text(yaml.safe_dump(config), encoding="utf-8")
    assert merged_hyps(tmp_path / "out", _request(tmp_path), False).mqm == annotations
    no_ref = tmp_path / "no_ref.tsv"
    no_ref.write_text("".join(line for line in annotations.read_text(encoding="utf-8")
                              .splitlines(keepends=True) if not line.startswith("ref\t")),
                      encoding="utf-8")
    with pytest.raises(InputError, match="no system 'ref'"):
        mqm_set(no_ref, "t.mqm", "de", "en")


#: Real outputs of the MQM-annotated WMT21 TED talks, Zh->En, scored by the LTCR test.
TED_SYSTEMS = ("NiuTrans", "Facebook-AI", "DIDI-NLP")


def _ted_zh_en(folder: Path, mirror: Path, talks: int = 4) -> Path:
    """The first ``talks`` talks of the mirror's MQM-annotated WMT21 TED Zh->En set as plain
    files in ``folder``: ``ted.zh``, the human translation ``ref`` as ``ted.en``, the talk of
    every line as ``ted.docids`` and an output per system of :data:`TED_SYSTEMS`."""
    from phenomt.core.io import write_lines
    from phenomt.systems.mqm import read_mqm
    from phenomt.systems.outputs import mqm_outputs

    path = mirror / "sysout" / "annotations" / "mqm_ted_zhen.tsv"
    recovered = mqm_outputs(read_mqm(path), path)
    kept = set(list(dict.fromkeys(recovered.documents))[:talks])
    lines = [n for n, doc in enumerate(recovered.documents) if doc in kept]
    files = {"ted.zh": recovered.source, "ted.en": recovered.outputs["ref"],
             "ted.docids": recovered.documents,
             **{f"{s}.en": recovered.outputs[s] for s in TED_SYSTEMS}}
    for name, column in files.items():
        write_lines(folder / name, [column[n] for n in lines])
    return folder


def _evaluate_ted(tmp_path: Path, mirror: Path, *systems: str, report: bool = False
                  ) -> subprocess.CompletedProcess:
    """`phenomt evaluate --docids` on the TED set, from tmp_path without the virtualenv on
    PATH; the HTML report (and its views of the tables) only with ``report``."""
    data = tmp_path / "ted"
    env = dict(os.environ, PATH="/usr/bin:/bin", PHENOMT_MIRROR=str(mirror))
    return subprocess.run(
        [str(Path(sys.executable).with_name("phenomt")), "evaluate",
         "--src", str(data / "ted.zh"), "--ref", str(data / "ted.en"), "--langs", "zh-en",
         "--docids", str(data / "ted.docids"), "--metrics", "bleu", "ltcr",
         *[a for s in systems for a in ("--hyp", f"{s}={data / s}.en")],
         "--samples", "200", "--outdir", "eval", "--cores", "2",
         *([] if report else ["--no-report"])],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=1800)


@pytest.mark.integration
def test_evaluate_docids_scores_ltcr_of_zh_en_outputs_and_the_reference(tmp_path, mirror):
    (tmp_path / "ted").mkdir()
    _ted_zh_en(tmp_path / "ted", mirror)
    result = _evaluate_ted(tmp_path, mirror, "NiuTrans", "Facebook-AI", report=True)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("ted.zh-en: 370 lines, baseline NiuTrans, LTCR on 4 documents")
    summary = {line.split(":")[0].strip(): line for line in lines[1:4]}
    assert set(summary) == {"NiuTrans", "Facebook-AI", "reference (calibration)"}
    # LTCR named as a metric: a cell with its document-bootstrap interval (the reference's
    # calibration line is the LTCR record's)
    for system in ("NiuTrans", "Facebook-AI"):
        assert re.search(r"LTCR [\d.]+ \[[\d.]+, [\d.]+\]", summary[system]), summary[system]
    assert "LTCR L-All" in summary["reference (calibration)"]
    table = tmp_path / "eval" / "results" / "tables" / "systems_ltcr"
    assert f"{table}.md" in result.stdout
    with open(f"{table}.csv", newline="", encoding="utf-8") as handle:
        rows = {r["system"]: r for r in csv.DictReader(handle)}
    assert list(rows) == ["NiuTrans (baseline)", "Facebook-AI", "reference (calibration)"]
    for row in rows.values():
        assert (row["test set"], row["documents"], row["sentences"]) == ("ted.zh-en", "4",
                                                                       "370")
        value, low, high = (float(x) for x in re.findall(r"[\d.]+", row["L-All % [95% CI]"]))
        assert 0 < low <= value <= high < 100 and int(row["judged"]) > 0
    assert rows["Facebook-AI"]["paired test"].startswith("vs NiuTrans: ΔL-All ")
    # the table has its HTML view for the report, whose rows open the first LTCR pairs with
    # each system's aligned words and verdicts
    page = (tmp_path / "eval" / "results" / "report" / "systems" / "systems_ltcr.html")
    assert 'data-group="ltcr:ted.zh-en"' in page.read_text(encoding="utf-8")
    drill = json.loads((tmp_path / "eval" / "results" / "systems" / "ted.zh-en" /
                        "sentences.json").read_text(encoding="utf-8"))["groups"]["ltcr:ted.zh-en"]
    assert len(drill["pairs"]) == 20 and drill["size"] > 20
    assert {v["verdict"] for p in drill["pairs"] for v in p["systems"].values()} <= {
        "consistent", "inconsistent", "unjudged"}
    assert all(set(p["systems"]) == {"NiuTrans", "Facebook-AI"} for p in drill["pairs"])

    # one more system: only its own jobs (its LTCR among them) and the tables run
    again = _evaluate_ted(tmp_path, mirror, "DIDI-NLP")
    assert again.returncode == 0, again.stderr[-3000:]
    ran = _ran(tmp_path / "eval")
    assert ran.count("systems_ltcr") == 1 and ran.count("systems_score") == 1
    assert "table_systems_ltcr" in ran
    assert not {"systems_ltcr_layout", "systems_ltcr_align_train", "corpus_docids",
                "prepare_corpus", "systems_tokenize"} & set(ran)
    assert "DIDI-NLP:" in again.stdout and "reference (calibration):" in again.stdout

    # other document ids (the first two talks as one) with an older file time: LTCR again
    ids = (tmp_path / "ted" / "ted.docids").read_text("utf-8").splitlines()
    first_two = list(dict.fromkeys(ids))[:2]
    merged = "".join(f"{first_two[0] if i in first_two else i}\n" for i in ids)
    (tmp_path / "ted" / "ted.docids").write_text(merged, encoding="utf-8")
    os.utime(tmp_path / "ted" / "ted.docids", (1_577_836_800, 1_577_836_800))
    third = _evaluate_ted(tmp_path, mirror, "DIDI-NLP")
    assert third.returncode == 0, third.stderr[-3000:]
    assert "LTCR on 3 documents" in third.stdout.splitlines()[0]
    assert _ran(tmp_path / "eval").count("systems_ltcr") == 4  # three systems, the reference


def _ran(outdir: Path) -> list[str]:
    """The rules of the jobs the last run in ``outdir`` started, from its log."""
    log = (outdir / "snakemake.log").read_text("utf-8").splitlines()
    return [line.split()[-1].rstrip(":") for line in log
            if line.startswith(("rule ", "localrule "))]


def test_the_job_server_is_told_what_the_run_needs_before_any_check():
    """Started before the inputs are checked, the server learns from the command line alone
    which wordfreq list to load, whether the LDD sets' modules are needed and which
    reference the score jobs read."""
    from phenomt.cli import build_parser
    from phenomt.evaluate import _server_args

    def parsed(*more: str):
        return build_parser(["phenomt.evaluate"]).parse_args(
            ["evaluate", "--src", "s", "--ref", "r", "--hyp", "a=h", "--hyp", "b=g",
             "--outdir", "o", *more])

    # and, for several systems, the reference, its language and the metrics, for the score
    # jobs' n-grams
    scores = ["--reference=r", "--target-lang=en", "--metrics=bleu,chrf"]
    one = build_parser(["phenomt.evaluate"]).parse_args(
        ["evaluate", "--src", "s", "--ref", "r", "--hyp", "a=h", "--langs", "de-en"])
    assert _server_args(one) == ["--wordfreq=en", "--ldd"]
    assert _server_args(parsed("--langs", "de-en")) == ["--wordfreq=en", "--ldd", *scores]
    assert _server_args(parsed("--langs", "de-en", "--no-ldd")) == ["--wordfreq=en", *scores]
    # no UDPipe model for Chinese: no LDD sets; a frequency corpus: no list
    assert _server_args(parsed("--langs", "zh-en", "--freq-corpus", "f")) == scores
    # a reference named like an option stays the reference
    assert _server_args(parsed("--langs", "de-en", "--no-ldd", "--ref=-r.en",
                               "--metrics", "ter"))[1:] == [
        "--reference=-r.en", "--target-lang=en", "--metrics=ter"]


def test_no_pos_buckets_reaches_the_generated_config(tmp_path):
    """``--no-pos-buckets`` turns the test set's POS buckets off in the config the run writes;
    without it they are on (the schema's default)."""
    from phenomt.cli import build_parser
    from phenomt.evaluate import prepare

    request = _request(tmp_path)

    def testset(*more: str) -> dict:
        args = build_parser(["phenomt.evaluate"]).parse_args(
            ["evaluate", "--src", str(request.src), "--ref", str(request.ref), "--langs",
             "de-en", "--hyp", f"mine={request.hyps[0][1]}", "--outdir",
             str(tmp_path / "out"), "--force-langs", *more])
        prepared = prepare(args)[2]
        return prepared["config"]["systems"]["testsets"]["t.de-en"]

    assert testset()["pos_buckets"] is True
    assert testset("--no-pos-buckets")["pos_buckets"] is False


def _set(difference, sentences, below):
    return {"difference": difference, "sentences": sentences, "below": below}


def test_the_summary_names_the_significant_drops_not_the_largest_noise():
    from phenomt.evaluate import _challenge_verdict

    # uedin-nmt on newstest2017 En-De: particle.ge2 drops most but within noise; two sets
    # are significantly below, particle.all the larger drop of them; ge3 has no verdict
    record = {"sets": {"particle.all": _set(-4.47, 198, True),
                       "particle.ge2": _set(-6.01, 10, False),
                       "particle.ge3": _set(-12.9, 5, None),
                       "reorder.ge5": _set(-1.04, 1728, True),
                       "reflexive.ge3": _set(None, 0, None)}}
    assert _challenge_verdict(record) == (
        "challenge sets: 2 of 3 significantly below the full set, most particle.all "
        "(-4.47 BLEU, 198 sentences)")
    record["sets"]["particle.all"]["below"] = record["sets"]["reorder.ge5"]["below"] = False
    assert _challenge_verdict(record) == (
        "challenge sets: none of 3 significantly below the full set; largest drop "
        "particle.ge2 (-6.01 BLEU, 10 sentences, within noise)")
    assert _challenge_verdict({"sets": {"particle.ge3": _set(-12.9, 5, None)}}) == (
        "no challenge set of 10+ sentences")


def test_the_summary_gives_the_reordering_sets_ribes_verdict():
    from phenomt.evaluate import _ribes_verdict

    ribes = {"reorder.ge5": _set(-0.0158, 522, True), "reorder.ge7": _set(-0.0201, 300, True),
             "reorder.ge9": _set(-0.0302, 8, None)}
    record = {"sets": {"particle.all": {**_set(-1.0, 87, False), "ribes": None},
                       **{name: {**_set(-1.0, 9, False), "ribes": entry}
                          for name, entry in ribes.items()}}}
    # the largest significant drop; ge9 (8 sentences) has no verdict
    assert _ribes_verdict(record) == (
        "; RIBES: 2 of 2 reordering sets significantly below, most reorder.ge7 (-0.0201)")
    ribes["reorder.ge5"]["below"] = ribes["reorder.ge7"]["below"] = False
    assert _ribes_verdict(record) == "; RIBES: none of 2 reordering sets significantly below"
    # a record of an earlier layout: RIBES without a test
    assert _ribes_verdict({"sets": {"reorder.ge5": {"ribes": {"difference": -0.01}}}}) == ""


def test_the_cache_of_parses_given_to_the_jobs(tmp_path, monkeypatch):
    import argparse

    from phenomt.evaluate import parse_cache

    def cache(**given) -> str:
        return parse_cache(argparse.Namespace(**{"no_cache": False, "cache_dir": None,
                                                 **given}))

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PHENOMT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache() == str(tmp_path / "xdg" / "phenomt")
    monkeypatch.setenv("PHENOMT_CACHE", "mine")  # relative: the jobs run in the output folder
    assert cache() == str(tmp_path / "mine")
    monkeypatch.setenv("PHENOMT_CACHE", "")
    assert cache() == ""
    assert cache(cache_dir="given") == str(tmp_path / "given")
    monkeypatch.setenv("PHENOMT_CACHE", "mine")
    assert cache(no_cache=True) == ""


# ------------------------------------------------------- checked bytes, controls, systems evaluate

def _prepared(tmp_path, *more: str):
    from phenomt.cli import build_parser
    from phenomt.evaluate import prepare

    request = _request(tmp_path)
    args = build_parser(["phenomt.evaluate"]).parse_args(
        ["evaluate", "--src", str(request.src), "--ref", str(request.ref), "--langs", "de-en",
         "--hyp", f"mine={request.hyps[0][1]}", "--outdir", str(tmp_path / "out"),
         "--force-langs", "--no-ldd", *more])
    return request, prepare(args)


def test_the_copies_hold_the_bytes_that_were_checked(tmp_path):
    """A file that changes after its check (a decoder still writing it) is not copied as
    it now is: the copy holds the bytes the checks read; a file read by another reader
    (the frequency corpus) that changed is refused before any copy is written."""
    from phenomt.evaluate import inputs

    freq = tmp_path / "freq.en"
    freq.write_text("a line of text\n", encoding="utf-8")
    request, (_, outdir, prepared, _) = _prepared(tmp_path, "--freq-corpus", str(freq))
    hyp = request.hyps[0][1]
    checked = hyp.read_bytes()
    hyp.write_bytes(checked + b"one more line\r\n")  # now 3 lines, with a CR
    freq.write_text("other text\r\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"freq.en: changed while it was checked"):
        inputs.sync(prepared["copies"], prepared["contents"], prepared["digests"])
    assert not outdir.exists()  # nothing written
    freq.write_text("a line of text\n", encoding="utf-8")  # back as it was checked
    written = inputs.sync(prepared["copies"], prepared["contents"], prepared["digests"])
    assert "hyp.mine" in written and "freq" in written
    assert (outdir / "inputs" / "hyp.mine.txt").read_bytes() == checked


def test_control_characters_are_refused_with_file_and_line_but_tabs_pass(tmp_path):
    from phenomt.evaluate import check_inputs

    request = _request(tmp_path)
    tabbed = tmp_path / "tab.en"
    tabbed.write_text("a\tline\nanother\n", encoding="utf-8")
    assert check_inputs(request.src, request.ref, (("t", tabbed),)) == 2
    for name, text, where in (("nul.en", "a line\n\x00\n", "nul.en:2: control character "
                                                           "U+0000 at column 1"),
                              ("esc.en", "a \x1b[1mline\nanother\n", "esc.en:1: control "
                                                                      "character U+001B"),
                              ("del.en", "a line\nano\x7fther\n", "del.en:2: control "
                                                                  "character U+007F")):
        bad = tmp_path / name
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match=re.escape(where)):
            check_inputs(request.src, request.ref, (("b", bad),))
        with pytest.raises(InputError, match=re.escape(where)):
            check_inputs(request.src, bad, request.hyps)


def _systems_evaluate(tmp_path, monkeypatch, *hyps: str) -> tuple[int, list[list[str]]]:
    """``phenomt systems evaluate`` on the tiny config's newstest2021.de-en, whose
    reference (three lines) is already prepared; Snakemake's runs are recorded, not made."""
    import phenomt.evaluate as evaluate
    from phenomt.cli import main

    ref = tmp_path / "results" / "data" / "raw" / "newstest2021.de-en.en"
    if not ref.exists():
        ref.parent.mkdir(parents=True)
        ref.write_text("a b\nc d\ne f\n", encoding="utf-8")
    runs: list[list[str]] = []
    monkeypatch.setattr(evaluate.subprocess, "run", lambda cmd, **kw: runs.append(cmd)
                        or subprocess.CompletedProcess(cmd, 0))
    args = ["systems", "evaluate", "--testset", "newstest2021.de-en", "--configfile",
            str(TINY), "--directory", str(tmp_path)]
    for hyp in hyps:
        args += ["--hyp", hyp]
    return main(args), runs


@pytest.mark.parametrize(("text", "message"), [
    ("a b\nc d\n", "short.en:3: has 2 lines but"),
    ("a b\r\nc d\r\ne f\r\n", "short.en:1: carriage return"),
    ("a b\nc\x00d\ne f\n", "short.en:2: control character U+0000"),
    (b"a b\n\xff\ne f\n", "short.en:2: invalid UTF-8"),
])
def test_systems_evaluate_checks_the_file_before_it_writes_or_runs(tmp_path, monkeypatch,
                                                                   capsys, text, message):
    hyp = tmp_path / "short.en"
    hyp.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    status, runs = _systems_evaluate(tmp_path, monkeypatch, str(hyp))
    err = capsys.readouterr().err
    assert status == 2 and message in err and "Traceback" not in err, err
    assert runs == []  # nothing run, nothing written
    assert not (tmp_path / "results" / "evaluate").exists()


def test_systems_evaluate_reads_content_synced_copies(tmp_path, monkeypatch):
    """The overlay config names a copy of the file, rewritten when its content changes: a
    file replaced by other content with an older time is scored again."""
    hyp = tmp_path / "mine.en"
    hyp.write_text("a b\nc d\ne x\n", encoding="utf-8")
    status, runs = _systems_evaluate(tmp_path, monkeypatch, f"mine={hyp}")
    assert status == 0 and len(runs) == 1
    overlay = Path(runs[0][runs[0].index("--configfile") + 1])
    config = load_config(overlay, validate=False)
    spec = config["systems"]["testsets"]["newstest2021.de-en"]["outputs"]["mine"]
    copy = tmp_path / spec["path"]
    assert spec["path"] == "results/evaluate/inputs/hyp.mine.newstest2021.de-en.txt"
    assert spec["origin"] == f"your file {hyp}"
    assert copy.read_bytes() == hyp.read_bytes()
    before = copy.stat().st_mtime_ns
    hyp.write_text("a b\nc d\ne f\n", encoding="utf-8")
    os.utime(hyp, (1_577_836_800, 1_577_836_800))  # older than the copy
    status, _ = _systems_evaluate(tmp_path, monkeypatch, f"mine={hyp}")
    assert status == 0
    assert copy.read_bytes() == b"a b\nc d\ne f\n" and copy.stat().st_mtime_ns >= before
