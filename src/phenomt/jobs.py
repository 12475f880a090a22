"""``python -m phenomt.jobs SOCKET [--wordfreq LANG]...``: the job server of ``phenomt
evaluate`` (:mod:`phenomt.core.jobserver`) bound to the ``phenomt`` commands. It prints one
line when it listens and serves until SIGTERM or the end of its standard input. Each
``--wordfreq`` language's frequency table is loaded before the first fork, so that the
analyses share it instead of each loading it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from phenomt.cli import COMMAND_MODULES, run
from phenomt.core.jobserver import PRELOAD, serve


def warm_wordfreq(languages: Sequence[str]) -> None:
    """Load wordfreq's table of each language it has a list for (the others are the
    analysis job's own error to report)."""
    import wordfreq

    from phenomt.systems.analysis import wordfreq_table

    for lang in languages:
        if lang in wordfreq.available_languages():
            wordfreq_table(lang)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m phenomt.jobs")
    parser.add_argument("socket")
    parser.add_argument("--wordfreq", action="append", default=[], metavar="LANG")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)

    def ready() -> None:
        print("listening", flush=True)

    try:
        serve(args.socket, run, preload=(*PRELOAD, *COMMAND_MODULES), ready=ready,
              owner=sys.stdin.fileno(), warm=lambda: warm_wordfreq(args.wordfreq))
    finally:
        Path(args.socket).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
