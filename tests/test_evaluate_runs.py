"""Runs of ``phenomt evaluate`` end to end on small real test sets: reruns follow the inputs'
content whatever their file times, Ctrl-C stops a run with one line and the same command
resumes it, and a resource that cannot be fetched ends the run with one line saying what to
do."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sacrebleu

pytestmark = pytest.mark.integration

LINES = 60
PHENOMT = str(Path(sys.executable).with_name("phenomt"))
OLD = (1_577_836_800, 1_577_836_800)  # 2020-01-01: older than any output


def _head(source: Path, target: Path, lines: int = LINES) -> Path:
    target.write_text("".join(source.read_text("utf-8").splitlines(keepends=True)[:lines]),
                      encoding="utf-8")
    return target


def _replace_keeping_an_old_time(path: Path, text: str) -> None:
    """New content, an older file time (as ``cp -p`` or ``rsync -a`` of an old file)."""
    path.write_text(text, encoding="utf-8")
    os.utime(path, OLD)


def _evaluate(cwd: Path, *args: str, env: dict | None = None, **kwargs
              ) -> subprocess.CompletedProcess:
    return subprocess.run([PHENOMT, "evaluate", *args, "--samples", "100", "--no-report",
                           "--outdir", "out"], cwd=cwd, capture_output=True, text=True,
                          env=env or dict(os.environ), timeout=900, **kwargs)


def _ran(outdir: Path) -> list[str]:
    """The rules of the jobs the last run started, from its log."""
    log = (outdir / "snakemake.log").read_text("utf-8").splitlines()
    return [line.split()[-1].rstrip(":") for line in log
            if line.startswith(("rule ", "localrule "))]


def _bleu(outdir: Path, system: str) -> float:
    record = json.loads(next((outdir / "results" / "systems").glob(
        f"*/{system}.bleu.json")).read_text("utf-8"))
    return record["subsets"][record["main"]]["bleu"]["score"]


@pytest.fixture
def de_en(tmp_path, mirror) -> Path:
    data = mirror / "sysout" / "newstest2021.de-en"
    _head(data / "_testset" / "newstest2021.de", tmp_path / "t.de")
    _head(data / "_testset" / "newstest2021.en", tmp_path / "t.en")
    _head(data / "VolcTrans-AT.en", tmp_path / "at.en")
    _head(data / "Online-B.en", tmp_path / "other.en")
    return tmp_path


DE_EN = ("--src", "t.de", "--ref", "t.en", "--langs", "de-en", "--hyp", "at.en", "--no-ldd")


def test_reruns_follow_content_not_file_times(de_en):
    first = _evaluate(de_en, *DE_EN)
    assert first.returncode == 0, first.stderr
    out = de_en / "out"
    hyps = (de_en / "at.en").read_text("utf-8").splitlines()
    refs = (de_en / "t.en").read_text("utf-8").splitlines()
    assert _bleu(out, "at") == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)

    again = _evaluate(de_en, *DE_EN)
    assert again.returncode == 0 and _ran(out) == []  # unchanged content: nothing reruns

    # the hypothesis: another system's output with a file time older than every output
    _replace_keeping_an_old_time(de_en / "at.en", (de_en / "other.en").read_text("utf-8"))
    hyps = (de_en / "at.en").read_text("utf-8").splitlines()
    changed = _evaluate(de_en, *DE_EN)
    assert changed.returncode == 0, changed.stderr
    assert "systems_score" in _ran(out)
    assert _bleu(out, "at") == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)

    # the reference: its lines reversed in order, the same file time trick
    refs = refs[::-1]
    _replace_keeping_an_old_time(de_en / "t.en", "".join(f"{r}\n" for r in refs))
    sources = (de_en / "t.de").read_text("utf-8").splitlines()[::-1]
    _replace_keeping_an_old_time(de_en / "t.de", "".join(f"{s}\n" for s in sources))
    changed = _evaluate(de_en, *DE_EN)
    assert changed.returncode == 0, changed.stderr
    assert {"systems_score", "tokenize", "systems_redundancy"} <= set(_ran(out))
    assert _bleu(out, "at") == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)

    # the source alone: the jobs that read it (tokens, CRR/DRR quotas) run again
    _replace_keeping_an_old_time(de_en / "t.de", "".join(f"{s} .\n" for s in sources))
    changed = _evaluate(de_en, *DE_EN)
    assert changed.returncode == 0, changed.stderr
    assert {"tokenize", "systems_redundancy"} <= set(_ran(out))


def test_another_mirror_with_the_same_files_reruns_nothing(de_en, mirror):
    """The mirror only says where a download's bytes come from (each is verified by its
    checksum): neither --mirror nor $PHENOMT_MIRROR naming another folder that holds the
    same files reruns a job."""
    other = de_en / "other-mirror"
    other.mkdir()
    for entry in mirror.iterdir():
        (other / entry.name).symlink_to(entry)
    first = _evaluate(de_en, *DE_EN, "--mirror", str(mirror))
    assert first.returncode == 0, first.stderr
    out = de_en / "out"
    assert _ran(out)
    moved = _evaluate(de_en, *DE_EN, "--mirror", str(other))
    assert moved.returncode == 0, moved.stderr
    assert _ran(out) == [], (out / "snakemake.log").read_text("utf-8")
    assert "0 of " in moved.stderr
    by_env = _evaluate(de_en, *DE_EN, env=dict(os.environ, PHENOMT_MIRROR=str(other)))
    assert by_env.returncode == 0, by_env.stderr
    assert _ran(out) == []


def _outputs(outdir: Path) -> dict[str, bytes]:
    """Every result file of a run but its logs, benchmark timings and lock."""
    results = outdir / "results"
    return {str(p.relative_to(results)): p.read_bytes() for p in sorted(results.rglob("*"))
            if p.is_file() and p.relative_to(results).parts[0] not in ("logs", "benchmarks")
            and p.name != ".phenomt.lock"}


def test_the_job_server_gives_the_same_bytes(de_en):
    args = (*DE_EN, "--hyp", "other.en")
    served = _evaluate(de_en, *args)
    assert served.returncode == 0, served.stderr
    (de_en / "out").rename(de_en / "served")
    alone = _evaluate(de_en, *args, "--no-job-server")
    assert alone.returncode == 0, alone.stderr
    assert (de_en / "served" / "results" / "logs" / "jobserver.log").read_text("utf-8") == ""
    assert not (de_en / "out" / "results" / "logs" / "jobserver.log").exists()
    expected = _outputs(de_en / "out")
    assert len(expected) > 20
    assert _outputs(de_en / "served") == expected


def test_a_second_folder_copies_the_cached_parses_and_aligner_and_gives_the_same_bytes(
        de_en):
    args = ("--src", "t.de", "--ref", "t.en", "--langs", "de-en", "--hyp", "at.en",
            "--hyp", "other.en", "--cache-dir", "cache")
    first = _evaluate(de_en, *args)
    assert first.returncode == 0, first.stderr
    (de_en / "out").rename(de_en / "first")
    # the German source parsed and the English reference tagged, two shards each
    assert len(list((de_en / "cache" / "udpipe").glob("*.conllu"))) == 4
    # and the aligner of the reordering sets, trained on the test set
    assert len(list((de_en / "cache" / "align").iterdir())) == 1
    again = _evaluate(de_en, *args)
    assert again.returncode == 0, again.stderr
    logs = _parse_logs(de_en / "out")
    assert len(logs) == 4 and all("copied from the cache" in log.read_text("utf-8")
                                  for log in logs)
    assert "from the cache" in _align_log(de_en / "out").read_text("utf-8")
    assert _outputs(de_en / "out") == _outputs(de_en / "first")
    # --no-cache: parsed and trained again
    (de_en / "out").rename(de_en / "second")
    alone = _evaluate(de_en, *args[:-2], "--no-cache")
    assert alone.returncode == 0, alone.stderr
    assert not any("copied" in log.read_text("utf-8")
                   for log in [*_parse_logs(de_en / "out"), _align_log(de_en / "out")])
    assert _outputs(de_en / "out") == _outputs(de_en / "first")


def _align_log(outdir: Path) -> Path:
    """The log of a run's one aligner training (De-En)."""
    [log] = (outdir / "results" / "logs" / "align_train").glob("*.log")
    return log


