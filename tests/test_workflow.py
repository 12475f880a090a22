"""Snakemake-level checks: lint, dry runs of every config, and a tiny end-to-end run."""

from __future__ import annotations

import csv
import os
import re
import resource
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, SNAKEMAKE, TINY_CONFIG, run_snakemake, tiny_workdir

PAPER_CONFIGS = sorted((ROOT / "config" / "papers").glob("*.yaml"))


def test_lint_is_clean():
    result = run_snakemake("--lint", "--configfile", str(ROOT / "config" / "config.yaml"))
    assert result.returncode == 0, result.stderr + result.stdout
    assert "Lints for" not in result.stdout + result.stderr, result.stdout + result.stderr


@pytest.mark.parametrize("config", [ROOT / "config" / "config.yaml",
                                    ROOT / "config" / "findings.yaml", TINY_CONFIG, *PAPER_CONFIGS],
                         ids=lambda p: p.name)
def test_dry_run_builds_dag_quickly(config, tmp_path):
    # CPU time of the snakemake process, not wall time, so a busy machine does not fail it;
    # benchmarks/dag_times.py prints the wall times.
    tiny_workdir(tmp_path)  # the tiny config reads tests/data
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = run_snakemake("-n", "--configfile", str(config), "--directory", str(tmp_path))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert result.returncode == 0, result.stderr + result.stdout
    assert cpu < 10, f"building the DAG took {cpu:.1f} s of CPU"


def test_rules_find_phenomt_without_the_virtualenv_on_path(tmp_path):
    """A user may call .venv/bin/snakemake without activating the venv: the rules' `phenomt`
    is the one beside the workflow's interpreter, not a PATH lookup's."""
    target = "resources/downloads/multi30k.val.de"
    cmd = [SNAKEMAKE, "--snakefile", str(ROOT / "workflow" / "Snakefile"), target,
           "--configfile", str(ROOT / ".test" / "config" / "tiny.yaml"), "--cores", "1",
           "--directory", str(tmp_path)]
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir())
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / target).stat().st_size > 0


def test_invalid_config_is_rejected(tmp_path):
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["corpora"]["newstest2013.de-en"]["split"] = "training"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    result = run_snakemake("-n", "--configfile", str(path), "--directory", str(tmp_path))
    assert result.returncode != 0
    assert "split" in result.stderr + result.stdout


def _numbers(csv_path: Path, column: str) -> list[float]:
    with open(csv_path, newline="", encoding="utf-8") as handle:
        return [float(row[column]) for row in csv.DictReader(handle)]


