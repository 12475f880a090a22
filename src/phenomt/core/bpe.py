"""Joint BPE with subword-nmt, learnt on the training data only."""

from __future__ import annotations

import argparse
import io
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from subword_nmt.apply_bpe import BPE
from subword_nmt.learn_bpe import learn_bpe

from phenomt.core.cliargs import positive_int
from phenomt.core.io import InputError, atomic_write, iter_lines, read_text, write_lines

SEPARATOR = "@@"


def learn_joint_bpe(train_files: Iterable[str | Path], codes_path: str | Path, merges: int,
                    min_frequency: int = 2) -> None:
    """Learn ``merges`` BPE operations on the concatenation of the training files."""
    text = io.StringIO()
    paths = [str(path) for path in train_files]
    mergeable = False
    for path in paths:
        for line in iter_lines(path):
            text.write(line)
            text.write("\n")
            # subword-nmt splits words at spaces; a one-character word has no pair to merge
            mergeable = mergeable or any(len(word) > 1 for word in line.split(" "))
    if not mergeable:  # subword-nmt would fail on max() of no pairs
        raise InputError(", ".join(paths), "no word of two or more characters to learn BPE "
                                           "merges from (empty training data?)")
    text.seek(0)
    with atomic_write(codes_path) as out:
        learn_bpe(text, out, merges, min_frequency=min_frequency)


def read_codes(path: Path) -> BPE:
    """The BPE codes of ``path``, checked line by line first: subword-nmt exits the process
    on a malformed line and fails with a traceback on undecodable bytes."""
    if not path.is_file():
        raise InputError(path, "BPE codes file not found")
    lines = read_text(path)
    first = 1
    if lines and lines[0].startswith("#version:"):
        if not re.fullmatch(r"#version: *\d+(\.\d+)*", lines[0].strip()):
            raise InputError(path, f"unreadable version line {lines[0]!r}", 1)
        first = 2
    codes = lines[first - 1:]
    while codes and not codes[-1]:  # subword-nmt ignores trailing empty lines
        codes.pop()
    if not codes:
        raise InputError(path, "holds no BPE merge operations")
    for number, line in enumerate(codes, start=first):
        if len(line.strip(" ").split(" ")) != 2:
            raise InputError(path, f"expected two subword units separated by a space, found "
                                   f"{line!r}", number)
    return BPE(io.StringIO("".join(f"{line}\n" for line in lines)), separator=SEPARATOR)


def apply_bpe(lines: Iterable[str], codes_path: str | Path) -> Iterator[str]:
    bpe = read_codes(Path(codes_path))
    for line in lines:
        yield bpe.process_line(line)


def remove_bpe(line: str) -> str:
    """Undo subword segmentation (the inverse of :func:`apply_bpe`)."""
    return (line + " ").replace(f"{SEPARATOR} ", "").rstrip()


def _learn_command(args: argparse.Namespace) -> int:
    learn_joint_bpe(args.inputs, args.codes, args.merges, args.min_frequency)
    return 0


def _apply_command(args: argparse.Namespace) -> int:
    write_lines(args.output, apply_bpe(iter_lines(args.input), args.codes))
    return 0


def register_cli(tree) -> None:
    p = tree.add("bpe learn", "Learn joint BPE codes on training files", _learn_command)
    p.add_argument("--inputs", nargs="+", required=True)
    p.add_argument("--codes", required=True)
    p.add_argument("--merges", type=positive_int, required=True)
    p.add_argument("--min-frequency", type=positive_int, default=2)
    p = tree.add("bpe apply", "Segment a tokenized file with BPE codes", _apply_command)
    p.add_argument("--codes", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
