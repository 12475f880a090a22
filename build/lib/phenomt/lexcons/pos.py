"""Word classes of the given source tokens, from jieba's part-of-speech tagger.

The paper tagged with a CTB-style parser, which is not available; jieba ``posseg`` is run on
each sentence (the given tokens joined) and every given token takes the tag of the jieba
word that covers its last character. When the jieba words overlapping a token carry more
than one tag, the projection is *conflicting*; such tokens are counted and reported.
Tags map to the paper's classes NOUN, VERB, ADJ/ADV, OTHERS, or FUNCTION (not a content
word) through the checked-in table ``data/pos_classes.tsv``.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from phenomt.core.io import InputError

CLASSES = ("NOUN", "VERB", "ADJ/ADV", "OTHERS")
"""Content-word classes, in the paper's order (also the tie-breaking order)."""
FUNCTION = "FUNCTION"
TABLE = Path(__file__).parent / "data" / "pos_classes.tsv"


@dataclass(frozen=True)
class TaggedToken:
    """A given token's projected jieba tag, its class, and whether the projection conflicts."""

    tag: str
    word_class: str
    conflicting: bool


def read_class_table(path: str | Path = TABLE) -> dict[str, str]:
    """jieba tag → class from a ``tag  class  meaning`` table (``#`` lines are comments)."""
    path = Path(path)
    mapping: dict[str, str] = {}
    with open(path, encoding="utf-8") as handle:
        lines = [(n, line) for n, line in enumerate(handle, start=1)
                 if line.strip() and not line.startswith("#")]
    rows = csv.reader((line for _, line in lines), delimiter="\t")
    header = next(rows, None)
    if header is None or header[:2] != ["tag", "class"]:
        raise InputError(path, "the header must start with tag<TAB>class", lines[0][0]
                         if lines else None)
    for (number, _), row in zip(lines[1:], rows, strict=True):
        if len(row) < 2 or row[1] not in (*CLASSES, FUNCTION):
            raise InputError(path, f"expected a tag and one of {(*CLASSES, FUNCTION)}", number)
        if row[0] in mapping:
            raise InputError(path, f"tag {row[0]!r} listed twice", number)
        mapping[row[0]] = row[1]
    return mapping


@lru_cache(maxsize=1)
def _posseg():
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba.posseg


def _joined(tokens: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """The sentence as jieba should see it, and each token's character span in it.

    Tokens are joined without spaces, as Chinese is written, except between two tokens that
    meet with Latin letters or digits on both sides ("New" "York" must not become "NewYork").
    """
    text, spans = "", []
    for token in tokens:
        if text and text[-1].isascii() and text[-1].isalnum() and token[:1].isascii() \
                and token[:1].isalnum():
            text += " "
        spans.append((len(text), len(text) + len(token)))
        text += token
    return text, spans


def tag_sentence(tokens: Sequence[str], classes: dict[str, str]) -> list[TaggedToken]:
    """Project jieba's tags onto the given tokens of one sentence."""
    text, spans = _joined(tokens)
    char_tags: list[str] = [""] * len(text)
    char_word: list[int] = [-1] * len(text)
    start = 0
    for number, pair in enumerate(_posseg().cut(text)):
        for offset in range(start, start + len(pair.word)):
            char_tags[offset] = pair.flag
            char_word[offset] = number
        start += len(pair.word)
    tagged = []
    for a, b in spans:
        tag = char_tags[b - 1]
        if tag not in classes:
            raise KeyError(f"jieba tag {tag!r} is not in the class table {TABLE}")
        overlapping = {char_tags[i] for i in range(a, b)}
        tagged.append(TaggedToken(tag, classes[tag], len(overlapping) > 1))
    return tagged


def tag_document(sentences: Sequence[Sequence[str]], classes: dict[str, str]
                 ) -> list[list[TaggedToken]]:
    """Tags of every token of a document, sentence by sentence."""
    return [tag_sentence(tokens, classes) for tokens in sentences]


def tagger_name() -> str:
    """The tagger and its version, for table notes."""
    from importlib import metadata

    return f"jieba {metadata.version('jieba')} posseg (HMM on), tag of each token's last character"
