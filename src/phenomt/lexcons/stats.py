"""Tables 1–3 of Lei et al. (2024) from a test-set folder, with the paper's numbers beside ours.

- Table 3 (annotated pairs by sentence distance) and the pair total of Table 1 come from the
  ``res`` chains alone and must equal the paper's counts.
- Table 2 (annotated pairs by word class) depends on the tagger (:mod:`phenomt.lexcons.pos`).
- Table 1's false-consistency pairs were not released. We approximate them as the L-All pairs
  outside the annotated chains whose two *reference* translations are consistent under the
  LTCR comparison (aligned reference tokens, lower-cased, function words dropped, stemmed).
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from phenomt.core import papers
from phenomt.core.io import write_json
from phenomt.core.lazy import pandas as pd
from phenomt.core.metrics import ltcr
from phenomt.core.tables import write_table
from phenomt.lexcons import chains, pos
from phenomt.lexcons.testset import TestSet, read_testset

PAPER = "lei_2024"


def _percent(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def annotated_distance_counts(testset: TestSet) -> Counter:
    """Annotated pairs per distance bin, straight from the ``res`` chains."""
    counts: Counter = Counter()
    for document in testset.documents:
        for (a, _), (b, _) in chains.annotated_pairs(document):
            counts[ltcr.distance_bin(abs(b - a))] += 1
    return counts


def table3(testset: TestSet) -> pd.DataFrame:
    """Annotated pairs by sentence distance d = 0, 1, 2, 3, 4, ≥5."""
    counts = annotated_distance_counts(testset)
    total = sum(counts.values())
    frame = pd.DataFrame([{"distance": b, "pairs": counts[b], "percent": _percent(counts[b],
                                                                                 total)}
                          for b in ltcr.DISTANCE_BINS])
    return papers.beside(frame, PAPER, "Table 3", "{distance}",
                         {"pairs": "pairs", "percent": "percent"}, printed=True)


def table2(pair_set: chains.PairSet) -> pd.DataFrame:
    """Annotated pairs by the class of their word (tagger-dependent)."""
    counts = Counter(p.word_class for p in pair_set.pairs if p.in_anno)
    total = sum(counts.values())
    frame = pd.DataFrame([{"class": c, "pairs": counts[c], "percent": _percent(counts[c], total)}
                          for c in pos.CLASSES])
    return papers.beside(frame, PAPER, "Table 2", "{class}",
                         {"pairs": "pairs", "percent": "percent"}, printed=True)


def table1(pair_set: chains.PairSet, reference_verdicts: list[bool | None]
           ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """True vs (approximated) false consistency; see the module docstring."""
    true = sum(p.in_anno for p in pair_set.pairs)
    false = sum(1 for p, v in zip(pair_set.pairs, reference_verdicts, strict=True)
                if v and not p.in_anno)
    anno_verdicts = Counter(v for p, v in zip(pair_set.pairs, reference_verdicts, strict=True)
                            if p.in_anno)
    rows = [("true-consistency", true), ("false-consistency", false), ("all", true + false)]
    frame = pd.DataFrame([{"row": r, "pairs": n, "percent": _percent(n, true + false)}
                          for r, n in rows])
    facts = {"l_all_pairs": len(pair_set.pairs),
             "l_all_consistent_by_reference": sum(1 for v in reference_verdicts if v),
             "l_all_unjudged_by_reference": sum(1 for v in reference_verdicts if v is None),
             "anno_consistent_by_reference": anno_verdicts[True],
             "anno_inconsistent_by_reference": anno_verdicts[False],
             "anno_unjudged_by_reference": anno_verdicts[None]}
    return papers.beside(frame, PAPER, "Table 1", "{row}",
                         {"pairs": "pairs", "percent": "percent"}, printed=True), facts


def reference_verdicts(testset: TestSet, pair_set: chains.PairSet, model_dir: str | Path,
                       stemmer: ltcr.Stemmer) -> tuple[dict[str, Any], list[bool | None]]:
    """The reference scored as a hypothesis (the calibration) and its per-pair verdicts."""
    references = testset.reference_sentences()
    alignments = ltcr.align(model_dir, testset.source_sentences(), references)
    record, verdicts, _ = chains.score_testset(testset, references, alignments, stemmer,
                                               pairs=pair_set)
    return record, verdicts


def calibration_note(record: dict[str, Any]) -> str:
    """The reference scored as a hypothesis: its L-Anno should be near 100; how far below it
    lands measures the aligner's noise."""
    def share(name: str) -> str:
        value, interval = record[name], record["intervals"][name]
        if value is None:
            return "—"
        low, high = (f"{100 * x:.1f}" for x in interval) if interval else ("?", "?")
        return f"{100 * value:.1f}% [{low}, {high}]"

    return (f"Calibration: the reference scored as a hypothesis reaches L-Anno "
            f"{share('l_anno')} ({record['judged_anno']} of {record['pairs_anno']} pairs "
            f"judged) and L-All {share('l_all')} ({record['judged_all']} of "
            f"{record['pairs_all']} judged); {_bootstrap_note(record)}. The distance of "
            "L-Anno from 100 measures the aligner's noise.")


