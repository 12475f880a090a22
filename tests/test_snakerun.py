"""The quiet Snakemake runner of ``phenomt evaluate``: the progress line read off Snakemake's
log, and a failed job's own error line found in its log."""

from __future__ import annotations

import importlib.metadata
import io
import subprocess
import sys
import threading
import time
from pathlib import Path

from phenomt.core import snakerun

# Lines as Snakemake 9 writes them (from a real run that failed on a download).
LOG = """Job stats:
job                  count
-----------------  -------
fetch                    3
total                   36

localrule fetch:
    output: resources/downloads/t.de-en.de
    log: results/logs/fetch/t.de-en.de.log
1 of 36 steps (3%) done
localrule prepare_corpus:
    log: results/logs/prepare/t.de-en.de.log
Error in rule fetch:
    message: None
    jobid: 20
    output: resources/downloads/udpipe.german-gsd-2.5
    log: results/logs/fetch/udpipe.german-gsd-2.5.log (check log file(s) for error details)
4 of 36 steps (11%) done
Exiting because a job execution failed. Look above for error messages
WorkflowError:
At least one job did not complete successfully.
"""


def test_progress_reads_jobs_stage_and_total_off_the_log():
    progress = snakerun.Progress()
    lines = LOG.splitlines()
    for line in lines[:5]:
        progress.update(line)
    assert (progress.done, progress.total, progress.stage) == (0, 36, "starting")
    for line in lines[5:12]:
        progress.update(line)
    assert (progress.done, progress.total, progress.stage) == (1, 36, "prepare_corpus")
    assert progress.line().startswith("[1/36 jobs] prepare_corpus, 0:0")
    progress.update("Nothing to be done (all requested files are present and up to date).")
    assert progress.total == 0 and progress.stage == "nothing to do"


def test_a_failed_job_is_named_with_its_own_error_line(tmp_path):
    log = tmp_path / "snakemake.log"
    log.write_text(LOG, encoding="utf-8")
    job_log = tmp_path / "results" / "logs" / "fetch" / "udpipe.german-gsd-2.5.log"
    job_log.parent.mkdir(parents=True)
    job_log.write_text("downloading ...\nphenomt: error: udpipe.german-gsd-2.5: cannot be "
                       "fetched from https://example.org/x (refused)\n", encoding="utf-8")
    [failure] = snakerun.failures(log, tmp_path)
    assert failure.rule == "fetch" and failure.log == job_log
    assert failure.line(" (hint)") == ("fetch failed: udpipe.german-gsd-2.5: cannot be fetched "
                                       "from https://example.org/x (refused) (hint) "
                                       f"(log: {job_log})")
    # a job log that ends in a traceback gives its last line
    job_log.write_text("Traceback (most recent call last):\n  ...\nValueError: bad\n",
                       encoding="utf-8")
    assert snakerun.failures(log, tmp_path)[0].message == "ValueError: bad"
    # no failed job: Snakemake's own last error line
    log.write_text("Building DAG\nMissingInputException in rule x:\nnope\n", encoding="utf-8")
    assert snakerun.failures(log, tmp_path)[0].message == "MissingInputException in rule x:"


def test_run_writes_the_whole_output_to_the_log_and_keeps_the_terminal_quiet(tmp_path):
    script = "import sys\nprint('rule a:')\nprint('1 of 1 steps (100%) done')\nsys.exit(3)\n"
    stream = io.StringIO()  # not a terminal: nothing is drawn
    result = snakerun.run([sys.executable, "-c", script], tmp_path / "s.log", stream=stream)
    assert result.returncode == 3 and not result.interrupted
    assert (result.progress.done, result.progress.total) == (1, 1)
    assert Path(tmp_path / "s.log").read_text("utf-8").splitlines() == [
        "rule a:", "1 of 1 steps (100%) done"]
    assert stream.getvalue() == ""
    echoed = io.StringIO()
    snakerun.run([sys.executable, "-c", script], tmp_path / "s.log", stream=echoed,
                 verbose=True)
    assert "1 of 1 steps (100%) done" in echoed.getvalue()


