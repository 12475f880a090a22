"""Quoting settings into command-line arguments for the rules' shell commands."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from typing import Any


def shell_args(pairs: Iterable[tuple[str, Any]]) -> str:
    """Quote ``--flag value`` pairs for a shell command; ``None`` and ``False`` are skipped,
    ``True`` gives the bare flag and a list gives several values."""
    parts: list[str] = []
    for flag, value in pairs:
        if value is None or value is False:
            continue
        if value is True:
            parts.append(flag)
        elif isinstance(value, list | tuple):
            parts.extend([flag, *(shlex.quote(str(v)) for v in value)])
        else:
            parts.extend([flag, shlex.quote(str(value))])
    return " ".join(parts)


def quote_all(values: Iterable[Any]) -> str:
    """Values as separate shell words, each quoted (the values of one ``nargs`` option)."""
    return " ".join(shlex.quote(str(v)) for v in values)


def note_args(notes: Iterable[str]) -> str:
    """``--note`` arguments of a table command, quoted."""
    return " ".join(f"--note {shlex.quote(n)}" for n in notes)


def options_json(options: dict[str, Any]) -> str:
    """Options as the JSON that ``phenomt`` commands take (``--options``, ``--spec``), keys
    sorted: the order of keys in a config file must not count as a change of parameters."""
    return json.dumps(options, sort_keys=True)
