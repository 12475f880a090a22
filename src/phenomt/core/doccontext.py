"""Inter-sentence context for document-level translation: context files and concatenation.

Every line of a corpus carries a document id (one id a line in a separate file; the lines of
a document are consecutive). Two preparations use the previous ``size`` sentences of the same
document:

* the **context side** of the Doc-Transformer (``--task translation_doc``): line i holds the
  previous source sentences joined by a space (or by a separator token), empty at a
  document start;
* the **concatenation baseline**: line i is ``prev2 <brk> prev1 <brk> current`` for source and
  target alike; of a translation only the part after the last separator is kept.

Apply both to the lines the model reads (after tokenization and BPE): the separator is then a
single vocabulary token that BPE never splits, and the context shares the source vocabulary.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass

from phenomt.core.cliargs import positive_int
from phenomt.core.io import InputError, read_lines, write_lines

DEFAULT_SIZE = 2
DEFAULT_SEPARATOR = "<brk>"
NO_DOCUMENT = "-"

PathLike = str | os.PathLike[str]


def check_separator(separator: str) -> str:
    """``separator`` if it is one non-empty token without whitespace, else ``ValueError``."""
    if not separator or separator.split() != [separator]:
        raise ValueError(f"the separator must be a single token without spaces, got "
                         f"{separator!r}")
    return separator


def _check_size(size: int) -> int:
    if size < 1:
        raise ValueError(f"the context size must be at least 1 sentence, got {size}")
    return size


def document_positions(doc_ids: Sequence[str], source: PathLike = "<docids>") -> list[int]:
    """0-based index of every line inside its document.

    A document's lines must be consecutive: an id that reappears after another document, or
    an empty id, is an :class:`InputError` naming ``source`` and the 1-based line.
    """
    positions: list[int] = []
    finished: set[str] = set()
    previous: str | None = None
    for number, doc in enumerate(doc_ids, start=1):
        if not doc.strip():
            raise InputError(source, "empty document id", number)
        if doc == previous:
            positions.append(positions[-1] + 1)
            continue
        if doc in finished:
            raise InputError(source, f"document {doc!r} resumes after another document; "
                             "the lines of a document must be consecutive", number)
        if previous is not None:
            finished.add(previous)
        previous = doc
        positions.append(0)
    return positions


def context_counts(doc_ids: Sequence[str], size: int = DEFAULT_SIZE,
                   source: PathLike = "<docids>") -> list[int]:
    """How many previous sentences (at most ``size``) each line has in its document."""
    _check_size(size)
    return [min(position, size) for position in document_positions(doc_ids, source)]


def _check_lengths(lines: Sequence[str], doc_ids: Sequence[str], source: PathLike,
                   docids_source: PathLike) -> None:
    if len(lines) != len(doc_ids):
        longer = source if len(lines) > len(doc_ids) else docids_source
        raise InputError(longer, f"{len(lines)} lines in {source} but {len(doc_ids)} "
                         f"document ids in {docids_source}", min(len(lines), len(doc_ids)) + 1)


def _reject_separator(lines: Sequence[str], separator: str, source: PathLike) -> None:
    """A separator already inside a sentence would cut the wrong translation apart later."""
    for number, line in enumerate(lines, start=1):
        if separator in line.split():
            raise InputError(source, f"the line already contains the separator {separator!r}",
                             number)


def context_lines(lines: Sequence[str], doc_ids: Sequence[str], size: int = DEFAULT_SIZE,
                  separator: str | None = None, source: PathLike = "<lines>",
                  docids_source: PathLike = "<docids>") -> list[str]:
    """The context side: the previous ``size`` sentences of the same document, joined.

    Sentences are joined by a space, or by `` separator `` when given; empty previous
    sentences are skipped, and a document's first line gets an empty context.
    """
    _check_lengths(lines, doc_ids, source, docids_source)
    joiner = " " if separator is None else f" {check_separator(separator)} "
    if separator is not None:
        _reject_separator(lines, separator, source)
    counts = context_counts(doc_ids, size, docids_source)
    result = []
    for index, count in enumerate(counts):
        previous = (" ".join(s.split()) for s in lines[index - count:index])
        result.append(joiner.join(s for s in previous if s))
    return result


def concat_lines(lines: Sequence[str], doc_ids: Sequence[str], size: int = DEFAULT_SIZE,
                 separator: str = DEFAULT_SEPARATOR, source: PathLike = "<lines>",
                 docids_source: PathLike = "<docids>") -> list[str]:
    """The concatenation baseline's lines: up to ``size`` previous sentences, the separator
    after each, then the current sentence (``a <brk> b <brk> c``).

    Every previous sentence keeps its separator even when it is empty, so a line always
    holds as many separators as it has previous sentences (see :func:`context_counts`).
    """
    check_separator(separator)
    _check_lengths(lines, doc_ids, source, docids_source)
    _reject_separator(lines, separator, source)
    counts = context_counts(doc_ids, size, docids_source)
    result = []
    for index, count in enumerate(counts):
        tokens: list[str] = []
        for sentence in lines[index - count:index]:
            tokens.extend(sentence.split())
            tokens.append(separator)
        tokens.extend(lines[index].split())
        result.append(" ".join(tokens))
    return result


def current_sentence(line: str, separator: str = DEFAULT_SEPARATOR) -> str:
    """The translation of the current sentence: the tokens after the last separator
    (the whole line when it has none)."""
    tokens = line.split()
    last = max((i for i, token in enumerate(tokens) if token == separator), default=-1)
    return " ".join(tokens[last + 1:])


@dataclass(frozen=True)
class SplitResult:
    """Kept current-sentence translations and the 1-based lines whose separator count
    differs from the number of previous sentences in the input."""

    lines: list[str]
    mismatched: list[int]


def split_concat_lines(lines: Sequence[str], separator: str = DEFAULT_SEPARATOR,
                       expected: Sequence[int] | None = None,
                       source: PathLike = "<lines>") -> SplitResult:
    """Keep only each line's current-sentence translation (:func:`current_sentence`).

    With ``expected`` (separators per line, from :func:`context_counts`), lines where the
    model emitted another number of separators are listed; they are still cut at the last
    separator, the usual choice for concatenation models.
    """
    check_separator(separator)
    if expected is not None and len(expected) != len(lines):
        raise InputError(source, f"{len(lines)} lines but {len(expected)} expected "
                         "separator counts", min(len(lines), len(expected)) + 1)
    kept, mismatched = [], []
    for number, line in enumerate(lines, start=1):
        kept.append(current_sentence(line, separator))
        if expected is not None and line.split().count(separator) != expected[number - 1]:
            mismatched.append(number)
    return SplitResult(kept, mismatched)


def select_documents(columns: Sequence[Sequence[str]], doc_ids: Sequence[str],
                     source: PathLike = "<docids>",
                     column_sources: Sequence[PathLike] | None = None
                     ) -> tuple[list[list[str]], list[str]]:
    """The lines (of every column) that belong to a document: ids other than ``-``, which
    marks lines of a corpus without documents in an assembled training set.
    ``column_sources`` name the columns' files in errors."""
    names = column_sources or ["<lines>"] * len(columns)
    for column, name in zip(columns, names, strict=True):
        _check_lengths(column, doc_ids, name, source)
    keep = [i for i, doc in enumerate(doc_ids) if doc != NO_DOCUMENT]
    return [[column[i] for i in keep] for column in columns], [doc_ids[i] for i in keep]