def _parse_logs(outdir: Path) -> list[Path]:
    """The logs of a run's UDPipe jobs (the parse and tag shards)."""
    return [log for kind in ("parse", "tags")
            for log in sorted((outdir / "results" / "logs" / kind).glob("*.log"))]


def test_an_mqm_file_with_new_content_and_an_old_time_is_read_again(tmp_path, mirror):
    data = mirror / "sysout" / "newstest2021.en-de"
    _head(data / "_testset" / "newstest2021.en", tmp_path / "t.en")
    _head(data / "_testset" / "newstest2021.de", tmp_path / "t.de")
    _head(data / "UEdin.de", tmp_path / "uedin.de")
    rows = (mirror / "sysout" / "annotations" / "mqm_ted_ende.tsv").read_text(
        "utf-8").splitlines(keepends=True)
    keep = ("Facebook-AI", "HuaweiTSC", "Nemo", "ref")
    talk = [r for r in rows[1:] if r.split("\t")[1] == "talk.1" and r.split("\t")[0] in keep]
    (tmp_path / "mqm.tsv").write_text(rows[0] + "".join(talk), encoding="utf-8")
    args = ("--src", "t.en", "--ref", "t.de", "--langs", "en-de", "--hyp", "uedin.de",
            "--no-ldd", "--mqm", "mqm.tsv")
    first = _evaluate(tmp_path, *args)
    assert first.returncode == 0, first.stderr
    table = tmp_path / "out" / "results" / "tables" / "systems_mqm.t.en-de.csv"
    before = table.read_text("utf-8")
    assert "Nemo" in before

    _replace_keeping_an_old_time(tmp_path / "mqm.tsv", rows[0] + "".join(
        r for r in talk if not r.startswith("Nemo\t")))
    changed = _evaluate(tmp_path, *args)
    assert changed.returncode == 0, changed.stderr
    assert "Nemo" not in table.read_text("utf-8")


