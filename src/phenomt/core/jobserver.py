"""Run the ``phenomt`` commands of one Snakemake run in forks of one warm process.

Every job of ``phenomt evaluate`` is a short ``phenomt`` command, and a fresh interpreter
spends 0.3 to 0.8 s importing numpy, sacreBLEU, pandas or matplotlib before its work, more
than many jobs' work itself. ``evaluate`` therefore starts a job server beside Snakemake: one
process that imports those modules once and forks a child for each job. A job's ``phenomt``
command (the client, :func:`delegate`) sends the server its arguments, working folder,
environment, umask and standard streams; the forked child runs the command on them exactly
as the client's own process would have, and its exit status becomes the client's. Outputs
are the same bytes either way.

- Signals the client gets (Snakemake stopping a job) are passed on to the child. A child
  whose client is gone (killed outright) stops itself, so no job outlives its client.
- Without a server (the variable unset, its socket gone, the server not answering) the
  command runs in the client's own process.
- Snakemake's ``benchmark:`` files measure a job's own process tree: under the server their
  wall time is the job's, their CPU and memory columns the client's only.

The client is :mod:`phenomt.core.jobclient`, which every job's ``phenomt`` process imports
and which therefore imports only a few modules of the standard library.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from phenomt.core.jobclient import HEADER, PID, SOCKET_ENV, STATUS, STREAMS, receive

if TYPE_CHECKING:
    import subprocess

#: What a server imports for the jobs of an ``evaluate`` run, in the order its jobs first
#: need them (the test set's preparation and tokenization, the scores, the analyses, then
#: the tables and figures). A module that is not installed (an optional extra) is left out.
PRELOAD = ("phenomt.core.fetch", "phenomt.core.corpus", "sacremoses", "phenomt.core.text",
           "numpy", "sacrebleu", "phenomt.core.metrics.bleu", "phenomt.core.metrics.chrf",
           "phenomt.systems.scores", "phenomt.systems.cli", "wordfreq",
           "phenomt.systems.analysis", "yaml", "phenomt.systems.sentences",
           "phenomt.systems.challenge", "phenomt.ldd.extract", "phenomt.ldd.score", "pandas",
           "phenomt.core.tables", "phenomt.systems.tables", "phenomt.ldd.tables",
           "phenomt.core.figures")
#: The warm-up steps that take 0.3 s or more (0.3 to 0.55 s each in first runs on
#: newstest2017 En-De, nltk's RIBES up to 1.2 s beside the jobs that came during it): while
#: one runs, a stand-in forked just before it serves the jobs that come, which would
#: otherwise wait for its end (see :func:`serve`). A function step is slow where it has a
#: true ``slow`` attribute (the German frequency list's, 0.55 s).
SLOW_STEPS = frozenset({"sacremoses", "wordfreq", "phenomt.core.figures",
                        "nltk.translate.ribes_score", "scipy.stats"})
#: One step of a server's warm-up: a module to import, or a function to call (which may
#: return the next step of its work).
Step = str | Callable[[], "Step | None"]
#: The entry point that serves the ``phenomt`` commands (it binds :func:`serve` to the CLI,
#: which this module must not import).
SERVER_MODULE = "phenomt.jobs"


# --------------------------------------------------------------------------- server

def serve(path: str, run: Callable[[list[str]], int],
          preload: Sequence[Step] = PRELOAD,
          ready: Callable[[], None] | None = None, owner: int | None = None,
          warmed: Callable[[], None] | None = None) -> None:
    """Listen at ``path`` and run each request's command with ``run`` (``phenomt``'s command
    line) in a forked child, until SIGTERM or, given ``owner`` (the read end of a pipe whose
    write end the process that started the server holds), until that process is gone.

    The socket exists (and ``ready`` is called) first. The steps of ``preload`` (a module to
    import, or a function that loads what the jobs share and may return its next step) then
    run one at a time whenever no request waits, and ``warmed`` is called after the last:
    a job that comes early is forked at the end of the step under way and imports what it
    still lacks itself, so a run's first jobs never wait for the figures' modules they do
    not use. During a slow step (:func:`is_slow`) a stand-in, a fork of the server made just
    before it, forks the jobs that come instead: they start at once, from what was loaded
    before that step."""
    import gc
    import select

    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    # a server and its stand-in may both see a request: the one that loses the race to
    # accept it gets BlockingIOError instead of blocking
    server.setblocking(False)
    if ready is not None:
        ready()
    # children are reaped by the kernel; Ctrl-C belongs to Snakemake, which stops the jobs
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_serving)
    steps = list(preload)
    if warmed is not None:
        steps.append(warmed)
    watched = [server] if owner is None else [server, owner]
    while True:
        readable, _, _ = select.select(watched, [], [], 0 if steps else None)
        if owner in readable and not os.read(owner, 1):
            # its owner is gone (killed outright): no server outlives it, and a SIGTERM
            # that comes while it exits is not an error (see _stop_serving)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            return
        if server in readable:
            _fork_job(server, run, (owner,))
        elif steps:
            step = steps.pop(0)
            dismiss = _stand_in(server, owner, run) if is_slow(step) else None
            following = _load(step)
            if dismiss is not None:
                os.close(dismiss)
            if following is not None:
                steps.insert(0, following)
            gc.freeze()  # what is loaded stays shared with the children (no copy on write)


def is_slow(step: Step) -> bool:
    """Whether a stand-in serves the jobs during ``step`` (:data:`SLOW_STEPS`)."""
    if isinstance(step, str):
        return step in SLOW_STEPS
    return bool(getattr(step, "slow", False))


def _fork_job(server: socket.socket, run: Callable[[list[str]], int],
              held: Sequence[int | None] = ()) -> None:
    """Accept a waiting request and fork the child that runs it, which closes the listening
    socket and the file descriptors ``held`` (nothing if another process of the server
    accepted the request first)."""
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return
    if os.fork() == 0:
        server.close()
        for fd in held:
            if fd is not None:
                os.close(fd)
        _child(conn, run)  # does not return
    conn.close()


def _stand_in(server: socket.socket, owner: int | None,
              run: Callable[[list[str]], int]) -> int:
    """Fork a process that forks a child for each request, as the server does, until the
    returned file descriptor is closed (the end of the server's slow step) or the owner is
    gone. A request it has accepted is forked before it leaves; one it has not is the
    server's again. SIGTERM (the end of the run) ends it at once: it holds nothing."""
    leave, dismiss = os.pipe()
    if os.fork() != 0:
        os.close(leave)
        return dismiss
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.close(dismiss)
        import select

        watched = [server, leave] if owner is None else [server, leave, owner]
        while True:
            readable, _, _ = select.select(watched, [], [])
            if leave in readable or (owner in readable and not os.read(owner, 1)):
                break
            _fork_job(server, run, (owner, leave))
    finally:
        os._exit(0)


def _stop_serving(_sig: int, _frame: object) -> None:
    # once: a second SIGTERM during the interpreter's exit would raise inside its atexit
    # callbacks, which print "Exception ignored" into the server's log
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise SystemExit(0)


def _load(step: Step) -> Step | None:
    """One step of a server's preload: import a module, or call a function, which may
    return the step that goes on with its work (done next, so that a long load is split
    into steps between which the server takes requests). What is not installed (an
    optional extra; matplotlib in a light install) is left out; any other failure goes to
    the server's log, and the jobs load that part themselves."""
    import importlib

    try:
        if not isinstance(step, str):
            return step()
        module = importlib.import_module(step)
        if step == "phenomt.core.figures":
            module.pyplot()
    except ImportError:
        pass
    except Exception:  # noqa: BLE001 -- a warm-up step never stops the server
        import traceback

        traceback.print_exc()
    return None


def _child(conn: socket.socket, run: Callable[[list[str]], int]) -> None:
    """One job: take over the client's streams, folder, environment and umask, run the
    command, send its status and end."""
    status = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        header, fds, _flags, _addr = socket.recv_fds(conn, HEADER.size, STREAMS)
        request = json.loads(receive(conn, HEADER.unpack(header)[0]).decode("utf-8"))
        _take_streams(fds, request["streams"])
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.umask(request["umask"])
        sys.argv = ["phenomt", *request["argv"]]
        conn.sendall(PID.pack(os.getpid()))
        threading.Thread(target=_watch, args=(conn,), daemon=True).start()
        status = _status(run, request["argv"])
    finally:
        _finish(conn, status)


def _take_streams(fds: Sequence[int], targets: Sequence[int]) -> None:
    """Make the received ``fds`` this process's ``targets`` (0, 1, 2). A received one may
    already have the number of a standard stream (the server's closed standard input is the
    lowest free number): all are moved above them first."""
    import fcntl

    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, STREAMS) for fd in fds]
    for fd in fds:
        os.close(fd)
    for fd, target in zip(moved, targets, strict=True):
        os.dup2(fd, target)
        os.close(fd)