def test_a_job_left_holding_the_pipe_neither_delays_the_result_nor_loses_its_lines(tmp_path):
    """Snakemake gone, one of its jobs still running with the pipe open (as after a Ctrl-C):
    the result comes after the reader's wait, and the job's later lines still reach the
    log, written by the reader that owns it (no write to a closed file)."""

    caught: list[BaseException] = []
    old_hook = threading.excepthook
    threading.excepthook = lambda args: caught.append(args.exc_value)
    try:
        log = tmp_path / "s.log"
        script = "echo 'rule a:'; (sleep 6; echo late) & exit 0"
        result = snakerun.run(["bash", "-c", script], log, stream=io.StringIO())
        assert result.returncode == 0
        assert log.read_text("utf-8").splitlines()[0] == "rule a:"
        deadline = time.monotonic() + 20
        while "late" not in log.read_text("utf-8") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert log.read_text("utf-8").splitlines() == ["rule a:", "late"]
    finally:
        threading.excepthook = old_hook
    assert caught == []


# Snakemake's main as the launcher finds it, replaced: one non-daemon timer left pending (as
# Snakemake's job-rate timers are), then the status given.
_LAUNCH = """
import sys, threading
import snakemake.cli
from phenomt.core import snakerun

def fake_main(argv):
    print("ran", argv, flush=True)
    threading.Timer(600, lambda: print("timer fired")).start()
    if {code!r} == "ctrl-c":
        raise KeyboardInterrupt
    sys.exit({code!r})

snakemake.cli.main = fake_main
snakerun.main(["-n", "--cores", "1"])
"""


def test_the_launcher_ends_with_snakemakes_status_without_waiting_for_its_timers():
    for code, status, said in ((None, 0, ""), (0, 0, ""), (1, 1, ""), ("failed", 1, "failed"),
                               ("ctrl-c", 130, "snakemake: interrupted")):
        done = subprocess.run([sys.executable, "-c", _LAUNCH.format(code=code)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == status, done.stderr
        assert done.stdout == "ran ['-n', '--cores', '1']\n"
        assert "timer fired" not in done.stdout
        assert done.stderr.strip() == said


def test_the_launcher_runs_snakemakes_command_line():
    done = subprocess.run(snakerun.command("--version"), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0
    assert done.stdout.strip() == importlib.metadata.version("snakemake")


def test_a_snakemake_started_ahead_runs_the_command_line_it_is_handed_later(tmp_path):
    with snakerun.Ahead() as ahead:
        waiting = ahead.process
        result = snakerun.run(snakerun.command("--version"), tmp_path / "s.log",
                              stream=io.StringIO(), ahead=ahead)
    assert result.returncode == 0
    assert waiting.args == snakerun.command(snakerun.AHEAD)  # the process started ahead ran it
    assert (tmp_path / "s.log").read_text("utf-8").strip() == \
        importlib.metadata.version("snakemake")


def test_a_snakemake_started_ahead_and_never_handed_a_command_line_does_nothing(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ahead = snakerun.Ahead(imports=["phenomt.plan"])
    waiting = ahead.process
    ahead.close()
    assert waiting.returncode is not None and ahead.process is None
    assert list(tmp_path.iterdir()) == []
    # the end of its input (its caller killed outright) ends it as well, having run nothing
    waiting = snakerun.Ahead().process
    waiting.stdin.close()
    assert waiting.wait(timeout=60) == 0 and waiting.stdout.read() == ""
    assert list(tmp_path.iterdir()) == []


def test_a_command_that_is_not_snakemakes_runs_in_a_process_of_its_own(tmp_path):
    with snakerun.Ahead() as ahead:
        waiting = ahead.process
        result = snakerun.run([sys.executable, "-c", "print('other')"], tmp_path / "s.log",
                              stream=io.StringIO(), ahead=ahead)
    assert result.returncode == 0 and waiting.returncode is not None  # closed unused
    assert (tmp_path / "s.log").read_text("utf-8") == "other\n"


def test_a_snakemake_started_ahead_imports_and_collects_its_plugins_before_the_run():
    # in a process of its own: this one may have imported Snakemake's modules already
    code = ("import sys\n"
            "from phenomt.core import snakerun\n"
            "from snakemake_interface_executor_plugins.registry import ExecutorPluginRegistry\n"
            "assert ExecutorPluginRegistry._instance is None and 'smart_open' not in "
            "sys.modules\n"
            "snakerun.warm_snakemake()\n"
            "late = [m for m in snakerun.SNAKEMAKE_LATE_IMPORTS if m not in sys.modules]\n"
            "print(late, 'local' in ExecutorPluginRegistry().plugins)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "True"]