def test_ctrl_c_stops_with_one_line_and_the_same_command_resumes(de_en):
    args = [PHENOMT, "evaluate", *DE_EN, "--hyp", "other.en", "--samples", "100",
            "--no-report", "--outdir", "out"]
    # Ctrl-C as in a terminal: a run started in the background by a shell without job
    # control (a CI script's `cmd &`) inherits an ignored SIGINT, and Python keeps it ignored
    child = subprocess.Popen(args, cwd=de_en, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    log = de_en / "out" / "snakemake.log"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (
            log.is_file() and "rule " in log.read_text("utf-8")):
        time.sleep(0.1)
    assert child.poll() is None, "the run ended before a job started"
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 130, stderr
    assert stderr.strip() == ("phenomt: interrupted; the same command continues where it "
                              "stopped"), stderr
    assert "Traceback" not in stdout + stderr

    resumed = subprocess.run(args, cwd=de_en, capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr
    assert "at:" in resumed.stdout and "other:" in resumed.stdout


def test_a_resource_that_cannot_be_fetched_ends_with_one_line(de_en):
    empty = de_en / "empty-mirror"
    empty.mkdir()
    # no mirror holds the UDPipe model and no network: a proxy nobody listens on
    env = dict(os.environ, PHENOMT_MIRROR=str(empty), https_proxy="http://127.0.0.1:9",
               http_proxy="http://127.0.0.1:9")
    result = _evaluate(de_en, *[a for a in DE_EN if a != "--no-ldd"], env=env)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    # the source's model (the challenge sets) or the target's (the POS buckets): either fails
    assert re.match(r"phenomt: error: fetch failed: udpipe\.(german-gsd|english-ewt)-2\.5: "
                    r"cannot be fetched from https://lindat\.mff\.cuni\.cz/", lines[0]), lines[0]
    for way_out in ("--mirror DIR", "PHENOMT_MIRROR=DIR", "--no-ldd"):
        assert way_out in lines[0]
    assert "Traceback" not in result.stdout + result.stderr


def test_the_workflow_ends_a_failed_download_with_its_way_out(tmp_path, monkeypatch):
    """`make run` (Snakemake on a config) prints the same line after Snakemake's report."""
    from tests.conftest import TINY_CONFIG, run_snakemake, tiny_workdir

    workdir = tiny_workdir(tmp_path / "run")
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    monkeypatch.setenv("PHENOMT_MIRROR", str(empty))
    monkeypatch.setenv("https_proxy", "http://127.0.0.1:9")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    result = run_snakemake("resources/downloads/udpipe.german-gsd-2.5", "--cores", "1",
                           "--configfile", str(TINY_CONFIG), cwd=workdir, timeout=300)
    assert result.returncode == 1
    ours = [ln for ln in result.stderr.splitlines() if ln.startswith("phenomt: error:")]
    assert len(ours) == 1, result.stderr[-3000:]
    assert "udpipe.german-gsd-2.5: cannot be fetched from https://lindat" in ours[0]
    assert "PHENOMT_MIRROR=DIR" in ours[0]
    # after Snakemake's own report: among the last lines of the run
    assert ours[0] in result.stderr.splitlines()[-8:]
