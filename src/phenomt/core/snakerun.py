"""Run Snakemake as a child process for a command-line user: its whole log goes to a file,
the terminal gets one progress line, Ctrl-C stops it cleanly, and a failed run ends with the
failing job's own error line instead of Snakemake's report.

Snakemake prints one block of several lines per job; a run of a few dozen jobs prints
hundreds of lines in which a failure is hard to find. The log file keeps all of it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn, TextIO

_DONE = re.compile(r"^(\d+) of (\d+) steps \(\d+%\) done")
_TOTAL = re.compile(r"^total\s+(\d+)\s*$")
_RULE = re.compile(r"^(?:local)?rule (\S+):\s*$")
_ERROR_RULE = re.compile(r"^Error in rule (\S+):")
_JOB_LOG = re.compile(r"^\s+log: (.+?) \(check log file")
_NOTHING = "Nothing to be done"
#: How long a stopped run may take to end its jobs before it is terminated.
STOP_GRACE_S = 30.0


@dataclass
class Progress:
    """What the log has shown so far: jobs done of the total, the current stage."""

    done: int = 0
    total: int | None = None
    stage: str = "starting"
    started: float = field(default_factory=time.monotonic)

    def update(self, line: str) -> None:
        if match := _DONE.match(line):
            self.done, self.total = int(match[1]), int(match[2])
        elif match := _TOTAL.match(line):
            self.total = int(match[1])
        elif match := _RULE.match(line):
            self.stage = match[1]
        elif line.startswith(_NOTHING):
            self.total, self.stage = 0, "nothing to do"

    def line(self) -> str:
        """``[3/12 jobs] systems_score, 0:07``."""
        elapsed = int(time.monotonic() - self.started)
        total = "?" if self.total is None else str(self.total)
        return f"[{self.done}/{total} jobs] {self.stage}, {elapsed // 60}:{elapsed % 60:02d}"


@dataclass(frozen=True)
class RunResult:
    """How a Snakemake run ended."""

    returncode: int
    interrupted: bool
    progress: Progress
    log: Path


#: The first argument of :func:`main` that makes it import Snakemake (and the modules named
#: after it), then wait for its command line (a JSON list, one line on standard input).
AHEAD = "--command-line-from-stdin"
#: What Snakemake 9 imports only once it runs, before its DAG: its profiles, storage and
#: report modules and, through its source cache, smart_open with requests (about 0.5 s of a
#: run's 1.0 s there, measured on newstest2017 En-De); and pandas, which its metadata
#: records import when the first job ends, wherever pandas is installed (0.3 s; the SLURM
#: executor plugin, where installed, imports it with Snakemake). A process started ahead
#: imports them while it waits; one missing (another Snakemake release) is skipped.
SNAKEMAKE_LATE_IMPORTS = ("snakemake.profiles", "snakemake.storage", "snakemake.assets",
                          "snakemake.report", "snakemake.report.html_reporter", "smart_open",
                          "pandas")


def _start(cmd: Sequence[str], env: dict[str, str] | None,
           stdin: int | None = None) -> subprocess.Popen:
    # A session of its own: the terminal's Ctrl-C reaches this process only, which passes it
    # on once, so Snakemake is not signalled twice and its jobs are stopped by Snakemake.
    return subprocess.Popen(list(cmd), stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env, text=True, errors="replace",
                            start_new_session=True)


class Ahead:
    """A Snakemake process started before its command line is known: it imports Snakemake
    (about 1 s) while the caller still checks its inputs, then :func:`run` hands it the
    command line. Closed without one (a refused run, or the end of its ``with`` block), it is
    killed, having done and written nothing; killed outright, its caller leaves it the end of
    its input, which ends it too."""

    def __init__(self, env: dict[str, str] | None = None, imports: Sequence[str] = ()) -> None:
        """``imports``: modules the workflow imports, imported while it waits as well."""
        self.env = env
        self.process: subprocess.Popen | None = _start(command(AHEAD, *imports), env,
                                                       subprocess.PIPE)

    def launch(self, cmd: Sequence[str]) -> subprocess.Popen:
        """Run ``cmd`` (:func:`command`'s command line) in the waiting process, or in a new
        one if that one is gone or ``cmd`` is another program."""
        process, self.process = self.process, None
        prefix = command()
        if process is not None and list(cmd[:len(prefix)]) == prefix:
            assert process.stdin is not None
            try:
                process.stdin.write(json.dumps(list(cmd[len(prefix):])) + "\n")
                process.stdin.close()
                return process
            except OSError:  # it ended early (its error is in its output): start afresh
                pass
        if process is not None:
            _close(process)
        return _start(cmd, self.env)

    def close(self) -> None:
        if self.process is not None:
            _close(self.process)
            self.process = None

    def __enter__(self) -> Ahead:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _close(process: subprocess.Popen) -> None:
    """End a process that waits for its command line: it has started nothing and written
    nothing, so it is killed at once (a refused run's error is not held up by its imports)."""
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def run(cmd: Sequence[str], log: Path, *, env: dict[str, str] | None = None,
        verbose: bool = False, stream: TextIO | None = None,
        ahead: Ahead | None = None) -> RunResult:
    """Run ``cmd`` (a Snakemake command line) with its output written to ``log``; in the
    process ``ahead`` started if given (with that process's environment, not ``env``).

    ``verbose`` copies every line to ``stream`` (stderr) as well; otherwise a terminal gets
    one progress line, redrawn in place, and anything else nothing until the end. Ctrl-C is
    passed on to Snakemake, which stops its jobs; the result says it was interrupted.
    """
    stream = stream or sys.stderr
    live = not verbose and stream.isatty()
    log.parent.mkdir(parents=True, exist_ok=True)
    progress = Progress()
    out = open(log, "w", encoding="utf-8")  # noqa: SIM115 -- the reader closes it
    child = ahead.launch(cmd) if ahead is not None else _start(cmd, env)
    reader = threading.Thread(target=_copy, args=(child.stdout, out, progress,
                                                  stream if verbose else None),
                              daemon=True)
    reader.start()
    interrupted = False
    try:
        while True:
            if live:
                _draw(stream, progress.line())
            try:  # returns as soon as Snakemake ends, not at the next redraw
                child.wait(timeout=0.25)
                break
            except subprocess.TimeoutExpired:
                pass
    except KeyboardInterrupt:
        interrupted = True
        _stop(child)
    # A job that outlives Snakemake (stopped, but not yet gone) may hold the pipe open: the
    # run's result does not wait for it, and the reader, which owns the log, writes what
    # still comes and closes the file at the pipe's end.
    reader.join(timeout=5)
    if live:
        _draw(stream, "")
    return RunResult(child.returncode, interrupted, progress, log)


def _copy(source: TextIO, out: TextIO, progress: Progress, echo: TextIO | None) -> None:
    """Copy the child's output to the log (closed at the end) and the progress."""
    with out:
        for line in source:
            out.write(line)
            out.flush()
            progress.update(line.rstrip("\n"))
            if echo is not None:
                echo.write(line)


def _draw(stream: TextIO, text: str) -> None:
    stream.write(f"\r\033[K{text}")
    stream.flush()


def _stop(child: subprocess.Popen) -> None:
    """SIGINT to Snakemake (it cancels its jobs), then SIGTERM and SIGKILL if it lingers.
    A second Ctrl-C while waiting skips to the next step."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            return
        try:
            child.wait(timeout=STOP_GRACE_S if sig == signal.SIGINT else 5)
            return
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            continue


@dataclass(frozen=True)
class Failure:
    """A failed job (its rule, its own error line and its log) or, with no rule, the
    workflow's own error."""

    rule: str | None
    message: str
    log: Path | None

    def line(self, hint: str = "") -> str:
        """``fetch failed: <its error><hint> (log: <path>)``."""
        where = f" (log: {self.log})" if self.log else ""
        head = f"{self.rule} failed: " if self.rule else ""
        return f"{head}{self.message}{hint}{where}"


def failures(log: Path, workdir: Path, limit: int = 3) -> list[Failure]:
    """The failed jobs of a Snakemake log (at most ``limit``), each with the job's own error
    line (see :func:`job_error`) and its log (relative paths are relative to ``workdir``,
    Snakemake's ``--directory``). Without a failed job (the workflow itself failed),
    Snakemake's own last error line."""
    text = log.read_text(encoding="utf-8", errors="replace").splitlines()
    found: list[Failure] = []
    rule = None
    for line in text:
        if match := _ERROR_RULE.match(line):
            rule = match[1]
        elif rule and (match := _JOB_LOG.match(line)):
            job_log = Path(match[1].split()[0])
            if not job_log.is_absolute():
                job_log = workdir / job_log
            found.append(Failure(rule, job_error(job_log), job_log))
            rule = None
    if found:
        return found[:limit]
    errors = [line.strip() for line in text if _is_error(line)]
    return [Failure(None, errors[-1] if errors else "snakemake failed", log)]


def _is_error(line: str) -> bool:
    return bool(re.match(r"^\s*(\w+(Error|Exception)\b|Error\b|error:)", line))


def job_error(path: Path) -> str:
    """The line that says why a job failed: its last ``phenomt: error:`` line, else the last
    line of a Python traceback, else its last non-empty line."""
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8",
                                                    errors="replace").splitlines()]
    except OSError:
        return "no log"
    lines = [ln for ln in lines if ln]
    for line in reversed(lines):
        if "error:" in line and line.startswith("phenomt"):
            return line.split("error:", 1)[1].strip()
    return lines[-1] if lines else "no output"


