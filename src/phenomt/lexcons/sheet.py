"""Annotation sheets for true consistency (paper Section 2.2 and Appendix A).

A sheet is a TSV with one row per occurrence of a chain: a repeated source word whose
occurrences share one reference translation. The annotator writes in ``label`` 1 when the
occurrence must keep the chain's translation, 0 when it could be translated differently
without changing the meaning or hurting cohesion. A pair of occurrences is *consistent*
(true consistency) when both are labelled 1, following the paper's procedure: an item that
may differ makes all its pairs acceptable to translate inconsistently.

Chains come from the ``res`` layer (to re-annotate released chains) or, for a corpus without
annotation, from the repeated content words whose reference translations are equal through
word alignment (the candidates an annotator judges).

The inter-annotator agreement is the F1 of Appendix A over the pairs both sheets contain on
their overlapping documents, annotator A taken as the reference: TP = pairs both mark
consistent, FP = pairs only B marks consistent, FN = pairs only A marks consistent. F1 is
symmetric in A and B.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phenomt.core.io import (
    InputError,
    atomic_directory,
    atomic_write,
    iter_lines,
    write_json,
    write_lines,
)
from phenomt.core.metrics import ltcr
from phenomt.lexcons import chains
from phenomt.lexcons.testset import CHAIN_DIR, Document, Position, TestSet, read_testset

COLUMNS = ("document", "chain", "word", "sentence", "token", "translation", "context",
           "reference", "label")


@dataclass(frozen=True)
class SheetChain:
    """A chain offered for annotation."""

    document: str
    word: str
    positions: tuple[Position, ...]
    translation: str


@dataclass(frozen=True)
class Row:
    """One labelled occurrence read back from a sheet."""

    document: str
    chain: int
    word: str
    position: Position
    translation: str
    label: bool
    line: int | None = field(default=None, compare=False)
    """Its line in the sheet, for errors."""


def released_chains(testset: TestSet) -> list[SheetChain]:
    """The ``res`` chains of a test set, as annotation candidates."""
    return [SheetChain(d.name, c.word, c.positions, c.translation)
            for d in testset.documents for c in d.chains or ()]


def candidate_chains(testset: TestSet, pair_set: chains.PairSet,
                     alignments: Sequence[ltcr.Points], stemmer: ltcr.Stemmer
                     ) -> list[SheetChain]:
    """Repeated content words grouped by equal (normalised) reference translations."""
    function_words = ltcr.load_function_words()
    references = testset.reference_sentences()
    found = []
    for number, (document, word_chains) in enumerate(zip(testset.documents, pair_set.chains,
                                                         strict=True)):
        positions = [(number, p) for chain in word_chains for p in chain.positions]
        translations = ltcr.occurrence_translations(positions, pair_set.offsets, references,
                                                    alignments, stemmer, function_words)
        for chain in word_chains:
            groups: dict[tuple[str, ...], list[Position]] = {}
            for p in chain.positions:
                key = translations[(number, p)]
                if key:
                    groups.setdefault(key, []).append(p)
            for key, members in sorted(groups.items(), key=lambda kv: kv[1][0]):
                if len(members) > 1:
                    found.append(SheetChain(document.name, chain.word, tuple(members),
                                            " ".join(key)))
    return found


def _context(document: Document, position: Position) -> str:
    sentence, token = position
    words = list(document.source[sentence])
    words[token] = f"【{words[token]}】"
    return " ".join(words)


def write_sheet(path: str | Path, testset: TestSet, sheet_chains: Sequence[SheetChain]) -> int:
    """Write the chains in context with an empty ``label`` column; returns the row count."""
    documents = {d.name: d for d in testset.documents}
    rows = 0
    with atomic_write(path) as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(COLUMNS)
        numbers: dict[str, int] = {}
        for chain in sheet_chains:
            number = numbers.get(chain.document, 0) + 1
            numbers[chain.document] = number
            document = documents[chain.document]
            for position in chain.positions:
                writer.writerow([chain.document, number, chain.word, position[0], position[1],
                                 chain.translation, _context(document, position),
                                 " ".join(document.reference[position[0]]), ""])
                rows += 1
    return rows


def read_sheet(path: str | Path) -> list[Row]:
    """A labelled sheet; every row needs the label 0 or 1."""
    lines = list(iter_lines(path))
    reader = csv.reader(lines, delimiter="\t")
    header = next(reader, None)
    if header is None or tuple(header[:len(COLUMNS)]) != COLUMNS:
        raise InputError(path, f"header must be {' '.join(COLUMNS)}", 1)
    rows = []
    for number, fields in enumerate(reader, start=2):
        if not fields:
            continue
        if len(fields) < len(COLUMNS):
            raise InputError(path, f"expected {len(COLUMNS)} columns, got {len(fields)}", number)
        record = dict(zip(COLUMNS, fields, strict=False))
        if record["label"].strip() not in ("0", "1"):
            raise InputError(path, f"label must be 0 or 1, got {record['label']!r}", number)
        try:
            position = (int(record["sentence"]), int(record["token"]))
            chain = int(record["chain"])
        except ValueError:
            raise InputError(path, "chain, sentence and token must be integers", number) from None
        rows.append(Row(record["document"], chain, record["word"], position,
                        record["translation"], record["label"].strip() == "1", number))
    return rows


PairKey = tuple[str, Position, Position]


def labelled_pairs(rows: Sequence[Row]) -> dict[PairKey, bool]:
    """Every pair inside a chain → consistent (both occurrences labelled 1) or not."""
    by_chain: dict[tuple[str, int], list[Row]] = {}
    for row in rows:
        by_chain.setdefault((row.document, row.chain), []).append(row)
    pairs: dict[PairKey, bool] = {}
    for (document, _), members in by_chain.items():
        ordered = sorted(members, key=lambda r: r.position)
        for a, b in itertools.combinations(ordered, 2):
            pairs[(document, a.position, b.position)] = a.label and b.label
    return pairs


def iaa_f1(rows_a: Sequence[Row], rows_b: Sequence[Row]) -> dict[str, Any]:
    """Appendix A's F1 between two annotators on the pairs of their shared documents."""
    shared = {r.document for r in rows_a} & {r.document for r in rows_b}
    pairs_a = {k: v for k, v in labelled_pairs(rows_a).items() if k[0] in shared}
    pairs_b = {k: v for k, v in labelled_pairs(rows_b).items() if k[0] in shared}
    common = sorted(set(pairs_a) & set(pairs_b))
    tp = sum(1 for k in common if pairs_a[k] and pairs_b[k])
    fp = sum(1 for k in common if pairs_b[k] and not pairs_a[k])
    fn = sum(1 for k in common if pairs_a[k] and not pairs_b[k])
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"documents": len(shared), "pairs": len(common),
            "pairs_only_a": len(set(pairs_a) - set(pairs_b)),
            "pairs_only_b": len(set(pairs_b) - set(pairs_a)),
            "tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": f1}


