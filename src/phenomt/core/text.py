"""Text preprocessing: punctuation normalisation, tokenization, casing, detokenization.

European languages go through sacremoses (Moses punctuation normalisation and tokenization,
aggressive dash splitting, no XML escaping, since fairseq needs none). Chinese is segmented
with jieba. Casing is ``none``, ``lower`` or ``truecase`` (a Moses truecaser learnt on the
training data only).
"""

from __future__ import annotations

import argparse
import logging
import os
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from phenomt.core.io import InputError, iter_lines, write_lines

# sacremoses is imported where it is used: importing it compiles its regular expressions
# (about half a second), a cost every Snakemake start and every `phenomt` command would pay
# through the plan and the command line.
if TYPE_CHECKING:
    from sacremoses import MosesPunctNormalizer, MosesTokenizer

CASINGS = ("none", "lower", "truecase")


def is_punctuation(token: str) -> bool:
    """Whether every character of ``token`` is Unicode punctuation (categories ``P*``).

    Symbols (``$``, ``€``, ``+``: categories ``S*``) are not punctuation, since a currency
    sign translates a word; ``%`` and ``&`` are.
    """
    return bool(token) and all(unicodedata.category(ch).startswith("P") for ch in token)

_CJK = {"zh", "ja"}


@lru_cache(maxsize=8)
def _moses(lang: str) -> tuple[MosesPunctNormalizer, MosesTokenizer]:
    from sacremoses import MosesPunctNormalizer, MosesTokenizer

    return MosesPunctNormalizer(lang=lang), MosesTokenizer(lang=lang)


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def tokenize(text: str, lang: str) -> str:
    """Normalise and tokenize one sentence; tokens are separated by single spaces."""
    if lang in _CJK:
        # jieba keeps spaces as tokens; drop them so the output is space-separated tokens.
        return " ".join(t for t in _jieba().cut(text.strip()) if t.strip())
    normalizer, tokenizer = _moses(lang)
    return tokenizer.tokenize(normalizer.normalize(text), aggressive_dash_splits=True,
                              return_str=True, escape=False)


def word_tokens(lines: Sequence[str], lang: str) -> list[list[str]]:
    """The word tokens of every line (:func:`tokenize`: sacremoses; jieba for Chinese); an
    empty line has none."""
    return [tokenize(line, lang).split() if line.strip() else [] for line in lines]


def detokenize(text: str, lang: str) -> str:
    """Inverse of :func:`tokenize` as far as Moses can invert it (Chinese: spaces removed)."""
    if lang in _CJK:
        return "".join(text.split())
    from sacremoses import MosesDetokenizer

    return MosesDetokenizer(lang=lang).detokenize(text.split(), return_str=True)


def learn_truecaser(tokenized: Iterable[str], model_path: str | Path) -> None:
    """Learn a Moses truecasing model from tokenized training text."""
    from sacremoses import MosesTruecaser

    truecaser = MosesTruecaser()
    truecaser.train([line.split() for line in tokenized], save_to=None)
    # sacremoses writes the model with a plain open(): write beside it, then rename
    target = Path(model_path)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        truecaser.save_model(str(partial))
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def apply_casing(lines: Iterable[str], casing: str, model: str | Path | None = None
                 ) -> Iterator[str]:
    """Apply a casing mode to tokenized lines."""
    if casing == "none":
        yield from lines
    elif casing == "lower":
        yield from (line.lower() for line in lines)
    elif casing == "truecase":
        if model is None or not Path(model).is_file():
            raise InputError(model or "<none>", "truecasing model not found")
        from sacremoses import MosesTruecaser

        truecaser = MosesTruecaser(load_from=str(model))
        for line in lines:
            yield truecaser.truecase(line, return_str=True)
    else:
        raise ValueError(f"unknown casing {casing!r}; expected one of {CASINGS}")


def postprocess(lines: Iterable[str], lang: str, casing: str) -> Iterator[str]:
    """Turn tokenized (BPE-merged) model output back into plain text."""
    from sacremoses import MosesDetruecaser

    detruecaser = MosesDetruecaser() if casing == "truecase" else None
    for line in lines:
        if detruecaser is not None:
            line = detruecaser.detruecase(line, return_str=True)
        yield detokenize(line, lang)


def _tokenize_command(args: argparse.Namespace) -> int:
    if args.pretokenized:  # already tokenized upstream: only normalise spacing
        lines = (" ".join(line.split()) for line in iter_lines(args.input))
    else:
        lines = (tokenize(line, args.lang) for line in iter_lines(args.input))
    count = write_lines(args.output, lines)
    print(f"{args.output}: {count} lines")
    return 0


def _truecase_learn_command(args: argparse.Namespace) -> int:
    learn_truecaser(iter_lines(args.input), args.model)
    return 0


def _case_command(args: argparse.Namespace) -> int:
    write_lines(args.output, apply_casing(iter_lines(args.input), args.casing, args.model))
    return 0


def _detok_command(args: argparse.Namespace) -> int:
    write_lines(args.output, postprocess(iter_lines(args.input), args.lang, args.casing))
    return 0


def register_cli(tree) -> None:
    p = tree.add("text tokenize", "Normalise punctuation and tokenize (jieba for zh)",
                 _tokenize_command)
    p.add_argument("--lang", required=True)
    p.add_argument("--pretokenized", action="store_true",
                   help="the input is tokenized already; only normalise spacing")
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p = tree.add("text truecase-learn", "Learn a Moses truecasing model", _truecase_learn_command)
    p.add_argument("--input", required=True)
    p.add_argument("--model", required=True)
    p = tree.add("text case", "Apply a casing mode (none, lower, truecase)", _case_command)
    p.add_argument("--casing", choices=CASINGS, required=True)
    p.add_argument("--model")
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p = tree.add("text detokenize", "Detruecase and detokenize model output", _detok_command)
    p.add_argument("--lang", required=True)
    p.add_argument("--casing", choices=CASINGS, default="none")
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
