"""Bad command-line input gives a clear error (exit status 2, ``error:`` and the option, the
file where a file is at fault), never a traceback or a silently wrong result."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

import tests.conftest as conftest
from tests.conftest import ROOT, error_of

TCP = ROOT / "tests" / "data" / "lexcons" / "tcp"
LEXCONS = ROOT / "tests" / "data" / "lexcons"
SYSTEMS = ROOT / "tests" / "data" / "systems"


# --------------------------------------------------------------------------- score tcp

def tcp(tmp_path: Path, *extra: object) -> list[object]:
    return ["score", "tcp", "--hyp", TCP / "hyp.txt", "--reference", TCP / "ref.tok",
            "--candidates", TCP / "candidates", *extra, "--output", tmp_path / "tcp.json"]


def test_tcp_groups_must_add_up_to_the_documents_of_the_key(tmp_path, capsys):
    err = error_of(capsys, *tcp(tmp_path, "--groups", "1", "1", "2"))
    assert f"{TCP / 'candidates'}: has 3 documents but --groups 1 1 2 add up to 4" in err


def test_tcp_docids_need_n_sent(tmp_path, capsys):
    err = error_of(capsys, *tcp(tmp_path, "--groups", "1", "1", "1", "--docids",
                                TCP / "n_sent"))
    assert "--docids needs --n-sent" in err


def test_tcp_window_must_be_positive(tmp_path, capsys):
    err = error_of(capsys, *tcp(tmp_path, "--groups", "1", "1", "1", "--window", "-5"))
    assert "argument --window: expected a positive integer, got -5" in err
    assert not (tmp_path / "tcp.json").exists()


@pytest.mark.parametrize("groups, bad", [(("4", "0", "-1"), "0"), (("2", "2", "-1"), "-1"),
                                         (("3", "0", "0"), "0")])
def test_tcp_group_sizes_must_be_positive(tmp_path, capsys, groups, bad):
    err = error_of(capsys, *tcp(tmp_path, "--groups", *groups))
    assert f"argument --groups: expected a positive integer, got {bad}" in err


# --------------------------------------------------------------------------- score ltcr

def ltcr(tmp_path: Path, *extra: object) -> list[object]:
    return ["score", "ltcr", "--testset", LEXCONS / "mini", "--hyp", LEXCONS / "hyp.txt",
            *extra, "--output", tmp_path / "ltcr.json"]


@pytest.mark.parametrize("level", ["1.5", "0", "1", "-0.5", "nan"])
def test_ltcr_level_is_a_confidence_level(tmp_path, capsys, level):
    err = error_of(capsys, *ltcr(tmp_path, "--alignment", LEXCONS / "hyp.align",
                                 "--level", level))
    assert f"argument --level: expected a number strictly between 0 and 1, got {level}" in err


@pytest.mark.parametrize("resamples", ["-1", "0"])
def test_ltcr_resamples_must_be_positive(tmp_path, capsys, resamples):
    err = error_of(capsys, *ltcr(tmp_path, "--alignment", LEXCONS / "hyp.align",
                                 "--samples", resamples))
    assert f"argument --samples: expected a positive integer, got {resamples}" in err


def test_ltcr_seed_must_not_be_negative(tmp_path, capsys):
    err = error_of(capsys, *ltcr(tmp_path, "--alignment", LEXCONS / "hyp.align",
                                 "--seed", "-1"))
    assert "argument --seed: expected a non-negative integer, got -1" in err


def test_ltcr_jobs_must_be_positive(tmp_path, capsys):
    err = error_of(capsys, *ltcr(tmp_path, "--alignment", LEXCONS / "hyp.align",
                                 "--jobs", "0"))
    assert "argument --jobs: expected a positive integer, got 0" in err


@pytest.mark.parametrize("given", ["--alignment", "--align-model"])
def test_ltcr_extra_data_cannot_be_combined_with_a_given_alignment(tmp_path, capsys, given):
    source = LEXCONS / "hyp.align" if given == "--alignment" else tmp_path
    err = error_of(capsys, *ltcr(tmp_path, given, source, "--extra-src", LEXCONS / "hyp.txt",
                                 "--extra-tgt", LEXCONS / "hyp.txt"))
    assert f"--extra-src/--extra-tgt cannot be combined with {given}" in err
    assert not (tmp_path / "ltcr.json").exists()


# --------------------------------------------------------------------------- systems

def systems_score(tmp_path: Path, *extra: object) -> list[object]:
    return ["systems", "score", "--testset", "toy", "--system", "s", "--hyp",
            SYSTEMS / "hyp_empty.en", "--ref", SYSTEMS / "ref.en", "--target-lang", "en",
            "--samples", "20", *extra, "--output", tmp_path / "score.json"]


def test_systems_mask_name_all_is_reserved(tmp_path, capsys):
    err = error_of(capsys, *systems_score(tmp_path, "--mask", SYSTEMS / "mask.txt",
                                          "--mask-name", "all"))
    assert "argument --mask-name: 'all' is the name of the subset of all lines" in err


@pytest.mark.parametrize("command", ["systems score", "systems ldd-score", "score bleu"])
def test_tokenize_must_be_a_sacrebleu_tokenizer(tmp_path, capsys, command):
    argv = {"systems score": systems_score(tmp_path),
            "systems ldd-score": ["systems", "ldd-score", "--testset", "toy", "--system", "s",
                                  "--hyp", SYSTEMS / "ref.en", "--ref", SYSTEMS / "ref.en",
                                  "--target-lang", "en", "--set",
                                  f"lexical.1={tmp_path / 'set'}",
                                  "--output", tmp_path / "ldd.json"],
            "score bleu": ["score", "bleu", "--hyp", SYSTEMS / "ref.en",
                           "--ref", SYSTEMS / "ref.en"]}[command]
    err = error_of(capsys, *argv, "--tokenize", "foo")
    assert "argument --tokenize: invalid choice: 'foo'" in err and "'13a'" in err


def systems_redundancy(tmp_path: Path, *extra: object) -> list[object]:
    return ["systems", "redundancy", "--testset", "toy", "--system", "s", "--hyp",
            SYSTEMS / "hyp_empty.en", "--src", SYSTEMS / "src.de", "--ref", SYSTEMS / "ref.en",
            "--source-lang", "de", "--target-lang", "en", "--samples", "20", *extra,
            "--output", tmp_path / "red.json"]


def test_systems_redundancy_threshold_is_a_cosine(tmp_path, capsys):
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("moon 0.1 0.2\nsun 0.2 0.1\n", encoding="utf-8")
    err = error_of(capsys, *systems_redundancy(tmp_path, "--embeddings", vectors,
                                               "--threshold", "2"))
    assert "argument --threshold: expected a cosine similarity in [-1, 1], got 2" in err


def test_systems_redundancy_stopword_count_must_not_be_negative(tmp_path, capsys):
    err = error_of(capsys, *systems_redundancy(tmp_path, "--stopword-count", "-3"))
    assert "argument --stopword-count: expected a non-negative integer, got -3" in err
    assert not (tmp_path / "red.json").exists()


@pytest.mark.parametrize("metric, value", [("testset", "'toy'"), ("is_baseline", "True"),
                                           ("settings", "an object without a 'score'")])
def test_systems_mqm_metric_must_be_numeric(tmp_path, capsys, metric, value):
    record = tmp_path / "A.json"
    record.write_text(json.dumps({"testset": "toy", "system": "A", "is_baseline": True,
                                  "settings": {"level": "word"}, "main": "all",
                                  "subsets": {"all": {"drr": 0.1}}}), encoding="utf-8")
    err = error_of(capsys, "systems", "mqm", "--annotations", SYSTEMS / "mqm.tsv",
                   "--records", record, "--metric", metric, "--output", tmp_path / "mqm.json")
    assert f"{record}: --metric {metric}: {value} is not a number" in err
    assert not (tmp_path / "mqm.json").exists()


# Records of one command given to a table of another (minimal, with each kind's fields).
REDUNDANCY = {"testset": "toy", "system": "A", "main": "all", "settings": {}, "bootstrap": {},
              "subsets": {"all": {"sentences": 6, "crr": 0.1, "crr_ci": [0.0, 0.2]}}}
LTCR = {"l_all": 0.5, "l_anno": None, "unjudged_all": 0, "unjudged_anno": 0, "by_pos": {},
        "by_distance": {}, "intervals": {}, "stemmer": "porter", "settings": {}}
TCP_RECORD = {"tense": {"rate": 1.0}, "conjunction": {"rate": 1.0}, "pronoun": {"rate": 1.0},
              "tcp": 1.0, "window": 20}


@pytest.mark.parametrize("command, option, given, expected", [
    ("table systems-bleu", "--scores", REDUNDANCY, "'phenomt systems score'"),
    ("table systems-redundancy", "--records", LTCR, "'phenomt systems redundancy'"),
    ("table systems-redundancy", "--comparisons", REDUNDANCY,
     "'phenomt systems redundancy-test'"),
    ("table systems-mqm", "--mqm", REDUNDANCY, "'phenomt systems mqm'"),
    ("lexcons model-tables", "--ltcr", TCP_RECORD, "'phenomt score ltcr'"),
])
def test_tables_refuse_a_record_of_another_kind(tmp_path, capsys, command, option, given,
                                                expected):
    path = tmp_path / "record.json"
    path.write_text(json.dumps(given), encoding="utf-8")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(REDUNDANCY), encoding="utf-8")
    out = ["--md", tmp_path / "t.md", "--csv", tmp_path / "t.csv"]
    argv = {
        "--scores": ["table", "systems-bleu", "--scores", path, *out],
        "--records": ["table", "systems-redundancy", "--records", path, *out],
        "--comparisons": ["table", "systems-redundancy", "--records", good,
                          "--comparisons", path, *out],
        "--mqm": ["table", "systems-mqm", "--mqm", path, "--testset", "toy", *out],
        "--ltcr": ["lexcons", "model-tables", "--ltcr", f"a={path}", "--ref",
                   SYSTEMS / "ref.en", "--scale", "s", "--testset-note", "t",
                   "--table-prefix", tmp_path / "table"],
    }[option]
    assert argv[:2] == command.split()
    err = error_of(capsys, *argv)
    assert f"{path}: {option} expects a {expected} record; this has no " in err
    assert not list(tmp_path.glob("t*.md")) and not list(tmp_path.glob("table*"))


# --------------------------------------------------------------------------- lexcons subset

@pytest.mark.parametrize("option, value", [("--documents", "-1"), ("--documents", "0"),
                                           ("--document-step", "-1"),
                                           ("--document-step", "0")])
def test_lexcons_subset_counts_must_be_positive(tmp_path, capsys, option, value):
    err = error_of(capsys, "lexcons", "subset", "--testset", LEXCONS / "mini", option, value,
                   "--output", tmp_path / "subset")
    assert f"argument {option}: expected a positive integer, got {value}" in err
    assert not (tmp_path / "subset").exists()


# --------------------------------------------------------------------------- CI strictness

def test_require_fairseq_skips_only_without_the_ci_variable(monkeypatch):
    fake = types.ModuleType("fairseq")
    real = conftest.importlib.import_module
    monkeypatch.setattr(conftest.importlib, "import_module",
                        lambda name: fake if name == "fairseq" else real(name))
    assert conftest.require_fairseq() is fake
    monkeypatch.undo()

    monkeypatch.setitem(sys.modules, "fairseq", None)  # a missing fairseq: ImportError
    monkeypatch.delenv("PHENOMT_REQUIRE_FAIRSEQ", raising=False)
    with pytest.raises(pytest.skip.Exception, match="fairseq cannot be imported"):
        conftest.require_fairseq()
    monkeypatch.setenv("PHENOMT_REQUIRE_FAIRSEQ", "1")
    with pytest.raises(pytest.fail.Exception, match="PHENOMT_REQUIRE_FAIRSEQ is set"):
        conftest.require_fairseq()

    def broken(name: str) -> types.ModuleType:
        raise AttributeError("module 'numpy' has no attribute 'float'")

    monkeypatch.setattr(conftest.importlib, "import_module", broken)
    with pytest.raises(pytest.fail.Exception, match="AttributeError.*REQUIRE_FAIRSEQ is set"):
        conftest.require_fairseq()
    monkeypatch.delenv("PHENOMT_REQUIRE_FAIRSEQ")
    with pytest.raises(AttributeError):  # an error, as under pytest.importorskip
        conftest.require_fairseq()


def test_fairseq_tests_use_the_helper_and_ci_requires_fairseq():
    skip = "importorskip(" + '"fairseq")'
    assert not [p.name for p in (ROOT / "tests").glob("*.py") if skip in p.read_text("utf-8")]
    ci = ROOT / ".ci" / "run"
    if ci.exists():
        lines = ci.read_text(encoding="utf-8").splitlines()
        assert lines.index("export PHENOMT_REQUIRE_FAIRSEQ=1") < lines.index("make test")
