"""Repeated content words, their pairs, and LTCR on a test-set folder.

Per document every source word (token string) occurring at least twice forms a chain of
all its occurrences, if it is a content word: its class, the majority of its occurrences'
tagged classes (ties broken in the order NOUN, VERB, ADJ/ADV, OTHERS, FUNCTION), is not
FUNCTION. A word with an annotated chain in the document is a content word whatever the
tagger says (class: the majority of its content tags, else OTHERS), so every annotated pair
is an L-All pair. A chain of k occurrences gives k(k-1)/2 pairs; L-Anno's pairs are those
inside the annotated ``res`` chains.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phenomt.core.cliargs import confidence_level, non_negative_int, positive_int
from phenomt.core.io import InputError, read_lines, write_json, write_lines
from phenomt.core.metrics import ltcr
from phenomt.lexcons import pos
from phenomt.lexcons.testset import Document, Position, TestSet, read_testset

log = logging.getLogger(__name__)
_ORDER = (*pos.CLASSES, pos.FUNCTION)


@dataclass(frozen=True)
class WordChain:
    """All occurrences of one repeated content word in a document."""

    word: str
    positions: tuple[Position, ...]
    word_class: str
    annotated: bool
    tagger_content: bool
    """Whether the tagger alone makes it a content word."""


@dataclass
class PairSet:
    """The pairs of a test set, with what the tagger contributed to them."""

    pairs: list[ltcr.Pair]
    offsets: list[int]
    """Index of each document's first sentence among all sentences."""
    documents: int
    annotated: bool
    chains: list[list[WordChain]]
    tokens: int = 0
    conflicting_tokens: int = 0
    tag_counts: Counter = field(default_factory=Counter)
    anno_pairs_tagger_dropped: int = 0
    """Annotated pairs whose word the tagger alone would not count as a content word."""


def majority_class(classes: Sequence[str]) -> str:
    """The most frequent class; ties go to the earlier class in the paper's order."""
    counts = Counter(classes)
    return max(_ORDER, key=lambda c: (counts[c], -_ORDER.index(c)))


def word_chains(document: Document, tags: Sequence[Sequence[pos.TaggedToken]]
                ) -> list[WordChain]:
    """Chains of the repeated content words of one document, in order of first occurrence."""
    occurrences: dict[str, list[Position]] = {}
    for s, sentence in enumerate(document.source):
        for t, token in enumerate(sentence):
            occurrences.setdefault(token, []).append((s, t))
    annotated = {c.word for c in document.chains or ()}
    chains = []
    for word, positions in occurrences.items():
        if len(positions) < 2:
            continue
        classes = [tags[s][t].word_class for s, t in positions]
        word_class = majority_class(classes)
        tagger_content = word_class != pos.FUNCTION
        if not tagger_content and word in annotated:
            content = [c for c in classes if c != pos.FUNCTION]
            word_class = majority_class(content) if content else "OTHERS"
        if word_class != pos.FUNCTION:
            chains.append(WordChain(word, tuple(positions), word_class, word in annotated,
                                    tagger_content))
    return chains


def annotated_pairs(document: Document) -> Counter:
    """(first, second) → number of annotated chains containing the pair."""
    pairs: Counter = Counter()
    for chain in document.chains or ():
        for a, b in itertools.combinations(sorted(chain.positions), 2):
            pairs[(a, b)] += 1
    return pairs


def build_pairs(testset: TestSet, classes: dict[str, str] | None = None) -> PairSet:
    """Tag every document and list its L-All pairs, marking those inside annotated chains."""
    classes = classes or pos.read_class_table()
    result = PairSet([], [], len(testset.documents), testset.annotated, [])
    offset = 0
    for number, document in enumerate(testset.documents):
        result.offsets.append(offset)
        offset += document.sentences
        tags = pos.tag_document(document.source, classes)
        for sentence in tags:
            result.tokens += len(sentence)
            result.conflicting_tokens += sum(t.conflicting for t in sentence)
            result.tag_counts.update(t.tag for t in sentence)
        chains = word_chains(document, tags)
        result.chains.append(chains)
        anno = annotated_pairs(document)
        if any(n > 1 for n in anno.values()):
            raise InputError(testset.root / "res" / f"{document.name}.txt",
                             "two chains share a pair of positions")
        for chain in chains:
            for a, b in itertools.combinations(sorted(chain.positions), 2):
                in_anno = (a, b) in anno
                result.pairs.append(ltcr.Pair(number, a, b, chain.word_class, True, in_anno))
                if in_anno and not chain.tagger_content:
                    result.anno_pairs_tagger_dropped += 1
    return result


