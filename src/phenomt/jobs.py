"""``python -m phenomt.jobs SOCKET``: the job server of ``phenomt evaluate``
(:mod:`phenomt.core.jobserver`) bound to the ``phenomt`` commands. It prints one line when it
listens and serves until SIGTERM or the end of its standard input."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from phenomt.cli import COMMAND_MODULES, run
from phenomt.core.jobserver import PRELOAD, serve


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        sys.exit("usage: python -m phenomt.jobs SOCKET")

    def ready() -> None:
        print("listening", flush=True)

    try:
        serve(args[0], run, preload=(*PRELOAD, *COMMAND_MODULES), ready=ready,
              owner=sys.stdin.fileno())
    finally:
        Path(args[0]).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
