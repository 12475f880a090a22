"""scripts/gpu_check.py's own logic, on the CPU: reading pytest's report, the test subset for
batch-1 decoding, and the summary (the GPU run itself is recorded in benchmarks/README.md)."""

from __future__ import annotations

import importlib.util
import json

from phenomt.core.nmt import TEXT_TEST_FILES
from tests.conftest import ROOT

SPEC = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(gpu_check)

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_overfit" name="test_dat_memorises[cuda-fp16]" time="41.25"/>
<testcase classname="tests.test_overfit" name="test_transformer_memorises[cuda-fp16]"
 time="12.0"><failure
 message="AssertionError: transformer at BLEU 12.0 (&lt; 90.0)&#10;first hyps: []"
>trace</failure></testcase>
<testcase classname="tests.test_overfit" name="test_dat_memorises[cuda-fp32]" time="3">
<skipped message="no CUDA device"/></testcase>
</testsuite></testsuites>"""


def test_junit_outcomes_name_each_test_its_outcome_and_first_message_line(tmp_path):
    path = tmp_path / "overfit.xml"
    path.write_text(JUNIT, encoding="utf-8")
    assert gpu_check.junit_outcomes(path) == [
        {"test": "test_dat_memorises[cuda-fp16]", "outcome": "passed", "seconds": 41.2,
         "message": ""},
        {"test": "test_transformer_memorises[cuda-fp16]", "outcome": "failed", "seconds": 12.0,
         "message": "AssertionError: transformer at BLEU 12.0 (< 90.0)"},
        {"test": "test_dat_memorises[cuda-fp32]", "outcome": "skipped", "seconds": 3.0,
         "message": "no CUDA device"}]
    assert gpu_check.junit_outcomes(tmp_path / "missing.xml") == []


def test_head_layout_keeps_the_first_sentences_and_the_dictionaries(tmp_path):
    source = tmp_path / "test"
    source.mkdir()
    for name in ("dict.src.txt", "dict.tgt.txt"):
        (source / name).write_text("a 1\n", encoding="utf-8")
    (source / TEXT_TEST_FILES["src"]).write_text("s1\ns2\ns3\n", encoding="utf-8")
    (source / TEXT_TEST_FILES["tgt"]).write_text("t1\nt2\nt3\n", encoding="utf-8")
    assert gpu_check.head_layout(source, tmp_path / "head", 2) == 2
    assert (tmp_path / "head" / TEXT_TEST_FILES["tgt"]).read_text() == "t1\nt2\n"
    assert (tmp_path / "head" / "dict.src.txt").is_file()


def test_summary_shows_every_figure_and_failure(tmp_path):
    report = {
        "versions": {"device": "NVIDIA H100 80GB HBM3", "memory_gib": 79.2, "capability": "9.0",
                     "cpus": 16, "python": "3.12.3", "torch": "2.11.0", "cuda": "13.0",
                     "cudnn": 91000, "fairseq": "0.12.3.1", "commit": "abc"},
        "precision": "fp16", "seconds": 300.0, "errors": [],
        "overfit": {"summary": "1 failed, 1 passed in 60s", "seconds": 60.0, "workers": 2,
                    "runs": [{"kind": "dat", "device": "cuda-fp16", "bleu": 97.25, "seconds": 40},
                             {"kind": "transformer", "device": "cuda-fp16", "bleu": 12.0,
                              "seconds": 11}],
                    "tests": gpu_check.junit_outcomes(_write(tmp_path / "j.xml", JUNIT))},
        "epochs": [{"kind": "cmlm", "arch": "cmlm_transformer", "max_tokens": 7500,
                    "update_freq": 8, "num_updates": 6, "train_wall": 9, "process_seconds": 21.4,
                    "wps": 123456.0, "gb_free": 70.0},
                   {"kind": "dat", "error": "RuntimeError: CUDA out of memory"}],
        "speed": [{"system": "transformer beam 5", "batch_size": 1, "sentences": 200,
                   "sentences_per_second": 20.0, "latency_ms": 50.0, "tokens_per_sentence": 14},
                  {"system": "glat", "batch_size": 1, "sentences": 200,
                   "sentences_per_second": 300.0, "latency_ms": 3.33, "tokens_per_sentence": 13,
                   "speedup": 15.0}]}
    text = gpu_check.markdown(report)
    assert "NVIDIA H100 80GB HBM3" in text and "torch 2.11.0" in text
    assert "| dat | cuda-fp16 | 97.2 | 40 |" in text
    assert "`test_transformer_memorises[cuda-fp16]`: AssertionError" in text
    assert "| cmlm | cmlm_transformer | 7500 x 8 | 6 | 9 | 21 | 123,456 | 70.0 |" in text
    assert "| dat | failed: RuntimeError: CUDA out of memory" in text
    assert "| glat | 1 | 200 | 300.0 | 3.33 | 13 | 15.0 |" in text
    gpu_check.write_report(tmp_path, report)
    assert json.loads((tmp_path / "gpu-check.json").read_text())["precision"] == "fp16"
    assert (tmp_path / "gpu-check.md").read_text() == text


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_earlier_models_are_found_by_kind(tmp_path):
    for name in ("transformer", "glat", "dat"):
        (tmp_path / name).mkdir()
    for name in ("transformer", "glat"):
        (tmp_path / name / "model.pt").write_bytes(b"x")
    assert gpu_check.earlier_models(tmp_path) == {
        "transformer": str(tmp_path / "transformer" / "model.pt"),
        "glat": str(tmp_path / "glat" / "model.pt")}
