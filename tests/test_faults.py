"""Faults survived, nothing lost.

Unit tests of resuming a training, then the tiny config (with a sharded parse) killed with
SIGKILL, Snakemake's whole process group at once, in the middle of a sharded parse and in
the middle of a training job, and run again with the same command: it must finish without an
unlock, training must resume from its last checkpoint, and every table it makes must equal the
uninterrupted reference run's (timing tables aside). The interrupted run makes the tables that
the parse and the trainings feed (the LDD tables and the models' BLEU), not the NAT, document
and given-systems parts, which neither moment touches.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from phenomt.core import nmt
from tests.conftest import TINY_CONFIG, require_long_runs, run_snakemake, tiny_workdir
from tests.runs import differing_tables, kill_group, start_snakemake

# -- resuming a training (no fairseq run needed) ---------------------------------------------


def _save_checkpoint(path: Path, updates: int) -> None:
    torch = pytest.importorskip("torch")
    torch.save({"model": {}, "optimizer_history": [{"num_updates": updates}]}, path)


@pytest.fixture
def fake_fairseq(monkeypatch) -> list[list[str]]:
    """Replace the fairseq-train run: record the commands, write a checkpoint_best.pt."""
    calls: list[list[str]] = []

    def run(cmd, log_path):
        calls.append(list(cmd))
        save_dir = Path(cmd[cmd.index("--save-dir") + 1])
        _save_checkpoint(save_dir / "checkpoint_best.pt", 50)

    monkeypatch.setattr(nmt, "run_logged", run)
    monkeypatch.setattr(nmt, "gpu_available", lambda: False)
    return calls


def test_checkpoint_updates_reads_the_count_and_refuses_a_damaged_file(tmp_path):
    _save_checkpoint(tmp_path / "ok.pt", 27)
    assert nmt.checkpoint_updates(tmp_path / "ok.pt") == 27
    whole = (tmp_path / "ok.pt").read_bytes()
    (tmp_path / "cut.pt").write_bytes(whole[: len(whole) // 2])  # a copy cut short
    assert nmt.checkpoint_updates(tmp_path / "cut.pt") is None


def test_train_resumes_a_checkpoint_short_of_max_update(tmp_path, fake_fairseq):
    save_dir = tmp_path / "checkpoints"
    save_dir.mkdir()
    _save_checkpoint(save_dir / "checkpoint_last.pt", 27)
    info = nmt.train("bin", str(save_dir), str(tmp_path / "model.pt"), {"max_update": 50}, 1)
    assert len(fake_fairseq) == 1 and "--restore-file" in fake_fairseq[0]
    assert info["resumed"] is True and (tmp_path / "model.pt").stat().st_size > 0


def test_train_does_not_train_past_max_update_when_resumed_at_it(tmp_path, fake_fairseq):
    # fairseq resumed at max_update makes one more update before it checks the limit
    save_dir = tmp_path / "checkpoints"
    save_dir.mkdir()
    _save_checkpoint(save_dir / "checkpoint_last.pt", 50)
    _save_checkpoint(save_dir / "checkpoint_best.pt", 40)
    log = tmp_path / "train.log"
    nmt.train("bin", str(save_dir), str(tmp_path / "model.pt"), {"max_update": 50}, 1,
              log_path=str(log))
    assert fake_fairseq == []
    assert (tmp_path / "model.pt").read_bytes() == (save_dir / "checkpoint_best.pt").read_bytes()
    assert "training is complete" in log.read_text()


@pytest.mark.parametrize("damaged", ["checkpoint_last.pt", "checkpoint_best.pt"])
def test_train_starts_over_when_a_checkpoint_copy_was_cut_short(tmp_path, fake_fairseq,
                                                                 damaged):
    save_dir = tmp_path / "checkpoints"
    save_dir.mkdir()
    _save_checkpoint(save_dir / "checkpoint_last.pt", 20)
    _save_checkpoint(save_dir / "checkpoint_best.pt", 20)
    (save_dir / damaged).write_bytes(b"PK\x03\x04 cut short")
    info = nmt.train("bin", str(save_dir), str(tmp_path / "model.pt"), {"max_update": 50}, 1)
    assert len(fake_fairseq) == 1 and info["resumed"] is False
    assert not (save_dir / "checkpoint_last.pt").exists()
    # the published model is the one the new training wrote
    assert nmt.checkpoint_updates(tmp_path / "model.pt") == 50


def _trained_before(save_dir: Path, options: dict) -> None:
    """A save folder as a training with ``options`` (seed 1, data ``bin``) left it."""
    save_dir.mkdir()
    _save_checkpoint(save_dir / "checkpoint_last.pt", 27)
    nmt.discard_stale(save_dir, nmt.training_signature("bin", options, 1))


def test_train_resumes_when_only_the_length_of_the_training_changed(tmp_path, fake_fairseq):
    save_dir = tmp_path / "checkpoints"
    _trained_before(save_dir, {"lr": 0.001, "max_update": 30, "log_interval": 10})
    info = nmt.train("bin", str(save_dir), str(tmp_path / "model.pt"),
                     {"lr": 0.001, "max_update": 50, "log_interval": 100}, 1)
    assert info["resumed"] is True and "--restore-file" in fake_fairseq[0]


@pytest.mark.parametrize("changed", [{"lr": 0.002, "max_update": 50},
                                     {"lr": 0.001, "max_update": 50, "dropout": 0.0}])
def test_train_starts_over_when_the_checkpoints_had_other_settings(tmp_path, fake_fairseq,
                                                                   changed):
    # resuming would continue the old model under the new settings
    save_dir = tmp_path / "checkpoints"
    _trained_before(save_dir, {"lr": 0.001, "max_update": 50})
    (save_dir / "launches.jsonl").write_text('{"seconds": 5}\n')
    log = tmp_path / "train.log"
    info = nmt.train("bin", str(save_dir), str(tmp_path / "model.pt"), changed, 1,
                     log_path=str(log))
    assert info["resumed"] is False and len(info["launches"]) == 1
    assert not (save_dir / "checkpoint_last.pt").exists()
    assert "trained with other settings" in log.read_text()
    # the new settings are recorded: a relaunch with them resumes
    _save_checkpoint(save_dir / "checkpoint_last.pt", 30)
    again = nmt.train("bin", str(save_dir), str(tmp_path / "model.pt"), changed, 1)
    assert again["resumed"] is True


def test_train_trusts_checkpoints_without_a_record(tmp_path, fake_fairseq):
    # folders written before the record existed resume as they always did
    save_dir = tmp_path / "checkpoints"
    save_dir.mkdir()
    _save_checkpoint(save_dir / "checkpoint_last.pt", 27)
    info = nmt.train("bin", str(save_dir), str(tmp_path / "model.pt"), {"max_update": 50}, 1)
    assert info["resumed"] is True
    assert (save_dir / nmt.TRAINING_RECORD).exists()


# -- the tiny config killed and run again -------------------------------------------------------

#: Shards of the LDD parse in the interrupted run (the tiny config parses in one).
PARSE_SHARDS = 2
#: Seconds between two looks at the run folder while waiting for the moment to kill.
POLL_SECONDS = 0.1
#: Seconds a run may take to reach the moment of its kill (a guard against hangs).
ATTEMPT_TIMEOUT = 2400


@dataclass
class InterruptedRun:
    """The tiny config run until it finished, killed on the way."""

    workdir: Path
    #: what was in progress at each kill: "parse" → corpus.lang, "train" → model
    killed: dict[str, str]
    final: subprocess.CompletedProcess
    seconds: float


@functools.cache
def _tiny_config() -> dict:
    """The tiny config, read once (the moments below are checked ten times a second)."""
    return yaml.safe_load(TINY_CONFIG.read_text())


def _outdir(workdir: Path) -> Path:
    return workdir / _tiny_config()["outdir"]


def parse_in_progress(workdir: Path) -> str | None:
    """A source (``corpus.lang``) with a parse shard written but not yet gathered
    (file layout of workflow/rules/parse.smk)."""
    parse_dir = _outdir(workdir) / "ldd" / "parse"
    for shard in sorted((parse_dir / "shards").glob("*.conllu")):
        source = shard.name.rsplit(".", 2)[0]  # <corpus>.<lang>.<shard>.conllu
        if not (parse_dir / f"{source}.conllu").exists():
            return source
    return None


def training_in_progress(workdir: Path) -> str | None:
    """An AR model whose training saved a checkpoint in this run and has not published its
    model yet (layout of workflow/rules/train.smk; Snakemake empties a job's log when the
    job starts, so the log tells what happened in this run)."""
    out = _outdir(workdir)
    for model in _tiny_config()["models"]:
        log = out / "logs" / "train" / f"{model}.log"
        folder = out / "models" / model
        if ((folder / "checkpoints" / "checkpoint_last.pt").exists()
                and not (folder / "model.pt").exists() and log.exists()
                and "Saved checkpoint" in log.read_text(errors="replace")):
            return model
    return None


def run_until_killed(args: list[str], workdir: Path,
                     moments: dict[str, Callable[[Path], str | None]]) -> dict[str, str]:
    """Start the run with ``args`` and kill its process group as soon as one of
    ``moments`` is reached; start it again until every moment has had its kill.

    Returns, per moment, what was in progress when its kill came.
    """
    killed: dict[str, str] = {}
    attempt = 0
    while len(killed) < len(moments):
        attempt += 1
        log = workdir / f"killed-run-{attempt}.log"
        process = start_snakemake(*args, log=log)
        deadline = time.monotonic() + ATTEMPT_TIMEOUT
        reached: dict[str, str] = {}
        while not reached and process.poll() is None:
            if time.monotonic() > deadline:
                kill_group(process)
                pytest.fail(f"run {attempt} hung: no progress to a kill in "
                            f"{ATTEMPT_TIMEOUT} s; see {log}")
            time.sleep(POLL_SECONDS)
            reached = {name: found for name, check in moments.items()
                       if name not in killed and (found := check(workdir)) is not None}
        if not reached:
            missing = sorted(set(moments) - set(killed))
            pytest.fail(f"run {attempt} ended (exit {process.returncode}) before it could be "
                        f"killed during {', '.join(missing)}; see {log}")
        kill_group(process)
        # What ended between the last look and the kill was not interrupted.
        killed.update({name: found for name, found in reached.items()
                       if moments[name](workdir) == found})
    return killed


def fed_by_the_kills(table: str) -> bool:
    """A table the interrupted run makes: fed by the parse (LDD) or the trainings (BLEU)."""
    return table.startswith("ldd_") or table.split(".", 1)[0] == "bleu"


@pytest.fixture(scope="module")
def interrupted_run(tiny_run, tmp_path_factory) -> InterruptedRun:
    require_long_runs("runs killed with SIGKILL and resumed")
    workdir = tiny_workdir(tmp_path_factory.mktemp("interrupted-run"))
    overlay = workdir / "shards.yaml"
    overlay.write_text(yaml.safe_dump({"ldd": {"parse_shards": PARSE_SHARDS}}))
    tables = _outdir(tiny_run) / "tables"
    targets = sorted(str(path.relative_to(tiny_run)) for path in tables.iterdir()
                     if fed_by_the_kills(path.name))
    assert any(t.endswith("ldd_table1.csv") for t in targets), targets
    # One command line for every attempt: the same `make run` again after each kill.
    args = ["--cores", "2", "--configfile", str(TINY_CONFIG), str(overlay),
            "--directory", str(workdir), *targets]
    start = time.monotonic()
    killed = run_until_killed(args, workdir, {"parse": parse_in_progress,
                                              "train": training_in_progress})
    final = run_snakemake(*args, timeout=2400)
    return InterruptedRun(workdir, killed, final, time.monotonic() - start)


def _first_update(log_text: str) -> int:
    """The update count a fairseq training log starts from: that of the checkpoint it
    loaded, 0 when it found none."""
    if "No existing checkpoint found" in log_text:
        return 0
    loaded = re.search(r"Loaded checkpoint \S+ \(epoch \d+ @ (\d+) updates\)", log_text)
    assert loaded, "the training log says neither what it loaded nor that it found nothing"
    return int(loaded.group(1))


@pytest.mark.integration
def test_run_killed_during_a_sharded_parse_finishes_with_the_same_tables(interrupted_run,
                                                                         tiny_run):
    run = interrupted_run
    assert "parse" in run.killed
    assert run.final.returncode == 0, run.final.stderr[-5000:]
    assert "unlock" not in run.final.stderr
    assert differing_tables(tiny_run, run.workdir, fed_by_the_kills) == []
    # the gathered parse equals the unsharded one of the reference run
    source = run.killed["parse"]
    gathered = Path("ldd") / "parse" / f"{source}.conllu"
    assert ((_outdir(run.workdir) / gathered).read_bytes()
            == (_outdir(tiny_run) / gathered).read_bytes())
    print(f"\nkilled during the parse of {source} and during the training of "
          f"{run.killed.get('train')}; all runs together took {run.seconds:.0f} s")


@pytest.mark.integration
def test_run_killed_during_training_resumes_from_the_last_checkpoint(interrupted_run,
                                                                     tiny_run):
    run = interrupted_run
    assert "train" in run.killed
    assert run.final.returncode == 0, run.final.stderr[-5000:]
    model = run.killed["train"]
    out = _outdir(run.workdir)
    log = (out / "logs" / "train" / f"{model}.log").read_text(errors="replace")
    assert _first_update(log) > 0, "the training started over instead of resuming"
    assert json.loads((out / "models" / model / "model.json").read_text())["resumed"]
    # the resumed model translates exactly like the one trained without a break
    hyps = sorted((out / "models" / model / "hyp").glob("*.txt"))
    assert hyps
    for hyp in hyps:
        reference = _outdir(tiny_run) / hyp.relative_to(out)
        assert hyp.read_bytes() == reference.read_bytes(), hyp.name
    assert differing_tables(tiny_run, run.workdir, fed_by_the_kills) == []
