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

Only the standard library is imported at module level: the client must stay light.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

#: The environment variable naming the server's socket, set for the Snakemake run only.
SOCKET_ENV = "PHENOMT_JOB_SERVER"
#: What a server imports before it forks the first job: what the jobs of an ``evaluate``
#: run import. A module that is not installed (an optional extra) is left out.
PRELOAD = ("numpy", "sacrebleu", "sacremoses", "yaml", "pandas", "scipy.stats", "wordfreq",
           "phenomt.core.figures", "phenomt.core.tables", "phenomt.core.text",
           "phenomt.core.metrics.bleu", "phenomt.core.metrics.chrf",
           "phenomt.systems.scores", "phenomt.systems.analysis", "phenomt.systems.tables",
           "phenomt.systems.challenge", "phenomt.systems.sentences", "phenomt.ldd.extract",
           "phenomt.ldd.score", "phenomt.ldd.tables")
#: The entry point that serves the ``phenomt`` commands (it binds :func:`serve` to the CLI,
#: which this module must not import).
SERVER_MODULE = "phenomt.jobs"

#: Signals a client passes on to its job.
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_HEADER = struct.Struct("!I")
_PID = struct.Struct("!q")
_STATUS = struct.Struct("!i")
_STREAMS = 3


# --------------------------------------------------------------------------- client

def delegate(path: str, argv: Sequence[str]) -> int | None:
    """Run ``phenomt argv`` in a fork of the server at ``path``: its exit status, or None
    when no server answers there (the caller runs the command itself)."""
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(path)
    except OSError:
        client.close()
        return None
    with client:
        streams = [fd for fd in range(_STREAMS) if _open(fd)]
        request = json.dumps({"argv": list(argv), "cwd": os.getcwd(), "env": dict(os.environ),
                              "umask": _umask(), "streams": streams}).encode("utf-8")
        try:
            socket.send_fds(client, [_HEADER.pack(len(request))], streams)
            client.sendall(request)
            pid = _PID.unpack(_receive(client, _PID.size))[0]
        except (OSError, ValueError):
            return None  # the server went away before it forked: nothing ran
        forwarded: list[int] = []
        for sig in FORWARDED:
            signal.signal(sig, _forwarder(pid, forwarded))
        try:
            return _STATUS.unpack(_receive(client, _STATUS.size))[0]
        except (OSError, ValueError):
            # the child ended without a status: killed by a signal
            if forwarded:
                return 128 + forwarded[-1]
            print(f"phenomt: the job's process {pid} ended without an exit status",
                  file=sys.stderr)
            return 1


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _receive(conn: socket.socket, size: int) -> bytes:
    """Exactly ``size`` bytes; ValueError at an early end."""
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ValueError("connection closed")
        data += chunk
    return data


def _forwarder(pid: int, forwarded: list[int]) -> Callable:
    def forward(sig: int, _frame: object) -> None:
        forwarded.append(sig)
        with suppress(ProcessLookupError):
            os.kill(pid, sig)
    return forward


# --------------------------------------------------------------------------- server

def serve(path: str, run: Callable[[list[str]], int], preload: Sequence[str] = PRELOAD,
          ready: Callable[[], None] | None = None, owner: int | None = None,
          warm: Callable[[], None] | None = None) -> None:
    """Listen at ``path`` and run each request's command with ``run`` (``phenomt``'s command
    line) in a forked child, until SIGTERM or, given ``owner`` (the read end of a pipe whose
    write end the process that started the server holds), until that process is gone. The
    socket exists (and ``ready`` is called) before the modules of ``preload`` are imported
    and ``warm`` loads what the jobs share: jobs that come early wait in the backlog."""
    import select

    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    if ready is not None:
        ready()
    _preload(preload)
    if warm is not None:
        warm()
    # children are reaped by the kernel; Ctrl-C belongs to Snakemake, which stops the jobs
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_serving)
    import gc

    gc.freeze()  # the preloaded objects stay shared with the children (no copy on write)
    watched = [server] if owner is None else [server, owner]
    while True:
        readable, _, _ = select.select(watched, [], [])
        if owner in readable and not os.read(owner, 1):
            return  # its owner is gone (killed outright): no server outlives it
        if server not in readable:
            continue
        conn, _ = server.accept()
        if os.fork() == 0:
            server.close()
            if owner is not None:
                os.close(owner)
            _child(conn, run)  # does not return
        conn.close()


def _stop_serving(_sig: int, _frame: object) -> None:
    raise SystemExit(0)


def _preload(modules: Sequence[str]) -> None:
    import importlib

    for module in modules:
        with suppress(ImportError):
            importlib.import_module(module)
    if "phenomt.core.figures" in sys.modules:
        with suppress(ImportError):
            sys.modules["phenomt.core.figures"].pyplot()


def _child(conn: socket.socket, run: Callable[[list[str]], int]) -> None:
    """One job: take over the client's streams, folder, environment and umask, run the
    command, send its status and end."""
    status = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        header, fds, _flags, _addr = socket.recv_fds(conn, _HEADER.size, _STREAMS)
        request = json.loads(_receive(conn, _HEADER.unpack(header)[0]).decode("utf-8"))
        _take_streams(fds, request["streams"])
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.umask(request["umask"])
        sys.argv = ["phenomt", *request["argv"]]
        conn.sendall(_PID.pack(os.getpid()))
        threading.Thread(target=_watch, args=(conn,), daemon=True).start()
        status = _status(run, request["argv"])
    finally:
        _finish(conn, status)


def _take_streams(fds: Sequence[int], targets: Sequence[int]) -> None:
    """Make the received ``fds`` this process's ``targets`` (0, 1, 2). A received one may
    already have the number of a standard stream (the server's closed standard input is the
    lowest free number): all are moved above them first."""
    import fcntl

    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, _STREAMS) for fd in fds]
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
        conn.sendall(_STATUS.pack(status))
    os._exit(status & 0xFF)


@contextmanager
def running(log: Path, env: dict[str, str],
            server_args: Sequence[str] = ()) -> Iterator[dict[str, str]]:
    """A job server for the duration of the block (``server_args`` added to its command
    line), its own errors written to ``log``:
    ``env`` with the variable that sends the jobs' commands to it (``env`` itself if the
    server did not start; the jobs then run as their own processes). At the end the server
    and any job still running in it are stopped."""
    import shutil
    import subprocess
    import tempfile

    # a folder only this user can enter: nobody else can send the server a command
    folder = tempfile.mkdtemp(prefix="phenomt-jobs-")
    path = os.path.join(folder, "socket")
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as errors:
        # its standard input is a pipe this process holds open: if this process is killed
        # outright, the server sees the pipe's end and stops
        server = subprocess.Popen([sys.executable, "-m", SERVER_MODULE, path, *server_args],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=errors, env=env, text=True,
                                  start_new_session=True)
    try:
        assert server.stdout is not None and server.stdin is not None
        ready = server.stdout.readline().strip() == "listening"
        server.stdout.close()
        yield dict(env, **{SOCKET_ENV: path}) if ready else env
    finally:
        server.stdin.close()
        _stop(server)
        shutil.rmtree(folder, ignore_errors=True)


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