# --- command line -------------------------------------------------------------------------

def _context_command(args: argparse.Namespace) -> int:
    lines = context_lines(read_lines(args.source), read_lines(args.docids), args.size,
                          args.separator, args.source, args.docids)
    write_lines(args.output, lines)
    empty = sum(1 for line in lines if not line)
    print(f"{args.output}: {len(lines)} lines, {empty} without context (document starts)")
    return 0


def _concat_command(args: argparse.Namespace) -> int:
    lines = concat_lines(read_lines(args.input), read_lines(args.docids), args.size,
                         args.separator, args.input, args.docids)
    write_lines(args.output, lines)
    print(f"{args.output}: {len(lines)} lines")
    return 0


def _split_command(args: argparse.Namespace) -> int:
    expected = None
    if args.docids is not None:
        expected = context_counts(read_lines(args.docids), args.size, args.docids)
    result = split_concat_lines(read_lines(args.input), args.separator, expected,
                                args.input)
    write_lines(args.output, result.lines)
    print(f"{args.output}: {len(result.lines)} lines")
    if expected is not None:
        print(f"{len(result.mismatched)} lines with another number of separators than "
              "previous sentences; cut at the last separator")
    return 0


def _select_command(args: argparse.Namespace) -> int:
    if len(args.inputs) != len(args.outputs):
        raise SystemExit("doc select: give as many --outputs as --inputs")
    columns, ids = select_documents([read_lines(p) for p in args.inputs],
                                    read_lines(args.docids), args.docids, args.inputs)
    for path, column in zip(args.outputs, columns, strict=True):
        write_lines(path, column)
    write_lines(args.docids_output, ids)
    print(f"{len(ids)} lines in documents")
    return 0


def _separator(text: str) -> str:
    try:
        return check_separator(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def register_cli(tree) -> None:
    p = tree.add("doc context", "Context side: the previous sentences of each line's "
                 "document, joined (empty at a document start)", _context_command)
    p.add_argument("--source", required=True, help="source sentences, one a line")
    p.add_argument("--docids", required=True, help="one document id a line")
    p.add_argument("--output", required=True)
    p.add_argument("--size", type=positive_int, default=DEFAULT_SIZE,
                   help="previous sentences to join (default %(default)s)")
    p.add_argument("--separator", type=_separator, default=None,
                   help="token between the joined sentences (default: a space)")
    p = tree.add("doc concat", "Concatenation baseline: previous sentences and the current "
                 "one joined by a separator", _concat_command)
    p.add_argument("--input", required=True, help="source or target sentences, one a line")
    p.add_argument("--docids", required=True, help="one document id a line")
    p.add_argument("--output", required=True)
    p.add_argument("--size", type=positive_int, default=DEFAULT_SIZE,
                   help="previous sentences to prepend (default %(default)s)")
    p.add_argument("--separator", type=_separator, default=DEFAULT_SEPARATOR)
    p = tree.add("doc split-concat", "Keep the current sentence's translation of a "
                 "concatenated output (the part after the last separator)", _split_command)
    p.add_argument("--input", required=True, help="translations, one a line")
    p.add_argument("--output", required=True)
    p.add_argument("--separator", type=_separator, default=DEFAULT_SEPARATOR)
    p.add_argument("--docids", help="document ids of the input, to count lines whose "
                   "separators do not match their previous sentences")
    p.add_argument("--size", type=positive_int, default=DEFAULT_SIZE,
                   help="previous sentences the input was given (with --docids)")
    p = tree.add("doc select", "Keep the lines that belong to a document (document id other "
                 "than '-')", _select_command)
    p.add_argument("--docids", required=True, help="one document id a line ('-': none)")
    p.add_argument("--inputs", nargs="+", required=True)
    p.add_argument("--outputs", nargs="+", required=True)
    p.add_argument("--docids-output", required=True)
