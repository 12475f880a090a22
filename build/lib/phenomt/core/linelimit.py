"""The one length limit of the parse and the word alignment.

A line of the parse's or the aligner's input (tokenized text, one sentence a line) with more
than :data:`MAX_TOKENS` whitespace tokens is kept out of both: UDPipe is never called on it
(:mod:`phenomt.core.parse` writes a placeholder sentence that holds no phenomenon) and the
aligner gives it no links (:mod:`phenomt.core.align` writes an empty line). The line stays in
the test set, so BLEU and every other metric still score it, and line *k* of every parse and
alignment is still line *k* of the test set. The tables built from parses and alignments name
such lines (:func:`kept_out_note`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from phenomt.core.io import InputError, read_lines

MAX_TOKENS = 1000
"""Whitespace tokens of a tokenized line beyond which it is neither parsed nor aligned.

Why 1,000: UDPipe's parse time grows with the square of a line's length (the mirror's German
model: 2 s for 1,000 tokens, 25 s for 4,000; a 1 MB line kept a parse busy for more than 15
minutes) and sil-thot's fast_align silently leaves pairs over 1,024 tokens unaligned. The
longest real sentences of the mirror, once Moses-tokenized, have 258 tokens (the WMT test sets,
newstest2019 En) and 481 (the OPUS Books sample, De): the limit is about twice the longer, so
it never touches a real sentence, and below thot's own limit, so that one never drops a pair.
"""

#: How many line numbers a note names before it only counts the rest.
NAMED_IN_NOTE = 50


def token_count(line: str) -> int:
    """Whitespace tokens of one tokenized line (the parse's and the aligner's tokens)."""
    return len(line.split())


def over_limit(tokens: int | str | Sequence[str]) -> bool:
    """Whether a line (its text, its tokens or their count) is over :data:`MAX_TOKENS`."""
    count = tokens if isinstance(tokens, int) else (
        token_count(tokens) if isinstance(tokens, str) else len(tokens))
    return count > MAX_TOKENS


def lines_over_limit(lines: Iterable[str]) -> list[int]:
    """1-based numbers of the lines over the limit."""
    return [number for number, line in enumerate(lines, start=1) if over_limit(line)]


def kept_out(source: Sequence[str], target: Sequence[str] | None = None) -> dict:
    """Which lines of a tokenized corpus the parse (of ``source``) and the alignment (of
    ``source`` with ``target``) kept out: ``parse_and_alignment``, the lines whose source is
    over the limit, and ``alignment_only``, those whose source was parsed but whose target is
    over the limit."""
    if target is not None and len(target) != len(source):
        raise ValueError(f"{len(source)} source but {len(target)} target lines")
    parsed_out = lines_over_limit(source)
    skipped = set(parsed_out)
    aligned_out = [] if target is None else [n for n in lines_over_limit(target)
                                             if n not in skipped]
    return {"limit": MAX_TOKENS, "unit": "whitespace tokens of the tokenized line",
            "lines": len(source), "parse_and_alignment": parsed_out,
            "alignment_only": aligned_out}


def kept_out_of_files(source: str | os.PathLike[str],
                      target: str | os.PathLike[str] | None = None) -> dict:
    """:func:`kept_out` of tokenized files (an error naming them when their lengths differ)."""
    src = read_lines(source)
    tgt = None if target is None else read_lines(target)
    if tgt is not None and len(tgt) != len(src):
        raise InputError(target, f"has {len(tgt)} lines but its source {source} has "
                                 f"{len(src)}; they must be line-parallel")
    return kept_out(src, tgt)


def name_lines(numbers: Sequence[int], limit: int = NAMED_IN_NOTE) -> str:
    """``line 17`` or ``lines 17, 903``; past ``limit`` numbers, the rest counted."""
    shown = ", ".join(str(n) for n in numbers[:limit])
    more = f" and {len(numbers) - limit} more" if len(numbers) > limit else ""
    return f"line{'s' if len(numbers) > 1 else ''} {shown}{more}"


def kept_out_note(record: dict | None) -> str | None:
    """The tables' sentence on the lines a :func:`kept_out` record names; None when none
    was kept out (or nothing is known)."""
    if not record:
        return None
    limit = f"{record['limit']:,}"
    parts = []
    both, target = record["parse_and_alignment"], record["alignment_only"]
    if both:
        count = f"{len(both)} line{'s' if len(both) > 1 else ''}"
        parts.append(f"{count} over {limit} tokens ({name_lines(both)}) "
                     f"{'were' if len(both) > 1 else 'was'} kept out of parsing and alignment")
    if target:
        count = f"{len(target)} line{'s' if len(target) > 1 else ''}"
        parts.append(f"{count} whose target side is over {limit} tokens "
                     f"({name_lines(target)}) {'were' if len(target) > 1 else 'was'} kept out "
                     "of alignment (the source was parsed)")
    if not parts:
        return None
    return ("; ".join(parts) + ": such a line holds no challenge-set instance but stays in the "
            "full test set and its BLEU.")
