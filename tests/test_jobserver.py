"""The job server of ``phenomt evaluate``: a command sent to it runs on the client's streams,
folder, environment and umask and ends with its own status; signals reach the job; a job
whose client is gone stops; without a server the command runs in the client."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from phenomt.core import jobclient, jobserver
from tests.runs import children

PHENOMT = str(Path(sys.executable).with_name("phenomt"))


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> dict[str, str]:
    kept = tmp_path_factory.mktemp("server") / "jobserver.log"
    with jobserver.running(dict(os.environ)) as served:
        assert served.ready(), served.log.read_text("utf-8")
        served.keep_log = kept
        yield served.env
    assert not Path(served.env[jobserver.SOCKET_ENV]).parent.exists()  # its folder is removed
    assert kept.read_text("utf-8") == ""  # its own errors, moved out of that folder


def test_a_server_stopped_without_a_place_for_its_log_leaves_nothing(tmp_path):
    with jobserver.running(dict(os.environ)) as served:
        folder = Path(served.env[jobserver.SOCKET_ENV]).parent
        assert served.log.parent == folder
    assert not folder.exists()


def _phenomt(cwd: Path, env: dict[str, str], *args: str, **kwargs
             ) -> subprocess.CompletedProcess:
    return subprocess.run([PHENOMT, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, **kwargs)


def test_a_job_runs_in_the_clients_folder_on_its_streams(server, tmp_path):
    (tmp_path / "in.txt").write_text("Hello, world!\n", encoding="utf-8")
    done = _phenomt(tmp_path, server, "text", "tokenize", "--lang", "en", "--input", "in.txt",
                    "--output", "out.txt")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.txt").read_text("utf-8") == "Hello , world !\n"
    assert done.stdout == "out.txt: 1 lines\n"


def test_a_failed_job_ends_with_its_status_and_message(server, tmp_path):
    done = _phenomt(tmp_path, server, "text", "tokenize", "--lang", "en", "--input",
                    "missing.txt", "--output", "out.txt")
    assert done.returncode == 2
    assert done.stderr == "phenomt: error: missing.txt: file not found\n"
    assert not (tmp_path / "out.txt").exists()


def test_the_job_reads_the_clients_environment(server, tmp_path):
    # argparse wraps help at $COLUMNS: the job sees the client's value, not the server's
    narrow, wide = ({**env, "COLUMNS": columns} for env, columns in ((server, "50"),
                                                                    (server, "150")))
    here = _phenomt(tmp_path, {k: v for k, v in narrow.items() if k != jobserver.SOCKET_ENV},
                    "systems", "score", "--help")
    there = _phenomt(tmp_path, narrow, "systems", "score", "--help")
    assert there.returncode == 0 and there.stdout == here.stdout
    assert _phenomt(tmp_path, wide, "systems", "score", "--help").stdout != there.stdout


def test_the_server_runs_the_job(server, capfd):
    status = jobclient.delegate(server[jobserver.SOCKET_ENV], ["--version"])
    assert status == 0
    assert capfd.readouterr().out.startswith("phenomt ")


def test_without_a_server_the_command_runs_in_the_client(tmp_path):
    assert jobclient.delegate(str(tmp_path / "no-socket"), ["--version"]) is None
    env = {**os.environ, jobserver.SOCKET_ENV: str(tmp_path / "no-socket")}
    done = _phenomt(tmp_path, env, "--version")
    assert done.returncode == 0 and done.stdout.startswith("phenomt ")


#: A server whose command writes its process id to the file it is given, then sleeps; or
#: copies its standard input to its standard output, upper-cased. Its standard input tells it
#: when its owner is gone, as `evaluate`'s server's does.
SLEEPER = """
import os, sys, time
from pathlib import Path
from phenomt.core import jobclient, jobserver

WARMED = []

def run(argv):
    if argv[0] == "warmed":
        print(WARMED, os.getpid())
        return 0
    if argv[0] == "echo":
        sys.stdout.write(sys.stdin.read().upper())
        return 0
    Path(argv[0]).write_text(str(os.getpid()))
    time.sleep(float(argv[1]))
    return 3

def slow():
    time.sleep(float(sys.argv[2]))
    WARMED.append("slow")
    return lambda: WARMED.append("more")  # its next step, before the following ones

