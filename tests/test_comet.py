"""COMET from a local model (``phenomt.core.metrics.comet``): its arithmetic and front-door
checks everywhere; where the optional extra is installed, the wiring with a COMET-architecture
checkpoint built here (tests/comet_tiny.py: a tiny random encoder, so its scores check the
wiring, not the metric's quality) from the metric through ``phenomt evaluate``'s tables."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from phenomt.core.io import InputError
from phenomt.core.metrics import base as metrics
from phenomt.core.metrics import comet


def test_the_corpus_score_is_the_mean_segment_score_times_100():
    metric = metrics.get("comet")  # settings are read when it scores, not when it is made
    # segment scores 0.5, -0.1, 0.2: mean 0.2 -> 20.0; two rows of totals at once
    totals = np.array([[0.6, 3.0], [0.5, 1.0]])
    assert metric.scores(totals).tolist() == pytest.approx([20.0, 50.0])
    assert metric.score(np.array([0.6, 3.0])) == pytest.approx(20.0)
    assert np.isnan(metric.score(np.array([0.0, 0.0])))
    assert metric.needs_source and metric.bounds == (None, None)


def test_a_missing_extra_or_model_says_what_to_install_or_pass(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="no COMET checkpoint"):
        comet.checkpoint_of(tmp_path)
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "model.ckpt").write_bytes(b"x")
    with pytest.raises(FileNotFoundError, match="no hparams.yaml"):
        comet.checkpoint_of(tmp_path)
    (tmp_path / "hparams.yaml").write_text("a: 1\n")
    assert comet.checkpoint_of(tmp_path) == tmp_path / "checkpoints" / "model.ckpt"
    monkeypatch.setattr(comet.importlib.util, "find_spec", lambda name: object())
    with pytest.raises(ValueError, match="--comet-model DIR"):
        comet.require(None)
    assert comet.require(tmp_path) == tmp_path / "checkpoints" / "model.ckpt"
    monkeypatch.setattr(comet.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(RuntimeError, match=r"pip install 'phenomt\[comet\]'"):
        comet.require(tmp_path)


def test_evaluate_checks_comet_before_anything_runs(tmp_path, monkeypatch):
    from phenomt.evaluate import check_comet

    with pytest.raises(InputError, match="add comet to --metrics"):
        check_comet(["bleu"], str(tmp_path))
    assert check_comet(["bleu"], None) is None
    monkeypatch.setattr(comet.importlib.util, "find_spec", lambda name: object())
    with pytest.raises(InputError, match="--comet-model.*needs a model"):
        check_comet(["bleu", "comet"], None)
    with pytest.raises(InputError, match="no COMET checkpoint"):
        check_comet(["comet"], str(tmp_path / "nowhere"))
    monkeypatch.setattr(comet.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(InputError, match=r"--metrics.*phenomt\[comet\]"):
        check_comet(["comet"], str(tmp_path))


def test_the_plan_passes_the_model_to_every_scoring_job(tmp_path):
    from phenomt.plan import Plan, load_config

    config = load_config(Path(__file__).resolve().parents[1] / "config" / "config.yaml")
    config["systems"]["metrics"] = ["bleu", "comet"]
    config["systems"]["ldd_metrics"] = ["comet"]
    with pytest.raises(ValueError, match="comet needs comet_model"):
        Plan(config).check()
    config["systems"]["comet_model"] = "/models/wmt22 comet"
    plan = Plan(config)
    testset = plan.systems.testsets[0]
    system = plan.systems.systems(testset)[0]
    assert "--setting 'comet.model=/models/wmt22 comet'" in plan.systems.score_args(
        testset, system)
    assert "/models/wmt22 comet/checkpoints/model.ckpt" in plan.systems.score_inputs(testset)
    assert "'comet.model=/models/wmt22 comet'" in plan.systems.ldd_score_args()
    assert plan.systems.ldd_metric_inputs() == ["/models/wmt22 comet/checkpoints/model.ckpt"]


# --------------------------------------------------------------------------- with the extra

SOURCES = ["Ein Hund läuft .", "Die Katze schläft .", "Er liest ein Buch .",
           "Es regnet heute .", "Wir gehen nach Hause ."]
REFERENCES = ["A dog runs.", "The cat sleeps.", "He reads a book.", "It is raining today.",
              "We are going home."]


def test_the_metric_scores_with_the_model_as_comet_does(tiny_comet):
    from comet import load_from_checkpoint

    hyps = ["A dog runs.", "The cat is sleeping.", "He reads.", "Rain today.", "We go home."]
    metric = metrics.get("comet", model=str(tiny_comet), batch_size=2)
    stats = metric.statistics(hyps, REFERENCES, SOURCES)
    model = load_from_checkpoint(str(tiny_comet / "checkpoints" / "model.ckpt"))
    expected = model.predict([{"src": s, "mt": h, "ref": r} for s, h, r
                              in zip(SOURCES, hyps, REFERENCES, strict=True)],
                             batch_size=5, gpus=0, progress_bar=False)
    assert stats[:, 0] == pytest.approx(expected.scores, abs=1e-5)
    assert stats[:, 1].tolist() == [1.0] * 5
    assert metric.score(stats.sum(axis=0)) == pytest.approx(100 * expected.system_score,
                                                            abs=1e-3)
    assert metric.signature().startswith("model:model|size:")
    # the same input gives the same numbers (no dropout at inference)
    assert (metric.statistics(hyps, REFERENCES, SOURCES) == stats).all()


@pytest.mark.integration
def test_evaluate_shows_comet_with_intervals_beside_bleu(tiny_comet, tmp_path):
    (tmp_path / "t.de").write_text("".join(f"{s}\n" for s in SOURCES * 4), encoding="utf-8")
    (tmp_path / "t.en").write_text("".join(f"{r}\n" for r in REFERENCES * 4), encoding="utf-8")
    (tmp_path / "a.en").write_text("".join(f"{r}\n" for r in REFERENCES * 4), encoding="utf-8")
    (tmp_path / "b.en").write_text("".join(f"{r.split()[0]} .\n" for r in REFERENCES * 4),
                                   encoding="utf-8")
    done = subprocess.run(
        [str(Path(sys.executable).with_name("phenomt")), "evaluate", "--src", "t.de", "--ref",
         "t.en", "--langs", "de-en", "--hyp", "a.en", "--hyp", "b.en", "--no-ldd", "--no-report",
         "--force-langs", "--samples", "100", "--metrics", "bleu", "comet",
         "--comet-model", str(tiny_comet), "--outdir", "out"],
        cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    table = next((tmp_path / "out" / "results" / "tables").glob("systems_bleu.csv"))
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    comet_columns = [c for c in rows[0] if c.startswith("COMET")]
    assert comet_columns, list(rows[0])
    cells = {row["system"]: row[comet_columns[0]] for row in rows}
    assert all("[" in cell for cell in cells.values()), cells  # every value has its interval
    assert "COMET" in done.stdout


def test_score_comet_without_a_model_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    from phenomt.cli import main

    for name in ("h", "r", "s"):
        (tmp_path / name).write_text("a\n", encoding="utf-8")
    args = ["score", "comet", "--hyp", str(tmp_path / "h"), "--ref", str(tmp_path / "r"),
            "--src", str(tmp_path / "s")]
    monkeypatch.setattr(comet.importlib.util, "find_spec", lambda name: object())
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("phenomt: error: --model: COMET needs a model") and err.count("\n") == 1
    assert main([*args, "--model", str(tmp_path / "none")]) == 2
    assert "no COMET checkpoint" in capsys.readouterr().err
    monkeypatch.setattr(comet.importlib.util, "find_spec", lambda name: None)
    assert main(args) == 2
    assert "pip install 'phenomt[comet]'" in capsys.readouterr().err