def _status(run: Callable[[list[str]], int], argv: list[str]) -> int:
    try:
        return int(run(argv) or 0)
    except SystemExit as end:
        code = end.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except BaseException:  # noqa: BLE001 -- as an uncaught exception ends a process
        import traceback

        traceback.print_exc()
        return 1


def _watch(conn: socket.socket) -> None:
    """End the job when its client is gone (the client sends nothing after its request)."""
    with suppress(OSError):
        conn.recv(1)
    os.kill(os.getpid(), signal.SIGKILL)


def _finish(conn: socket.socket, status: int) -> None:
    import atexit

    atexit._run_exitfuncs()  # what a process's normal end runs (logging's flush)
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
    with suppress(OSError):
        conn.sendall(STATUS.pack(status))
    os._exit(status & 0xFF)


class Served:
    """A job server started by :func:`running`: ``env`` sends the jobs' commands to it."""

    def __init__(self, env: dict[str, str], process: subprocess.Popen, log: Path) -> None:
        self.env = env
        self.log = log
        #: Where the server's own errors are kept after it stops; None: they are dropped
        #: (a run refused before it wrote anything).
        self.keep_log: Path | None = None
        self._process = process

    def ready(self) -> bool:
        """Wait until the server listens; False if it ended first (its jobs then run as
        their own processes)."""
        assert self._process.stdout is not None
        if self._process.stdout.closed:
            return True
        listening = self._process.stdout.readline().strip() == "listening"
        self._process.stdout.close()
        return listening


