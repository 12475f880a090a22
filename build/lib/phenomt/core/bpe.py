"""Joint BPE with subword-nmt, learnt on the training data only."""

from __future__ import annotations

import argparse
import io
from collections.abc import Iterable, Iterator
from pathlib import Path

from subword_nmt.apply_bpe import BPE
from subword_nmt.learn_bpe import learn_bpe

from phenomt.core.io import InputError, atomic_write, iter_lines, write_lines

SEPARATOR = "@@"


def learn_joint_bpe(train_files: Iterable[str | Path], codes_path: str | Path, merges: int,
                    min_frequency: int = 2) -> None:
    """Learn ``merges`` BPE operations on the concatenation of the training files."""
    text = io.StringIO()
    for path in train_files:
        for line in iter_lines(path):
            text.write(line)
            text.write("\n")
    text.seek(0)
    with atomic_write(codes_path) as out:
        learn_bpe(text, out, merges, min_frequency=min_frequency)


def apply_bpe(lines: Iterable[str], codes_path: str | Path) -> Iterator[str]:
    path = Path(codes_path)
    if not path.is_file():
        raise InputError(path, "BPE codes file not found")
    with open(path, encoding="utf-8") as codes:
        bpe = BPE(codes, separator=SEPARATOR)
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
    p.add_argument("--merges", type=int, required=True)
    p.add_argument("--min-frequency", type=int, default=2)
    p = tree.add("bpe apply", "Segment a tokenized file with BPE codes", _apply_command)
    p.add_argument("--codes", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
