"""Write a document-level corpus into the released test-set layout, so that LTCR scores it
with the same code: ``zh2en_raw/test-N.txt`` (the plain lines), ``zh2en_token/test-N.txt``
(Chinese segmented with jieba, English tokenized with sacremoses, as
:func:`phenomt.core.text.tokenize` does) and ``docids.txt`` (N and the corpus's own document
id). There is no ``res`` layer: such a set is scored on L-All only.

Documents are given by a document-id file (one id per line, a document = a run of equal
ids; an id may not come back after another one) or by sentences per document (Doc2Doc's
``doc.n_sent``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from phenomt.core.cliargs import positive_int
from phenomt.core.io import InputError, atomic_directory, read_lines, write_lines
from phenomt.core.layout import copy_documents
from phenomt.core.text import tokenize
from phenomt.lexcons.testset import RAW_DIR, SEPARATOR, TOKEN_DIR


def documents_from_ids(path: str | Path, lines: int) -> list[tuple[str, int, int]]:
    """(id, first line, end line) of each document of a document-id file."""
    ids = read_lines(path)
    if len(ids) != lines:
        raise InputError(path, f"has {len(ids)} ids for {lines} lines",
                         min(len(ids), lines) + 1)
    return documents_from_id_list(path, ids)


def documents_from_id_list(path: str | Path, ids: list[str]) -> list[tuple[str, int, int]]:
    """(id, first line, end line) of each document of the ids read from ``path``; the lines
    of a document must be together."""
    documents: list[tuple[str, int, int]] = []
    seen: set[str] = set()
    for number, doc_id in enumerate(ids, start=1):
        doc_id = doc_id.strip()
        if not doc_id:
            raise InputError(path, "empty document id", number)
        if documents and documents[-1][0] == doc_id:
            documents[-1] = (doc_id, documents[-1][1], number)
            continue
        if doc_id in seen:
            raise InputError(path, f"document {doc_id!r} continues after another document",
                             number)
        seen.add(doc_id)
        documents.append((doc_id, number - 1, number))
    return documents


def documents_from_counts(path: str | Path, lines: int) -> list[tuple[str, int, int]]:
    """(ordinal id, first line, end line) from a file of sentences per document."""
    documents, start = [], 0
    for number, text in enumerate(read_lines(path), start=1):
        if not text.strip().isdigit() or int(text) == 0:
            raise InputError(path, f"{text!r} is not a positive sentence count", number)
        documents.append((str(number - 1), start, start + int(text)))
        start += int(text)
    if start != lines:
        raise InputError(path, f"counts add up to {start} lines, the corpus has {lines}")
    return documents


def _check_text(path: str | Path, lines: Sequence[str]) -> None:
    for number, line in enumerate(lines, start=1):
        if SEPARATOR.strip() in line:
            raise InputError(path, "contains '|||', the layout's separator", number)


def convert(source: str | Path, reference: str | Path, outdir: str | Path,
            docids: str | Path | None = None, n_sent: str | Path | None = None) -> int:
    """Write the layout under ``outdir``; returns the number of documents."""
    if (docids is None) == (n_sent is None):
        raise ValueError("give exactly one of docids and n_sent")
    src, ref = read_lines(source), read_lines(reference)
    if len(src) != len(ref):
        raise InputError(reference, f"has {len(ref)} lines but {source} has {len(src)}",
                         min(len(src), len(ref)) + 1)
    _check_text(source, src)
    _check_text(reference, ref)
    documents = (documents_from_ids(docids, len(src)) if docids is not None
                 else documents_from_counts(n_sent, len(src)))
    # the folder is replaced whole: no half-written set, no stale documents of an earlier one
    with atomic_directory(outdir) as out:
        for n, (_, start, end) in enumerate(documents, start=1):
            pairs = list(zip(src[start:end], ref[start:end], strict=True))
            write_lines(out / RAW_DIR / f"test-{n}.txt",
                        [f"{s.strip()}{SEPARATOR}{r.strip()}" for s, r in pairs])
            write_lines(out / TOKEN_DIR / f"test-{n}.txt",
                        [f"{tokenize(s, 'zh')}{SEPARATOR}{tokenize(r, 'en')}" for s, r in pairs])
        write_lines(out / "docids.txt", [f"test-{n}\t{doc_id}" for n, (doc_id, _, _)
                                         in enumerate(documents, start=1)])
    return len(documents)


def _command(args: argparse.Namespace) -> int:
    if (args.docids is None) == (args.n_sent is None):
        args.convert_parser.error("give exactly one of --docids and --n-sent")
    convert(args.src, args.ref, args.output, args.docids, args.n_sent)
    return 0


def _subset_command(args: argparse.Namespace) -> int:
    n = copy_documents(args.testset, args.output, args.documents, args.document_step)
    print(f"{args.output}: {n} documents")
    return 0


def register_cli(tree) -> None:
    """Add ``phenomt lexcons convert`` and ``phenomt lexcons subset``."""
    p = tree.add("lexcons convert", "Write a document-level Zh-En corpus in the released "
                                    "test-set layout (no res layer)", _command)
    # the parser travels with the arguments: a closure over ``p`` would see the next command's
    p.set_defaults(convert_parser=p)
    p.add_argument("--src", required=True, help="Chinese sentences, one a line, untokenized")
    p.add_argument("--ref", required=True, help="English references, line-parallel")
    p.add_argument("--docids", help="one document id a line, line-parallel")
    p.add_argument("--n-sent", help="sentences per document, one count a line")
    p.add_argument("--output", required=True, help="the folder to write")
    p = tree.add("lexcons subset", "Copy the first documents of a test-set folder (every "
                                   "layer), or all of them", _subset_command)
    p.add_argument("--testset", required=True)
    p.add_argument("--documents", type=positive_int, help="how many (default: all)")
    p.add_argument("--document-step", type=positive_int,
                   help="every N-th document, the first included, before --documents")
    p.add_argument("--output", required=True)