def _bootstrap_note(record: dict[str, Any]) -> str:
    """How the record's intervals were drawn, read from it: level, unit, resamples, seed and
    the number of documents resampled."""
    found = record["intervals"]
    unit = found.get("unit") or "document"
    return (f"intervals: {ltcr.bootstrap_text(found, record.get('documents'))}; the reference "
            f"is one fixed text, so they cover the test {unit}s only")


def _tables_command(args: argparse.Namespace) -> int:
    testset = read_testset(args.testset)
    pair_set = chains.build_pairs(testset)
    stemmer = ltcr.make_stemmer(args.stemmer)
    with tempfile.TemporaryDirectory(prefix="lexcons-align-") as scratch:
        model_dir = args.align_model
        if model_dir is None:
            chains.train_testset_aligner(testset, scratch)
            model_dir = scratch
        calibration, verdicts = reference_verdicts(testset, pair_set, model_dir, stemmer)
    prefix = args.table_prefix
    tagging = chains.tagging_record(pair_set)
    t1, facts = table1(pair_set, verdicts)
    write_table(t1, f"{prefix}1.md", f"{prefix}1.csv",
                "Table 1: true- and false-consistency pairs", [
                    calibration_note(calibration),
                    "True consistency: pairs inside the released chains (exact).",
                    "False consistency (not released) approximated: L-All pairs outside the "
                    "chains whose reference translations are consistent through alignment "
                    f"({stemmer.description}); {facts['l_all_unjudged_by_reference']} of "
                    f"{facts['l_all_pairs']} L-All pairs could not be judged.",
                    papers.comparability(PAPER, "Table 1", {
                        "false consistency": "approximated by alignment, not annotated"})])
    write_table(table2(pair_set), f"{prefix}2.md", f"{prefix}2.csv",
                "Table 2: true-consistency pairs by word class", [
                    f"Classes from {tagging['tagger']} mapped by {tagging['class_table']}; "
                    f"conflicting projections {tagging['conflicting_projections']} of "
                    f"{tagging['tokens']} tokens.",
                    papers.comparability(PAPER, "Table 2", {
                        "tagger": "jieba posseg instead of the paper's CTB-style parser"})])
    write_table(table3(testset), f"{prefix}3.md", f"{prefix}3.csv",
                "Table 3: true-consistency pairs by sentence distance",
                [papers.comparability(PAPER, "Table 3")])
    write_json(args.stats, {
        "documents": len(testset.documents), "sentences": testset.sentences,
        "chains": sum(len(d.chains or ()) for d in testset.documents),
        "table1": facts, "tagging": tagging,
        "reference_calibration": {k: calibration[k] for k in (
            "l_all", "l_anno", "pairs_all", "pairs_anno", "judged_all", "judged_anno",
            "consistent_all", "consistent_anno", "intervals", "curve", "by_distance",
            "stemmer")}})
    return 0


def register_cli(tree) -> None:
    """Add ``phenomt lexcons tables``."""
    p = tree.add("lexcons tables", "Tables 1–3 of the lexical-consistency test set with the "
                                   "paper's numbers, and the reference calibration of LTCR",
                 _tables_command)
    p.add_argument("--testset", required=True)
    p.add_argument("--align-model", help="trained aligner (`phenomt lexcons align-train`); "
                                         "default: train one on the test set")
    p.add_argument("--stemmer", choices=ltcr.STEMMERS, default=ltcr.DEFAULT_STEMMER)
    p.add_argument("--table-prefix", required=True,
                   help="writes PREFIX1.md/.csv ... PREFIX3.md/.csv (Tables 1-3)")
    p.add_argument("--stats", required=True,
                   help="JSON: counts, tagging and the reference calibration")
