"""TCP, the tense / conjunction / pronoun discourse test of the Doc2Doc test set (Sun et al.,
"Rethinking Document-level Neural Machine Translation").

The key (``doc.en.candidates``) has one line per document of tab-separated items
``position:alternative,alternative,…``; ``position`` is a 0-based token index into the
tokenized reference document (``doc.en.tok``). The documents are grouped in order: the
first 50 test tense, the next 46 conjunctions, the last 52 pronouns.

An item is a **hit** when one of its alternatives occurs in the hypothesis document within
a window around the position scaled to the hypothesis length: ``p = int(position ×
len(hyp) / len(ref))``, window ``hyp[max(p − 20, 0) : p + 20]`` (the released scorer's
bounds). Each category's hit rate is hits / items; TCP is the geometric mean of the three.

Matching is on tokens: a multi-word alternative must occur as a contiguous token sequence
inside the window. (The released scorer tests multi-word alternatives as a substring of the
window's text, which can also match inside longer words; token matching avoids that.)
Matching is case-sensitive, as in the released scorer.

A quick run may score a sample of whole documents (the corpus's ``document_step`` and
``documents``): ``--docids`` gives the document id of every hypothesis line, and each
category's rate is then over its sampled documents only (``documents`` in the result says
how many).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phenomt.core.cliargs import positive_int
from phenomt.core.io import InputError, read_lines, write_json

CATEGORIES = ("tense", "conjunction", "pronoun")
DEFAULT_GROUPS = (50, 46, 52)
DEFAULT_WINDOW = 20


@dataclass(frozen=True)
class Item:
    """One tested position of a reference document and its accepted alternatives."""

    position: int
    alternatives: tuple[tuple[str, ...], ...]


def parse_candidates(path: str | Path) -> list[list[Item]]:
    """The key file: one list of items per document."""
    documents = []
    for number, line in enumerate(read_lines(path), start=1):
        items = []
        for field in line.split("\t"):
            if not field.strip():
                continue
            position, sep, alternatives = field.strip().partition(":")
            if not sep or not position.isdigit():
                raise InputError(path, f"item {field!r} is not position:alternative,…", number)
            options = tuple(tuple(a.split()) for a in alternatives.split(",") if a.strip())
            if not options:
                raise InputError(path, f"item {field!r} has no alternative", number)
            items.append(Item(int(position), options))
        documents.append(items)
    return documents


def group_sentences(lines: Sequence[str], counts_path: str | Path) -> list[str]:
    """Join sentence lines into documents using a file of sentences per document."""
    counts = []
    for number, text in enumerate(read_lines(counts_path), start=1):
        if not text.strip().isdigit():
            raise InputError(counts_path, f"{text!r} is not a sentence count", number)
        counts.append(int(text))
    if sum(counts) != len(lines):
        raise InputError(counts_path, f"counts add up to {sum(counts)} sentences but the "
                                      f"hypothesis has {len(lines)}")
    documents, start = [], 0
    for count in counts:
        documents.append(" ".join(lines[start:start + count]))
        start += count
    return documents


def select_documents(lines: Sequence[str], docids_path: str | Path, counts_path: str | Path
                     ) -> tuple[list[str], list[int]]:
    """Join the lines of a sample of whole documents: ``docids_path`` gives each line's
    document id, as ``corpus docids`` writes them for the ``n_sent`` format
    (:func:`phenomt.core.corpus.read_docids`). Returns the documents and their 0-based
    numbers in the full set."""
    from phenomt.core.corpus import read_docids

    full = read_docids("n_sent", counts_path)
    order = {doc: n for n, doc in enumerate(dict.fromkeys(full))}
    sizes = [0] * len(order)
    for doc in full:
        sizes[order[doc]] += 1
    ids = read_lines(docids_path)
    if len(ids) != len(lines):
        raise InputError(docids_path, f"{len(ids)} document ids for {len(lines)} hypothesis "
                                      "lines")
    documents: list[str] = []
    selected: list[int] = []
    start = 0
    for end, doc in enumerate(ids, start=1):
        if doc not in order:
            raise InputError(docids_path, f"document {doc!r} is not in {counts_path}", end)
        if end < len(ids) and ids[end] == doc:
            continue
        number = order[doc]
        if number in selected or end - start != sizes[number]:
            raise InputError(docids_path, f"document {doc!r} is not whole: {end - start} "
                                          f"lines here, {sizes[number]} in {counts_path}", end)
        documents.append(" ".join(lines[start:end]))
        selected.append(number)
        start = end
    return documents, selected


def _contains(window: Sequence[str], phrase: Sequence[str]) -> bool:
    n = len(phrase)
    return any(tuple(window[k:k + n]) == tuple(phrase) for k in range(len(window) - n + 1))


def item_hit(hypothesis: Sequence[str], reference_length: int, item: Item, window: int) -> bool:
    """Whether an alternative of ``item`` occurs near its scaled position in the hypothesis."""
    centre = int(item.position * len(hypothesis) / reference_length)
    span = hypothesis[max(centre - window, 0):min(centre + window, len(hypothesis))]
    return any(_contains(span, alternative) for alternative in item.alternatives)


def score(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
          candidates: Sequence[Sequence[Item]], groups: Sequence[int] = DEFAULT_GROUPS,
          window: int = DEFAULT_WINDOW, selected: Sequence[int] | None = None
          ) -> dict[str, Any]:
    """Hit rates per category and their geometric mean (TCP), all as fractions.
    ``selected``: the 0-based document numbers the hypotheses translate, when they are a
    sample of the set (every document otherwise)."""
    if not len(references) == len(candidates) == sum(groups):
        raise ValueError(f"{len(references)} reference and {len(candidates)} key documents; "
                         f"the groups need {sum(groups)}")
    selected = list(range(len(references))) if selected is None else list(selected)
    if len(hypotheses) != len(selected):
        raise ValueError(f"{len(hypotheses)} hypothesis documents for {len(selected)} "
                         "selected ones")
    hypothesis_of = dict(zip(selected, hypotheses, strict=True))
    result: dict[str, Any] = {}
    start = 0
    for category, size in zip(CATEGORIES, groups, strict=True):
        hits = items = documents = 0
        for d in range(start, start + size):
            if d not in hypothesis_of:
                continue
            if not references[d]:
                raise ValueError(f"reference document {d + 1} is empty")
            documents += 1
            items += len(candidates[d])
            hits += sum(item_hit(hypothesis_of[d], len(references[d]), item, window)
                        for item in candidates[d])
        result[category] = {"hits": hits, "items": items, "rate": hits / items if items else None,
                            "documents": documents}
        start += size
    rates = [result[c]["rate"] for c in CATEGORIES]
    result["tcp"] = (None if any(r is None for r in rates)
                     else math.prod(rates) ** (1 / len(rates)))
    result["window"] = window
    result["matching"] = "token sequences, case-sensitive"
    return result


def score_files(hyp: str | Path, reference: str | Path, candidates: str | Path,
                n_sent: str | Path | None = None, tokenize: bool = False,
                groups: Sequence[int] = DEFAULT_GROUPS, window: int = DEFAULT_WINDOW,
                docids: str | Path | None = None) -> dict[str, Any]:
    """TCP of a hypothesis file: one document a line, or sentences grouped by ``n_sent``
    (every document of the set), or by ``docids`` and ``n_sent`` (a sample of whole
    documents, see :func:`select_documents`)."""
    lines = read_lines(hyp)
    selected = None
    if docids is not None:
        if n_sent is None:
            raise ValueError("docids need the set's n_sent file")
        lines, selected = select_documents(lines, docids, n_sent)
    elif n_sent is not None:
        lines = group_sentences(lines, n_sent)
    refs = read_lines(reference)
    keys = parse_candidates(candidates)
    if selected is None and len(lines) != len(refs):
        raise InputError(hyp, f"has {len(lines)} documents but {reference} has {len(refs)}")
    if len(keys) != len(refs):
        raise InputError(candidates, f"has {len(keys)} documents but {reference} has "
                                     f"{len(refs)}")
    if sum(groups) != len(keys):
        raise InputError(candidates, f"has {len(keys)} documents but --groups "
                                     f"{' '.join(map(str, groups))} add up to {sum(groups)}")
    if tokenize:
        from phenomt.core.text import tokenize as moses

        lines = [moses(line, "en") for line in lines]
    hyp_docs = [line.split() for line in lines]
    ref_docs = [line.split() for line in refs]
    for number, (doc, items) in enumerate(zip(ref_docs, keys, strict=True), start=1):
        if not doc:
            raise InputError(reference, "empty reference document", number)
        for item in items:
            if item.position >= len(doc):
                raise InputError(candidates, f"position {item.position} beyond the "
                                             f"{len(doc)} reference tokens", number)
    result = score(hyp_docs, ref_docs, keys, groups, window, selected)
    result["hyp_tokenization"] = "sacremoses (en)" if tokenize else "whitespace"
    return result


def _command(args: argparse.Namespace) -> int:
    if args.docids is not None and args.n_sent is None:
        args.tcp_parser.error("--docids needs --n-sent (the set's sentences per document)")
    result = score_files(args.hyp, args.reference, args.candidates, args.n_sent, args.tokenize,
                         tuple(args.groups), args.window, args.docids)
    result["hyp"] = str(args.hyp)
    write_json(args.output, result)
    return 0


def register_cli(tree) -> None:
    """Add ``phenomt score tcp``."""
    p = tree.add("score tcp", "Tense / conjunction / pronoun hit rates and TCP of a "
                              "hypothesis of the Doc2Doc test documents", _command)
    p.add_argument("--hyp", required=True, help="hypothesis: one document a line, or one "
                                                "sentence a line with --n-sent")
    p.add_argument("--reference", required=True, help="tokenized reference documents "
                                                      "(doc.en.tok)")
    p.add_argument("--candidates", required=True, help="the key (doc.en.candidates)")
    p.add_argument("--n-sent", help="sentences per document (doc.n_sent) for a sentence file")
    p.add_argument("--docids", help="document id of every hypothesis line (`corpus docids` of "
                                    "the n_sent file): the hypothesis is a sample of whole "
                                    "documents; needs --n-sent")
    p.add_argument("--tokenize", action="store_true",
                   help="tokenize the hypothesis with sacremoses first")
    p.add_argument("--groups", type=positive_int, nargs=3, default=list(DEFAULT_GROUPS),
                   metavar=("TENSE", "CONJ", "PRON"), help="documents per category, in order")
    p.add_argument("--window", type=positive_int, default=DEFAULT_WINDOW)
    p.add_argument("--output", required=True)
    p.set_defaults(tcp_parser=p)
