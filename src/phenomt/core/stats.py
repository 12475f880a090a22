"""Corpus statistics: sentences and tokens per side (thesis Tables 3.1 and 3.2)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from phenomt.core.corpus import read_parallel
from phenomt.core.io import write_json


def corpus_stats(paths: Sequence[str | Path], langs: Sequence[str]) -> dict:
    """Sentence count and whitespace-token count of each side of a tokenized parallel corpus."""
    cols = read_parallel(paths)
    stats: dict = {"sentences": len(cols[0])}
    for lang, col in zip(langs, cols, strict=True):
        stats[f"tokens_{lang}"] = sum(len(line.split()) for line in col)
    return stats


def _stats_command(args: argparse.Namespace) -> int:
    stats = corpus_stats(args.inputs, args.langs)
    stats.update({"label": args.label, "split": args.split, "langs": list(args.langs),
                  "paper": json.loads(args.paper) if args.paper else None})
    write_json(args.output, stats)
    return 0


def register_cli(tree) -> None:
    p = tree.add("corpus stats", "Sentences and tokens per side of a tokenized corpus",
                 _stats_command)
    p.add_argument("--inputs", nargs="+", required=True)
    p.add_argument("--langs", nargs="+", required=True)
    p.add_argument("--label", required=True, help="corpus name shown in tables")
    p.add_argument("--split", required=True)
    p.add_argument("--paper", help="published numbers as JSON, shown beside ours")
    p.add_argument("--output", required=True)
