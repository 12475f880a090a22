"""The ``phenomt`` command line.

Every module that offers commands defines ``register_cli(tree: CommandTree) -> None`` and is
listed in :data:`COMMAND_MODULES`; nested commands such as ``phenomt extract lexical`` share
their group parser through :class:`phenomt.core.cliargs.CommandTree`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (10 ms per job)
if TYPE_CHECKING:
    import argparse

# Only what a job's process needs to hand its command to the job server is imported here;
# the command line itself is imported by `run` (a job run by the server never builds it).

# Command group -> modules that register its commands (`phenomt <group> <command>`). Only
# the modules of the invoked group are
# imported, so that e.g. `phenomt corpus prepare` does not pay for pandas, torch or UDPipe.
COMMANDS: dict[str, tuple[str, ...]] = {
    "data": ("phenomt.core.fetch",),
    "corpus": ("phenomt.core.corpus", "phenomt.core.stats"),
    "text": ("phenomt.core.text",),
    "bpe": ("phenomt.core.bpe",),
    "doc": ("phenomt.core.doccontext",),
    "align": ("phenomt.core.align",),
    "parse": ("phenomt.core.parse",),
    "nmt": ("phenomt.core.nmt", "phenomt.core.curves"),
    "score": ("phenomt.core.metrics.redundancy",
              "phenomt.core.metrics.base",
              "phenomt.core.metrics.tcp", "phenomt.lexcons.chains"),
    "extract": ("phenomt.ldd.extract",),
    "ldd": ("phenomt.ldd.cli", "phenomt.ldd.fidelity", "phenomt.ldd.figures"),
    "locality": ("phenomt.ldd.locality",),
    "nat": ("phenomt.nat.tables", "phenomt.nat.figures"),
    "lexcons": ("phenomt.lexcons.chains", "phenomt.lexcons.stats", "phenomt.lexcons.sheet",
                "phenomt.lexcons.convert", "phenomt.lexcons.figures", "phenomt.lexcons.results"),
    "systems": ("phenomt.systems.cli", "phenomt.systems.figures", "phenomt.evaluate"),
    "evaluate": ("phenomt.evaluate",),
    "table": ("phenomt.core.tables", "phenomt.ldd.cli", "phenomt.ldd.locality",
              "phenomt.ldd.locality_claims", "phenomt.nat.tables", "phenomt.nat.claims",
              "phenomt.systems.cli", "phenomt.plan.tables"),
    "report": ("phenomt.core.report",),
}
#: What each command group does (``phenomt --help``, ``phenomt GROUP --help``).
GROUP_HELP: dict[str, str] = {
    "data": "get files from the data mirror or their upstream URLs, unpack archives",
    "corpus": "prepare parallel corpora (validate, normalise) and count them",
    "text": "tokenise and detokenise text (sacremoses; jieba for Chinese)",
    "bpe": "learn and apply subword (BPE) segmentation",
    "doc": "document context for the document-level models",
    "align": "train and apply the word aligner (fast_align's model, grow-diag-final-and)",
    "parse": "parse sentences with UDPipe into CoNLL-U",
    "nmt": "binarise, train, average and decode fairseq models; learning curves",
    "score": "score files with a registered metric (BLEU, chrF, TER, RIBES, CRR, DRR, LTCR), "
             "with intervals; TCP of the Doc2Doc documents",
    "extract": "extract long-distance-dependency challenge sets from parses and alignments",
    "ldd": "long-distance-dependency sets: scores, control, validation sheets, figures",
    "locality": "the locality-bias experiment: permuted sources and their scores",
    "nat": "non-autoregressive models: checkpoint averaging, decoding speed, figures",
    "lexcons": "lexical translation consistency: the released set, chains, LTCR tables",
    "systems": "score given system outputs: metrics, CRR/DRR, challenge sets, MQM, LTCR",
    "table": "build the pipeline's tables (Markdown and CSV) from its records",
    "report": "the HTML report of a run",
}
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(m for ms in COMMANDS.values() for m in ms))


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    import importlib

    from phenomt import __version__
    from phenomt.core.cliargs import CommandTree, Parser

    parser = Parser(
        prog="phenomt", description="phenomt: phenomenon-level evaluation of machine translation")
    parser.add_argument("--version", action="version", version=f"phenomt {__version__}")
    tree = CommandTree(parser, GROUP_HELP)
    for module in modules:
        importlib.import_module(module).register_cli(tree)
    return parser


def modules_for(argv: Sequence[str]) -> Sequence[str]:
    """The modules needed to parse ``argv``: those of its command, or all of them for help."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return COMMANDS.get(first, COMMAND_MODULES) if first else COMMAND_MODULES


def main(argv: Sequence[str] | None = None) -> int:
    """``phenomt``: the command runs in a fork of the run's job server where one is given
    (:mod:`phenomt.core.jobserver`, for the jobs of ``phenomt evaluate``), else here."""
    from phenomt.core import jobclient

    argv = list(sys.argv[1:] if argv is None else argv)
    server = os.environ.get(jobclient.SOCKET_ENV)
    if server:
        status = jobclient.delegate(server, argv)
        if status is not None:
            return status
    return run(argv)


def run(argv: Sequence[str]) -> int:
    """Parse ``argv`` and run its command in this process."""
    from phenomt.core.io import InputError

    argv = list(argv)
    args = build_parser(modules_for(argv)).parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except InputError as err:
        print(f"phenomt: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        # a file named on the command line that cannot be opened: one line, not a traceback
        if err.filename is None:
            raise
        print(f"phenomt: error: {err.filename}: {err.strerror or err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("phenomt: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
