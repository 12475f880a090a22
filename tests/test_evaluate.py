"""`phenomt systems evaluate`: your own outputs added to a configured test set."""

from __future__ import annotations

import csv
import os
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
