"""Corpus statistics: sentences and tokens per side (thesis Tables 3.1 and 3.2)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from phenomt.core import papers
from phenomt.core.cliargs import json_object
from phenomt.core.corpus import read_parallel
from phenomt.core.io import InputError, write_json

THESIS = "thesis_ch3"
_IWSLT14 = "Table 3.1"
_WMT19 = "Table 3.2"
#: Our corpus name (config ``corpora:``) -> the thesis table and the row(s) of its data file
#: that hold the same text; several rows are summed. Corpora not listed have no counterpart.
THESIS_CORPORA: dict[str, tuple[str, tuple[str, ...]]] = {
    "iwslt14.train": (_IWSLT14, ("iwslt14/train",)),
    "iwslt14.TED.dev2010": (_IWSLT14, ("iwslt14/ted.dev2010",)),
    "iwslt14.TED.tst2010": (_IWSLT14, ("iwslt14/ted.tst2010",)),
    "iwslt14.TED.tst2011": (_IWSLT14, ("iwslt14/ted.tst2011",)),
    "iwslt14.TED.tst2012": (_IWSLT14, ("iwslt14/ted.tst2012",)),
    "iwslt14.TED.tst2013": (_IWSLT14, ("iwslt14/ted.tst2013",)),
    "iwslt14.TED.tst2014": (_IWSLT14, ("iwslt14/ted.tst2014",)),
    "iwslt14.TEDX.dev2012": (_IWSLT14, ("iwslt14/tedx.dev2012",)),
    "iwslt14.TEDX.tst2013": (_IWSLT14, ("iwslt14/tedx.tst2013",)),
    "iwslt14.TEDX.tst2014": (_IWSLT14, ("iwslt14/tedx.tst2014",)),
    # The fairseq recipe's test file concatenates these five sets.
    "iwslt14.test": (_IWSLT14, ("iwslt14/ted.dev2010", "iwslt14/tedx.dev2012",
                                "iwslt14/ted.tst2010", "iwslt14/ted.tst2011",
                                "iwslt14/ted.tst2012")),
    "europarl.v9": (_WMT19, ("wmt19/europarl",)),
    "news-commentary.v14": (_WMT19, ("wmt19/news-commentary",)),
    "commoncrawl": (_WMT19, ("wmt19/common-crawl",)),
    "paracrawl.v3": (_WMT19, ("wmt19/paracrawl",)),
    "rapid2019": (_WMT19, ("wmt19/eu-press-release",)),
    "wikititles.v1": (_WMT19, ("wmt19/wikititles",)),
}


def thesis_sizes(corpus: str, langs: Sequence[str]) -> dict[str, int | None]:
    """The thesis's ``sentences`` and ``tokens_<lang>`` of our corpus ``corpus`` (summed over
    its rows in :data:`THESIS_CORPORA`); empty when the thesis has no counterpart, ``None``
    for a cell it lacks."""
    if corpus not in THESIS_CORPORA:
        return {}
    table, rows = THESIS_CORPORA[corpus]
    sizes: dict[str, int | None] = {}
    for column in ("sentences", *(f"tokens_{lang}" for lang in langs)):
        value = papers.total(THESIS, table, rows, column)
        sizes[column] = None if value is None else round(value)
    return sizes


def corpus_stats(paths: Sequence[str | Path], langs: Sequence[str]) -> dict:
    """Sentence count and whitespace-token count of each side of a tokenized parallel corpus."""
    cols = read_parallel(paths)
    stats: dict = {"sentences": len(cols[0])}
    for lang, col in zip(langs, cols, strict=True):
        stats[f"tokens_{lang}"] = sum(len(line.split()) for line in col)
    return stats


def _paper(text: str) -> dict | None:
    """``--paper``: a JSON object (the statistics table reads its fields by name); empty:
    none."""
    return json_object(text) if text else None


def _stats_command(args: argparse.Namespace) -> int:
    if len(args.inputs) != len(args.langs):
        raise InputError("--langs", f"{len(args.langs)} languages for the {len(args.inputs)} "
                                    "files of --inputs; give one per file")
    stats = corpus_stats(args.inputs, args.langs)
    stats.update({"label": args.label, "split": args.split, "langs": list(args.langs),
                  "paper": args.paper})
    write_json(args.output, stats)
    return 0


def register_cli(tree) -> None:
    p = tree.add("corpus stats", "Sentences and tokens per side of a tokenized corpus",
                 _stats_command)
    p.add_argument("--inputs", nargs="+", required=True)
    p.add_argument("--langs", nargs="+", required=True)
    p.add_argument("--label", required=True, help="corpus name shown in tables")
    p.add_argument("--split", required=True)
    p.add_argument("--paper", type=_paper, help="published numbers as JSON, shown beside ours "
                   "instead of the thesis's (phenomt.core.stats.THESIS_CORPORA)")
    p.add_argument("--output", required=True)
