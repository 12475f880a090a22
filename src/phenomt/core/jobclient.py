"""The client side of the job server (:mod:`phenomt.core.jobserver`): every job's
``phenomt`` process runs :func:`delegate` before anything else, so this module imports only
what a connection needs (about 10 ms); the command line's own modules are never loaded in a
process whose command runs in the server."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress

#: The environment variable naming the server's socket, set for the Snakemake run only.
SOCKET_ENV = "PHENOMT_JOB_SERVER"
#: Signals a client passes on to its job.
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
#: The protocol, shared with the server: a request's length, then the job's process id and
#: its exit status; the standard streams sent with the request.
HEADER = struct.Struct("!I")
PID = struct.Struct("!q")
STATUS = struct.Struct("!i")
STREAMS = 3


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
        streams = [fd for fd in range(STREAMS) if _open(fd)]
        request = json.dumps({"argv": list(argv), "cwd": os.getcwd(), "env": dict(os.environ),
                              "umask": _umask(), "streams": streams}).encode("utf-8")
        try:
            socket.send_fds(client, [HEADER.pack(len(request))], streams)
            client.sendall(request)
            pid = PID.unpack(receive(client, PID.size))[0]
        except (OSError, ValueError):
            return None  # the server went away before it forked: nothing ran
        forwarded: list[int] = []
        for sig in FORWARDED:
            signal.signal(sig, _forwarder(pid, forwarded))
        try:
            return STATUS.unpack(receive(client, STATUS.size))[0]
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


def receive(conn: socket.socket, size: int) -> bytes:
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