@pytest.mark.integration
def test_tiny_pipeline_end_to_end(tiny_run):
    workdir, config = tiny_run, TINY_CONFIG
    tables = workdir / "results" / "tables"
    for name in ("bleu", "corpus_stats", "ldd_control", *(f"ldd_table{i}" for i in range(1, 7))):
        assert (tables / f"{name}.md").stat().st_size > 0, name
    bleu = _numbers(tables / "bleu.csv", "BLEU")
    assert len(bleu) == 4 and all(0 <= b <= 100 for b in bleu)  # De-En, En-De, Zh-En x 2
    md = (tables / "bleu.md").read_text()
    # in a Markdown cell the signature's | are escaped (\|), or they would end the cell
    assert re.search(r"nrefs:1\\\|case:mixed\\\|eff:no\\\|tok:13a", md)
    assert "50 updates" in md
    sentences = _numbers(tables / "corpus_stats.csv", "sentences")
    declared = yaml.safe_load(config.read_text())["corpora"]
    assert len(sentences) == len(declared) and all(s > 0 for s in sentences)
    # hypotheses are plain text, one per test sentence
    hyp = workdir / "results/models/transformer.de-en/hyp/newstest2013.de-en.txt"
    assert len(hyp.read_text(encoding="utf-8").splitlines()) == 60
    assert "@@" not in hyp.read_text(encoding="utf-8")
    # LDD tables: set sizes are counts, BLEU is a number for every model's baseline
    with open(tables / "ldd_table3.csv", newline="", encoding="utf-8") as handle:
        sizes = list(csv.DictReader(handle))
    assert len(sizes) == 2 * (2 + 3) * 10  # corpora x (de-en + en-de phenomena) x bins
    sheet = workdir / "results/ldd/validation_sheet.tsv"
    assert sheet.read_text(encoding="utf-8").splitlines()[0].count("\t") >= 4
    table1 = (tables / "ldd_table1.md").read_text(encoding="utf-8")
    assert "perposemb" in table1.lower() and "lstm" in table1.lower()
    # newstest2020 zh-en keeps its document ids, line by line with its text: 2 whole documents
    docids = (workdir / "results/data/raw/newstest2020.zh-en.docids").read_text().splitlines()
    text = (workdir / "results/data/raw/newstest2020.zh-en.zh").read_text().splitlines()
    assert len(docids) == len(text) and len(set(docids)) == 2
    assert docids[0].startswith("xinhua")
    # sentence- vs document-level models: Tables 4-6 with every model and the paper's rows
    with open(tables / "lexcons_table6.csv", newline="", encoding="utf-8") as handle:
        rows = {r["system"]: r for r in csv.DictReader(handle)}
    assert {"Sent-Transformer", "Doc-Transformer", "Concatenation (2+1)",
            "Reference (calibration)", "G-Transformer", "CVAE-Transformer"} == set(rows)
    assert float(rows["Doc-Transformer"]["paper BLEU"]) == 18.12
    assert 0 <= float(rows["Sent-Transformer"]["BLEU"]) <= 100
    assert float(rows["Reference (calibration)"]["L-Anno (%)"]) > 0
    with open(tables / "lexcons_table5.csv", newline="", encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == 6 * 6  # (3 models, ref, 2 paper) x bins
    with open(tables / "lexcons_sets.csv", newline="", encoding="utf-8") as handle:
        sets = {(r["test set"], r["system"]) for r in csv.DictReader(handle)}
    assert ("doc2doc.test", "Doc-Transformer") in sets
    assert ("doc2doc.test", "Reference (calibration)") in sets
    # every sentence of the released set's part got a document-level translation
    hyp = workdir / "results/docmodels/doc-transformer/hyp/lexcons.test.txt"
    layout = workdir / "results/lexcons/sets/lexcons.test/zh2en_token"
    assert len(hyp.read_text(encoding="utf-8").splitlines()) == sum(
        len(f.read_text(encoding="utf-8").splitlines()) for f in layout.iterdir())
    # NAT: Tables 5 (BLEU, Redu.) and 10 (CRR, DRR), each with the AR row and every model
    # on raw and on distilled data; the paper's numbers beside ours
    models = ["CMLM", "CMLM+OaXE", "GLAT", "GLAT+OaXE", "DAT"]
    expected = [("AR teacher", "raw")] + [(m, d) for m in models for d in ("raw", "distilled")]
    for table, columns in (("nat_table5", ("BLEU", "Redu. (%)")),
                           ("nat_table10", ("CRR (%)", "DRR (%)"))):
        with open(tables / f"{table}.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        assert [(r["system"], r["data"]) for r in rows] == expected
        assert all(f"paper {c}" in rows[0] for c in columns)
        assert rows[1][f"paper {columns[0]}"]  # the paper's De-En CMLM raw number
        # an untrained model may emit one token a sentence, which has no ratio; cells are
        # "value [low, high]"
        assert all(0 <= float((r[c] or "0").split()[0]) <= 100
                   for r in rows for c in columns[-1:])
        if table == "nat_table5":  # BLEU with its bootstrap interval
            assert all(re.fullmatch(r"[\d.]+ \[[\d.]+, [\d.]+\]", r["BLEU"]) for r in rows)
    with open(tables / "nat_speed.csv", newline="", encoding="utf-8") as handle:
        speed = list(csv.DictReader(handle))
    assert len(speed) == 6 * 2 and speed[0]["speed-up vs AR"] == "1.00x"
    assert "Table 4" in (tables / "nat_agreement.md").read_text(encoding="utf-8")
    # lexical consistency: Table 3 of the released set is exact; the calibration is noted
    with open(tables / "lexcons_table3.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["pairs"]) for r in rows] == [945, 2571, 2013, 1729, 1424, 8610]
    assert "Calibration" in (tables / "lexcons_table1.md").read_text(encoding="utf-8")
    figure = workdir / "results" / "figures" / "lexcons_figure3.png"
    assert figure.read_bytes().startswith(b"\x89PNG")
    # given systems: the WMT21 GLAT system and its autoregressive twin
    with open(tables / "systems_bleu.csv", newline="", encoding="utf-8") as handle:
        systems = {r["system"].removesuffix(" (baseline)") for r in csv.DictReader(handle)}
    assert {"VolcTrans-GLAT", "VolcTrans-AT"} <= systems
    assert "VolcTrans-GLAT" in (tables / "systems_redundancy.md").read_text(encoding="utf-8")
    # ... on the LDD challenge sets of their test set, systems as columns
    with open(tables / "systems_ldd_table4.newstest2021.de-en.csv", newline="",
              encoding="utf-8") as handle:
        rows = {r["set"]: r for r in csv.DictReader(handle)}
    assert list(rows)[0] == "full test set" and "reorder.ge5" in rows
    assert rows["full test set"]["sentences"] == "1000"
    assert rows["full test set"]["VolcTrans-GLAT"].startswith("35.05 [")  # the README's 35.0
    assert re.fullmatch(r"\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\] Δ[+-]\d+\.\d\d( [▼▲])?",
                        rows["reorder.ge5"]["VolcTrans-AT"])
    for number in (5, 6):
        md = (tables / f"systems_ldd_table{number}.newstest2021.de-en.md").read_text(
            encoding="utf-8")
        assert "VolcTrans-GLAT" in md and "full test set 1000 sentences" in md
    # MQM-annotated Zh->En outputs: rates beside DRR and LTCR, with Spearman's rho
    mqm = (tables / "systems_mqm.wmt21-ted.zh-en.md").read_text(encoding="utf-8")
    assert "LTCR (L-All)" in mqm and "DRR" in mqm and "weak evidence: n < 10" in mqm
    # a second run has nothing to do
    again = run_snakemake("-n", "--configfile", str(config), "--directory", str(workdir))
    assert "Nothing to be done" in again.stdout + again.stderr
    # one more system: only its own scoring jobs and the tables are planned
    from phenomt.evaluate import with_systems
    from phenomt.plan import load_config

    added = workdir / "added.en"
    added.write_text((workdir / "results/data/raw/newstest2021.de-en.en").read_text(
        encoding="utf-8"), encoding="utf-8")  # the reference itself as a system
    overlay = workdir / "with_added.yaml"
    overlay.write_text(yaml.safe_dump(with_systems(load_config(config, validate=False),
                                                   "newstest2021.de-en", [("added", added)]),
                                      sort_keys=False))
    planned = run_snakemake("-n", "--configfile", str(overlay), "--directory", str(workdir))
    stats = (planned.stdout + planned.stderr).split("Job stats:", 1)[1].split("Reasons:")[0]
    rules = set(re.findall(r"^([a-z_]+)\s+\d+$", stats, re.M)) - {"total"}
    # its analysis against the baseline, the test set's merged analysis, its tables and
    # figure too
    assert rules == {"all", "systems_score", "systems_redundancy", "systems_ldd_score",
                     "table_systems_bleu", "table_systems_redundancy", "table_systems_ldd",
                     "systems_figure_redundancy", "systems_figure_ldd_sets",
                     "systems_analysis_pair", "systems_analysis", "table_systems_analysis",
                     "systems_figure_buckets"}, stats