def print_failures(logs: str | Sequence[str], stream: TextIO | None = None) -> None:
    """Print :func:`failures` of a Snakemake run's log file(s) (its ``onerror`` handler's
    ``log``), relative paths taken from the working folder."""
    stream = stream or sys.stderr
    for log in [logs] if isinstance(logs, str) else list(logs):
        if Path(log).is_file():
            for failure in failures(Path(log), Path.cwd()):
                print(f"phenomt: error: {failure.line()}", file=stream)


def command(*args: str) -> list[str]:
    """The command line of a Snakemake run through :func:`main` (this interpreter)."""
    return [sys.executable, "-m", "phenomt.core.snakerun", *args]


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Snakemake's own command line, whose process ends as soon as Snakemake is done; with
    the one argument :data:`AHEAD`, the command line comes from standard input (:class:`Ahead`).

    Snakemake 9 re-checks its job-rate limit (``--max-jobs-per-timespan``) on
    ``threading.Timer`` threads, which are not daemons: after the last job the interpreter
    waits for the last of them, up to the whole window (1 to 5 s), before the process ends.
    By then Snakemake has written everything, so the process ends with Snakemake's status
    without that wait: the logs are flushed, the pending timers dropped.
    """
    from snakemake.cli import main as snakemake_main

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == [AHEAD]:
        import importlib

        for module in argv[1:]:
            importlib.import_module(module)
        warm_snakemake()
        line = sys.stdin.readline()
        if not line:
            os._exit(0)  # no command line came: the run was refused
        argv = json.loads(line)
        # the jobs must not hold the caller's pipe
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
    try:
        snakemake_main(argv)
        status = 0
    except SystemExit as end:
        status = _exit_status(end.code)
    except KeyboardInterrupt:  # before Snakemake's scheduler, which handles its own
        print("snakemake: interrupted", file=sys.stderr)
        status = 130
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def warm_snakemake() -> None:
    """Do what every Snakemake run does first and what depends on no command line: import
    :data:`SNAKEMAKE_LATE_IMPORTS` and build its argument parser once, which fills its plugin
    registries (each a singleton, kept for the run: 0.3 s of scanning the installed
    packages). Only time is at stake, so a failure here is left to the run to meet."""
    import importlib

    from snakemake.cli import get_argument_parser  # first: its modules import each other

    for module in SNAKEMAKE_LATE_IMPORTS:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    with contextlib.suppress(Exception):
        get_argument_parser()


def _exit_status(code: object) -> int:
    """The status ``sys.exit(code)`` would end the process with."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    main()