def tagging_record(pairs: PairSet) -> dict[str, Any]:
    """What the tagger did, for the output and the table notes."""
    return {"tagger": pos.tagger_name(),
            "class_table": str(pos.TABLE.name),
            "tokens": pairs.tokens,
            "conflicting_projections": pairs.conflicting_tokens,
            "conflicting_rate": (pairs.conflicting_tokens / pairs.tokens if pairs.tokens
                                 else None),
            "anno_pairs_not_content_by_tagger": pairs.anno_pairs_tagger_dropped}


# --------------------------------------------------------------------------------------------
# Scoring a hypothesis


def read_hypothesis(path: str | Path, testset: TestSet) -> list[str]:
    """Hypothesis lines, one per source sentence of the test set."""
    lines = read_lines(path)
    if len(lines) != testset.sentences:
        raise InputError(path, f"has {len(lines)} lines but the test set {testset.root} has "
                               f"{testset.sentences} sentences", min(len(lines),
                                                                     testset.sentences) + 1)
    return lines


def train_testset_aligner(testset: TestSet, model_dir: str | Path,
                          hypotheses: Sequence[Sequence[str]] = (),
                          extra_files: Sequence[tuple[str, str]] = (),
                          iterations: int | None = None) -> dict[str, Any]:
    """fast_align models for one test set: its source with its reference, the hypothesis if
    given, then any extra tokenized parallel files."""
    sources = testset.source_sentences()
    corpora = [(sources, testset.reference_sentences())]
    if hypotheses:
        corpora.append((sources, list(hypotheses)))
    return ltcr.train_aligner(model_dir, corpora, extra_files, iterations)


def score_testset(testset: TestSet, hypotheses: Sequence[Sequence[str]],
                  alignments: Sequence[ltcr.Points], stemmer: ltcr.Stemmer,
                  pairs: PairSet | None = None, samples: int = ltcr.DEFAULT_SAMPLES,
                  seed: int = ltcr.DEFAULT_SEED, level: float = ltcr.DEFAULT_LEVEL
                  ) -> tuple[dict[str, Any], list[bool | None], PairSet]:
    """LTCR record, per-pair verdicts and the pairs of an aligned tokenized hypothesis."""
    pairs = pairs or build_pairs(testset)
    function_words = ltcr.load_function_words()
    verdicts = ltcr.judge_hypothesis(pairs.pairs, pairs.offsets, hypotheses, alignments,
                                     stemmer, function_words)
    record = ltcr.summarise(pairs.pairs, verdicts, pairs.documents, pos.CLASSES,
                            samples, seed, level)
    if not testset.annotated:
        record["l_anno"] = None
    record.update({"documents": pairs.documents, "sentences": testset.sentences,
                   "annotated": testset.annotated, "stemmer": stemmer.description,
                   "tagging": tagging_record(pairs)})
    return record, verdicts, pairs


def _pairs_of_extra(args: argparse.Namespace, parser: argparse.ArgumentParser
                    ) -> list[tuple[str, str]]:
    if len(args.extra_src) != len(args.extra_tgt):
        parser.error("--extra-src and --extra-tgt need the same number of files")
    return list(zip(args.extra_src, args.extra_tgt, strict=True))


def _score_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    given = [option for option, value in (("--alignment", args.alignment),
                                          ("--align-model", args.align_model)) if value]
    if given and (args.extra_src or args.extra_tgt):
        # the extra data only trains this run's aligner, which a given one replaces
        parser.error(f"--extra-src/--extra-tgt cannot be combined with {given[0]}: they "
                     "train the aligner, and none is trained here")
    testset = read_testset(args.testset)
    lines = read_hypothesis(args.hyp, testset)
    settings: dict[str, Any] = {"testset": str(args.testset), "hyp": str(args.hyp)}
    if args.alignment:
        if args.align_model:
            parser.error("--alignment and --align-model exclude each other")
        hypotheses = [line.split() for line in lines]
        alignments = ltcr.read_alignment(args.alignment, testset.source_sentences(),
                                         hypotheses)
        settings.update({"alignment": str(args.alignment), "hyp_tokenization": "whitespace"})
    else:
        hypotheses = ltcr.tokenize_hypotheses(lines)
        settings["hyp_tokenization"] = "sacremoses (en, aggressive dash splits)"
        with tempfile.TemporaryDirectory(prefix="ltcr-align-") as scratch:
            model_dir = args.align_model
            if model_dir is None:
                extra = _pairs_of_extra(args, parser)
                train_testset_aligner(testset, scratch, hypotheses, extra)
                model_dir = scratch
                settings["aligner_trained_on"] = ["testset source-reference",
                                                  "testset source-hypothesis",
                                                  *[f"{s} / {t}" for s, t in extra]]
            else:
                settings["align_model"] = str(model_dir)
            alignments = ltcr.align(model_dir, testset.source_sentences(), hypotheses,
                                    jobs=args.jobs)
        settings["aligner"] = "sil-thot fast_align, lower-cased, grow-diag-final-and"
    if args.save_alignment:
        write_lines(args.save_alignment, ltcr.pharaoh_lines(alignments))
    stemmer = ltcr.make_stemmer(args.stemmer)
    record, _, _ = score_testset(testset, hypotheses, alignments, stemmer,
                                 samples=args.samples, seed=args.seed, level=args.level)
    settings["function_words"] = (f"{ltcr.FUNCTION_WORDS_FILE.name} "
                                  f"({len(ltcr.load_function_words())} words)")
    record["settings"] = settings
    write_json(args.output, record)
    return 0