slow.slow = sys.argv[3:] == ["stand-in"]
jobserver.serve(sys.argv[1], run, preload=[slow, lambda: WARMED.append(os.getpid())],
                ready=lambda: print("listening", flush=True), owner=sys.stdin.fileno(),
                warmed=lambda: print("warm", flush=True))
"""
CLIENT = ("import sys; from phenomt.core import jobclient; "
          "sys.exit(jobclient.delegate(sys.argv[1], sys.argv[2:]))")


def _sleeper(path: str, slow_s: float, stand_in: bool = False) -> subprocess.Popen:
    server = subprocess.Popen([sys.executable, "-c", SLEEPER, path, str(slow_s),
                               *(["stand-in"] if stand_in else [])],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    assert server.stdout.readline() == "listening\n"
    return server


@pytest.fixture
def sleeper(tmp_path):
    path = str(tmp_path / "socket")
    server = _sleeper(path, 0)
    assert server.stdout.readline() == "warm\n"
    yield path
    server.stdin.close()
    jobserver._stop(server)


def _assert_served_warm(server: subprocess.Popen, path: str) -> None:
    """Once the server has warmed up, a job is forked from the server itself with all of it."""
    assert server.stdout.readline() == "warm\n"
    late = subprocess.run([sys.executable, "-c", CLIENT, path, "warmed"],
                          capture_output=True, text=True, timeout=60)
    assert late.stdout.startswith(f"['slow', 'more', {server.pid}] ")


def test_a_job_that_comes_while_the_server_warms_up_is_served_after_that_step(tmp_path):
    path = str(tmp_path / "socket")
    server = _sleeper(path, 3)  # its first step takes 3 s
    try:
        early = subprocess.run([sys.executable, "-c", CLIENT, path, "warmed"],
                               capture_output=True, text=True, timeout=60)
        assert early.stdout.startswith("['slow'] ")  # forked before the next step
        _assert_served_warm(server, path)
    finally:
        server.stdin.close()
        jobserver._stop(server)


def test_a_job_that_comes_during_a_slow_step_is_served_at_once_by_a_stand_in(tmp_path):
    path = str(tmp_path / "socket")
    server = _sleeper(path, 15, stand_in=True)  # its first step takes 15 s and is slow
    try:
        start = time.monotonic()
        jobs = [subprocess.run([sys.executable, "-c", CLIENT, path, "warmed"],
                               capture_output=True, text=True, timeout=60) for _ in range(2)]
        assert time.monotonic() - start < 10  # neither waited for the step
        # forked from what the server had loaded before the step
        assert [job.stdout.split(" ")[0] for job in jobs] == ["[]", "[]"]
        assert all(job.returncode == 0 for job in jobs)
        # the step then ends as it would have: the stand-in is dismissed, the server serves
        _assert_served_warm(server, path)
    finally:
        server.stdin.close()
        jobserver._stop(server)


def test_the_stand_in_leaves_at_the_end_of_its_step(tmp_path):
    path = str(tmp_path / "socket")
    server = _sleeper(path, 1, stand_in=True)
    try:
        assert server.stdout.readline() == "warm\n"
        deadline = time.monotonic() + 30
        while children(server.pid):
            assert time.monotonic() < deadline, "the stand-in outlived its step"
            time.sleep(0.05)
    finally:
        server.stdin.close()
        jobserver._stop(server)


def test_the_servers_slow_steps_are_the_long_imports():
    from phenomt.jobs import preload

    steps = preload(["de"], ldd=True)
    assert {step for step in steps if jobserver.is_slow(step) and isinstance(step, str)} == \
        jobserver.SLOW_STEPS
    assert [jobserver.is_slow(step) for step in steps if callable(step)] == [True]  # wordfreq
    assert not jobserver.is_slow("phenomt.core.fetch")


def test_the_job_reads_the_clients_standard_input(sleeper, tmp_path):
    done = subprocess.run([sys.executable, "-c", CLIENT, sleeper, "echo"], input="words\n",
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "WORDS\n")


def test_what_the_server_warms_before_forking_every_job_shares(sleeper):
    jobs = [subprocess.run([sys.executable, "-c", CLIENT, sleeper, "warmed"],
                           capture_output=True, text=True, timeout=60) for _ in range(2)]
    (warmed, first), (again, second) = (job.stdout.rsplit(" ", 1) for job in jobs)
    # loaded once, in the server's own process, before the jobs were forked from it
    [_slow, _more, server_pid] = ast.literal_eval(warmed)
    assert warmed == again and str(server_pid) not in (first.strip(), second.strip())


def test_the_servers_wordfreq_tables_are_the_ones_the_analyses_load():
    import wordfreq

    from phenomt.jobs import warm_wordfreq
    from phenomt.systems.analysis import wordfreq_table

    wordfreq.get_frequency_dict.cache_clear()
    warm_wordfreq(["de", "xx"])  # a language without a list is left to the analysis
    assert wordfreq.get_frequency_dict.cache_info().currsize == 1
    before = wordfreq.get_frequency_dict.cache_info().hits
    assert wordfreq_table("de") is wordfreq_table("de")
    assert wordfreq.get_frequency_dict.cache_info().hits == before + 2


def _job(socket: str, cwd: Path, seconds: float = 600) -> tuple[subprocess.Popen, int]:
    """A client whose job sleeps, and the job's process id."""
    pid_file = cwd / "pid"
    client = subprocess.Popen([sys.executable, "-c", CLIENT, socket, str(pid_file),
                               str(seconds)], cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (pid_file.is_file() and pid_file.read_text()):
        assert time.monotonic() < deadline, "the job never started"
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    assert pid != client.pid  # a process of the server's, not the client itself
    return client, pid


def _gone(pid: int) -> bool:
    """The job's process has ended (the server's children are reaped at once)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_client_reaches_the_job(sleeper, tmp_path, sig):
    # SIGTERM: Snakemake stopping a job; SIGINT: Ctrl-C (KeyboardInterrupt in the job)
    client, pid = _job(sleeper, tmp_path)
    client.send_signal(sig)
    client.communicate(timeout=30)
    assert client.returncode == 128 + sig
    assert _gone(pid)


def test_a_job_whose_client_is_killed_stops(sleeper, tmp_path):
    client, pid = _job(sleeper, tmp_path)
    client.kill()
    client.communicate(timeout=30)
    assert _gone(pid), "the job outlived its client"


def test_a_job_that_ends_returns_its_status(sleeper, tmp_path):
    client, pid = _job(sleeper, tmp_path, seconds=0.5)
    client.communicate(timeout=30)
    assert client.returncode == 3
    assert _gone(pid)


def test_the_server_stops_when_its_owner_is_gone(tmp_path):
    # the end of its standard input: the process that started it was killed outright
    path = tmp_path / "socket"
    server = subprocess.Popen([sys.executable, "-m", jobserver.SERVER_MODULE, str(path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    assert server.stdout.readline() == "listening\n"
    assert jobclient.delegate(str(path), ["--version"]) == 0  # serving
    server.stdin.close()
    assert server.wait(timeout=60) == 0
    assert not path.exists()
    assert jobclient.delegate(str(path), ["--version"]) is None


def test_the_evaluate_servers_steps_follow_the_jobs_needs():
    from phenomt.jobs import LDD_PRELOAD, REFERENCE_AFTER, WORDFREQ_AFTER, preload

    plain, ldd = preload(["de"]), preload(["de"], ldd=True)
    names = [step for step in plain if isinstance(step, str)]
    # the test set's first jobs before the scores, the figures' modules among the last
    assert names.index("sacremoses") < names.index("sacrebleu") < names.index(
        "phenomt.core.figures")
    # the wordfreq tables right after the module that reads them
    assert callable(plain[plain.index(WORDFREQ_AFTER) + 1])
    assert not any(callable(step) for step in preload([]))
    # the reference's n-grams right after the score module, once it is named
    primed = preload([], reference=("ref.de", "de", ["bleu", "chrf"]))
    assert [i for i, step in enumerate(primed) if callable(step)] == [
        primed.index(REFERENCE_AFTER) + 1]
    assert not set(LDD_PRELOAD) & set(names) and set(LDD_PRELOAD) <= set(ldd)


def test_a_failing_warm_up_step_is_skipped_or_logged(capfd):
    """A module that is not installed is skipped, another failure goes to the server's log:
    neither stops the server (the jobs load that part themselves)."""
    from phenomt.core.jobserver import _load

    _load("phenomt_no_such_module")

    def broken() -> None:
        raise RuntimeError("cannot warm")

    _load(broken)
    assert "RuntimeError: cannot warm" in capfd.readouterr().err