@contextmanager
def running(env: dict[str, str], server_args: Sequence[str] = ()) -> Iterator[Served]:
    """A job server for the duration of the block (``server_args`` added to its command
    line): ``env`` with the variable that sends the jobs' commands to it. The server binds its
    socket within a moment and warms up while the caller goes on (see :func:`serve`); a job
    that starts before it listens runs as its own process. At the end the server and any job
    still running in it are stopped, and its own errors are moved to ``keep_log`` if set."""
    import shutil
    import subprocess
    import tempfile

    # a folder only this user can enter: nobody else can send the server a command
    folder = Path(tempfile.mkdtemp(prefix="phenomt-jobs-"))
    path, log = str(folder / "socket"), folder / "jobserver.log"
    with open(log, "w", encoding="utf-8") as errors:
        # its standard input is a pipe this process holds open: if this process is killed
        # outright, the server sees the pipe's end and stops
        server = subprocess.Popen([sys.executable, "-m", SERVER_MODULE, path, *server_args],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=errors, env=env, text=True,
                                  start_new_session=True)
    served = Served(dict(env, **{SOCKET_ENV: path}), server, log)
    try:
        yield served
    finally:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.close()
        server.stdout.close()
        _stop(server)
        if served.keep_log is not None:
            _keep(log, served.keep_log)
        shutil.rmtree(folder, ignore_errors=True)


def _keep(log: Path, target: Path) -> None:
    from phenomt.core.io import atomic_write

    with atomic_write(target) as out:
        out.write(log.read_text("utf-8", errors="replace"))


def _stop(server) -> None:
    """SIGTERM to the server's process group (the server and its jobs), SIGKILL if they
    linger."""
    import subprocess

    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(server.pid, sig)
        except ProcessLookupError:
            break
        try:
            server.wait(timeout=5)
            break
        except subprocess.TimeoutExpired:
            continue
    server.wait()