def _pairs_command(args: argparse.Namespace) -> int:
    testset = read_testset(args.testset)
    pairs = build_pairs(testset)
    write_json(args.output, ltcr.pair_record(
        testset.root.name, pairs.pairs, pairs.offsets,
        [d.sentences for d in testset.documents], testset.source_sentences(),
        testset.annotated))
    print(f"{args.testset}: {len(pairs.pairs)} pairs in {pairs.documents} documents "
          f"-> {args.output}")
    return 0


def _align_train_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    testsets = [read_testset(path) for path in args.testset]
    ltcr.train_aligner(args.model_dir,
                       [(t.source_sentences(), t.reference_sentences()) for t in testsets],
                       _pairs_of_extra(args, parser), args.iterations)
    return 0


def _add_extra(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--extra-src", nargs="+", action="extend", default=[], metavar="FILE",
                        help="extra tokenized Chinese training files for the aligner")
    parser.add_argument("--extra-tgt", nargs="+", action="extend", default=[], metavar="FILE",
                        help="extra tokenized English files, in the order of --extra-src")


def register_cli(tree) -> None:
    """Add ``phenomt score ltcr`` and ``phenomt lexcons align-train``."""
    def score_handler(args: argparse.Namespace) -> int:
        return _score_command(args, score)

    def train_handler(args: argparse.Namespace) -> int:
        return _align_train_command(args, train)

    score = tree.add("score ltcr", "Lexical translation consistency ratio (L-All, L-Anno) of a "
                                   "hypothesis on a test set in the released layout",
                     score_handler)
    score.add_argument("--testset", required=True, help="folder with zh2en_token/ (and res/)")
    score.add_argument("--hyp", required=True,
                       help="one hypothesis a line, documents test-1 … test-n in order")
    score.add_argument("--alignment", help="Pharaoh i-j alignment of the zh2en_token source "
                                           "to the whitespace tokens of HYP (no aligner run)")
    score.add_argument("--align-model", help="trained aligner directory (`phenomt lexcons "
                                             "align-train`); default: train one for this run")
    _add_extra(score)
    score.add_argument("--save-alignment", help="also write the alignment used here")
    score.add_argument("--stemmer", choices=ltcr.STEMMERS, default=ltcr.DEFAULT_STEMMER)
    score.add_argument("--samples", type=positive_int, default=ltcr.DEFAULT_SAMPLES,
                       help="bootstrap samples (resamples of the documents)")
    score.add_argument("--seed", type=non_negative_int, default=ltcr.DEFAULT_SEED)
    score.add_argument("--level", type=confidence_level, default=ltcr.DEFAULT_LEVEL,
                       help="confidence level of the intervals, in (0, 1)")
    score.add_argument("--jobs", type=positive_int, default=1, help="aligner processes")
    score.add_argument("--output", required=True, help="JSON file to write")

    pairs = tree.add("lexcons pairs", "The pairs of repeated source content words of a test "
                                      "set in the released layout, for the registered metric "
                                      "ltcr (setting ltcr.pairs)", _pairs_command)
    pairs.add_argument("--testset", required=True, help="folder with zh2en_token/ (and res/)")
    pairs.add_argument("--output", required=True, help="JSON file to write")

    train = tree.add("lexcons align-train", "Train an aligner once (the source and reference "
                                            "of one or more test sets, plus extra data), for "
                                            "`score ltcr --align-model`", train_handler)
    train.add_argument("--testset", required=True, nargs="+", action="extend",
                       help="test set folders in the released layout")
    train.add_argument("--model-dir", required=True)
    _add_extra(train)
    train.add_argument("--iterations", type=int, default=None,
                       help="EM iterations per model (default: the aligner's)")