def chains_from_sheet(rows: Sequence[Row]) -> dict[str, list[list[Row]]]:
    """Document → true-consistency chains: the occurrences labelled 1 of each chain with at
    least two of them."""
    by_chain: dict[tuple[str, int], list[Row]] = {}
    for row in rows:
        if row.label:
            by_chain.setdefault((row.document, row.chain), []).append(row)
    result: dict[str, list[list[Row]]] = {}
    for (document, _), members in sorted(by_chain.items(),
                                         key=lambda kv: (kv[0][0], kv[1][0].position)):
        if len(members) > 1:
            result.setdefault(document, []).append(sorted(members, key=lambda r: r.position))
    return result


def check_rows(sheet: str | Path, testset: TestSet, rows: Sequence[Row]) -> None:
    """Every row's document, position and word against the test set (labels 0 too), as an
    :class:`InputError` naming the sheet and the row's line."""
    documents = {d.name: d for d in testset.documents}
    for row in rows:
        document = documents.get(row.document)
        if document is None:
            raise InputError(sheet, f"document {row.document!r} is not in {testset.root}",
                             row.line)
        sentence, token = row.position
        if not 0 <= sentence < document.sentences:
            raise InputError(sheet, f"{row.document} has no sentence {sentence} (it has "
                                    f"0 to {document.sentences - 1})", row.line)
        words = document.source[sentence]
        if not 0 <= token < len(words):
            raise InputError(sheet, f"sentence {sentence} of {row.document} has no token "
                                    f"{token} (it has 0 to {len(words) - 1})", row.line)
        if words[token] != row.word:
            raise InputError(sheet, f"{row.word!r} is not the token at ({sentence}, {token}) of "
                                    f"{row.document}, {words[token]!r} is", row.line)


_RES_FILE = re.compile(r"test-[0-9]+\.txt")


