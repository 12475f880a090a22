"""The ``phenomt`` command line.

Every module that offers commands defines ``register_cli(tree: CommandTree) -> None`` and is
listed in :data:`COMMAND_MODULES`; nested commands such as ``phenomt extract lexical`` share
their group parser through :class:`CommandTree`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from phenomt import __version__
from phenomt.io import InputError

Handler = Callable[[argparse.Namespace], int | None]

COMMAND_MODULES: tuple[str, ...] = (
    "phenomt.fetch",
    "phenomt.corpus",
    "phenomt.text",
    "phenomt.bpe",
    "phenomt.stats",
    "phenomt.bleu",
    "phenomt.nmt",
    "phenomt.tables",
    "phenomt.parse",
    "phenomt.challenge",
    "phenomt.redundancy",
    "phenomt.align",
    "phenomt.ldd_eval",
    "phenomt.locality",
)


class CommandTree:
    """Builds nested argparse sub-commands from space-separated paths."""

    def __init__(self, parser: argparse.ArgumentParser):
        self._groups: dict[str, argparse._SubParsersAction] = {
            "": parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
        }

    def _group(self, path: str) -> argparse._SubParsersAction:
        if path not in self._groups:
            parent, _, name = path.rpartition(" ")
            group_parser = self._group(parent).add_parser(name, help=f"{name} commands")
            self._groups[path] = group_parser.add_subparsers(
                dest=f"command_{path.replace(' ', '_')}", metavar="COMMAND", required=True)
        return self._groups[path]

    def add(self, path: str, help: str, handler: Handler) -> argparse.ArgumentParser:
        """Add the command ``path`` (e.g. ``"extract lexical"``) and return its parser."""
        parent, _, name = path.rpartition(" ")
        sub = self._group(parent).add_parser(name, help=help, description=help)
        sub.set_defaults(handler=handler)
        return sub


def build_parser(modules: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="phenomt", description="phenomt: phenomenon-level evaluation of machine translation")
    parser.add_argument("--version", action="version", version=f"phenomt {__version__}")
    tree = CommandTree(parser)
    for module in modules:
        importlib.import_module(module).register_cli(tree)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except InputError as err:
        print(f"phenomt: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
