"""argparse value types shared by every command, and the tree of nested commands."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable

Handler = Callable[[argparse.Namespace], int | None]


def positive_int(text: str) -> int:
    """An integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def non_negative_int(text: str) -> int:
    """An integer of at least 0."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text}")
    return value


def confidence_level(text: str) -> float:
    """A probability strictly between 0 and 1, such as the confidence level of an interval."""
    value = float(text)
    if not 0.0 < value < 1.0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, "
                                         f"got {text}")
    return value


def cosine_similarity(text: str) -> float:
    """A cosine similarity: a number in [-1, 1]."""
    value = float(text)
    if not -1.0 <= value <= 1.0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"expected a cosine similarity in [-1, 1], got {text}")
    return value


def json_object(text: str) -> dict:
    """A JSON object given on the command line (``--options '{"beam": 5}'``)."""
    shown = repr(text if len(text) <= 60 else f"{text[:57]}...")  # options can be long
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"invalid JSON ({err.msg} at column {err.colno}): "
                                         f"{shown}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {shown}")
    return value


#: A language code as the config schema's ``$defs.lang`` has it (tests hold the two equal).
#: Codes become file names (``train.de``), so nothing else may pass: no path, no space.
LANG_CODE = re.compile(r"[a-z]{2,3}")


def language_code(text: str) -> str:
    """A language code: two or three lowercase ASCII letters (``de``, ``zh``, ``src``)."""
    if not LANG_CODE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected a language code of two or three lowercase "
                                         f"letters (e.g. de, en, zh), got {text!r}")
    return text


def named_file(text: str) -> tuple[str, str]:
    """``NAME=FILE`` (a system and its output, for example) as ``(name, file)``."""
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=FILE, got {text!r}")
    return name, path


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other refusal of
    bad input; ``--help`` still lists the options."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class CommandTree:
    """Builds nested argparse sub-commands from space-separated paths."""

    def __init__(self, parser: argparse.ArgumentParser, groups: dict[str, str] | None = None):
        """``groups``: what each command group (``"extract"``, ``"table"`` ...) does."""
        self._groups: dict[str, argparse._SubParsersAction] = {
            "": parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
        }
        self._help = groups or {}

    def _group(self, path: str) -> argparse._SubParsersAction:
        if path not in self._groups:
            parent, _, name = path.rpartition(" ")
            text = self._help.get(path, f"{name} commands")
            group_parser = self._group(parent).add_parser(name, help=text, description=text)
            self._groups[path] = group_parser.add_subparsers(
                dest=f"command_{path.replace(' ', '_')}", metavar="COMMAND", required=True)
        return self._groups[path]

    def add(self, path: str, help: str, handler: Handler) -> argparse.ArgumentParser:
        """Add the command ``path`` (e.g. ``"extract lexical"``) and return its parser."""
        parent, _, name = path.rpartition(" ")
        sub = self._group(parent).add_parser(name, help=help, description=help)
        sub.set_defaults(handler=handler)
        return sub