def write_res(outdir: str | Path, testset: TestSet, rows: Sequence[Row],
              sheet: str | Path = "sheet") -> int:
    """Write a ``res`` layer (one file per document, possibly empty) from labels; returns the
    number of chains. Every row is checked first (:func:`check_rows`, errors naming
    ``sheet``), and ``outdir`` is replaced whole: never half-written, no stale documents."""
    check_rows(sheet, testset, rows)
    target = Path(outdir).resolve()  # "." has no name to put a partial folder beside
    if target.exists():
        # replaced whole: refuse to wipe a folder that is not a res layer (a test set's root)
        other = (sorted(p.name for p in target.iterdir() if not _RES_FILE.fullmatch(p.name))
                 if target.is_dir() else None)
        if other is None or other:
            held = f"it holds {', '.join(other[:3])}" if other else "it is a file"
            raise InputError(outdir, f"is not a res layer folder ({held}) and would be replaced "
                                     "whole: give a new folder or a res folder")
    found = chains_from_sheet(rows)
    total = 0
    with atomic_directory(target) as folder:
        for document in testset.documents:
            lines = []
            for members in found.get(document.name, []):
                items = [f"{r.word}/{r.position[0]}/{r.position[1]}" for r in members]
                lines.append(repr([*items, members[0].translation]))
            write_lines(folder / f"{document.name}.txt", lines)
            total += len(lines)
    return total


# --------------------------------------------------------------------------------------------
# Command line


def _export_command(args: argparse.Namespace) -> int:
    testset = read_testset(args.testset)
    if args.documents:
        keep = set(args.documents)
        unknown = sorted(keep - {d.name for d in testset.documents})
        if unknown:  # a header-only sheet would look like a set without chains
            names = [d.name for d in testset.documents]
            shown = ", ".join(names[:5]) + (f" ... {names[-1]}" if len(names) > 5 else "")
            raise InputError(testset.root, f"has no document {', '.join(unknown)} (--documents);"
                                           f" its documents: {shown or 'none'}")
        testset = TestSet(testset.root, tuple(d for d in testset.documents if d.name in keep),
                          testset.annotated, testset.has_raw)
    if args.candidates == "released":
        if not testset.annotated:
            raise InputError(Path(testset.root) / CHAIN_DIR, "no res layer to export")
        found = released_chains(testset)
    else:
        pair_set = chains.build_pairs(testset)
        with tempfile.TemporaryDirectory(prefix="lexcons-sheet-") as scratch:
            model_dir = args.align_model
            if model_dir is None:
                chains.train_testset_aligner(testset, scratch)
                model_dir = scratch
            alignments = ltcr.align(model_dir, testset.source_sentences(),
                                    testset.reference_sentences())
        found = candidate_chains(testset, pair_set, alignments,
                                 ltcr.make_stemmer(args.stemmer))
    write_sheet(args.output, testset, found)
    return 0


def _import_command(args: argparse.Namespace) -> int:
    testset = read_testset(args.testset)
    write_res(args.outdir, testset, read_sheet(args.sheet), args.sheet)
    return 0


def _iaa_command(args: argparse.Namespace) -> int:
    result = iaa_f1(read_sheet(args.a), read_sheet(args.b))
    result.update({"a": str(args.a), "b": str(args.b)})
    write_json(args.output, result)
    return 0


def register_cli(tree) -> None:
    """Add ``phenomt lexcons sheet-export``, ``sheet-import`` and ``iaa``."""
    p = tree.add("lexcons sheet-export", "Write an annotation sheet of chains in context",
                 _export_command)
    p.add_argument("--testset", required=True)
    p.add_argument("--candidates", choices=("released", "aligned"), default="released",
                   help="the res chains, or repeated content words with equal aligned "
                        "reference translations")
    p.add_argument("--align-model", help="trained aligner for --candidates aligned")
    p.add_argument("--stemmer", choices=ltcr.STEMMERS, default=ltcr.DEFAULT_STEMMER)
    p.add_argument("--documents", nargs="+", metavar="NAME", help="only these (test-N)")
    p.add_argument("--output", required=True)

    p = tree.add("lexcons sheet-import", "Turn a labelled sheet into a res layer",
                 _import_command)
    p.add_argument("--testset", required=True)
    p.add_argument("--sheet", required=True)
    p.add_argument("--outdir", required=True, help="folder for res/test-N.txt files")

    p = tree.add("lexcons iaa", "Inter-annotator F1 of two labelled sheets (Appendix A)",
                 _iaa_command)
    p.add_argument("--a", required=True, help="sheet of annotator A")
    p.add_argument("--b", required=True, help="sheet of annotator B")
    p.add_argument("--output", required=True)
