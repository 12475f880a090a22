"""Reading and writing CoNLL-U (Universal Dependencies v2).

A file is a sequence of sentences separated by blank lines. Each sentence starts with ``#``
comment lines (``# text = ...``, ``# sent_id = ...``) followed by ten tab-separated columns per
line: ``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC``. Three kinds of ID occur:

* ``7``: a syntactic word; word ids run 1, 2, ... within the sentence and HEAD points to one of
  them, or is ``0`` for the root;
* ``3-4``: a multiword token, the surface form of words 3 and 4 (German ``zum`` = ``zu dem``);
* ``5.1``: an empty node of the enhanced graph, inserted after word 5.

The reader checks the structure strictly and raises :class:`phenomt.core.io.InputError` naming the
file and the 1-based line of the first malformed line. It keeps every sentence's original lines,
so a sentence is written back byte for byte as it was read (line endings become ``\\n``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from phenomt.core.io import InputError, atomic_write, iter_lines

N_COLUMNS = 10

_WORD_ID = re.compile(r"[1-9][0-9]*")
_RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
_EMPTY_ID = re.compile(r"(0|[1-9][0-9]*)\.([1-9][0-9]*)")
_HEAD = re.compile(r"0|[1-9][0-9]*")


class Word(NamedTuple):
    """A syntactic word (integer ID). ``head`` is ``0`` for the root, ``None`` when unannotated."""

    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    head: int | None
    deprel: str
    deps: str
    misc: str
    line: int

    def features(self) -> dict[str, str]:
        """FEATS as a mapping, e.g. ``{"Reflex": "Yes"}``; empty for ``_``."""
        return parse_features(self.feats)

    def has_feature(self, name: str, value: str) -> bool:
        """True when FEATS lists ``value`` among the values of ``name`` (``A=x,y`` has both)."""
        values = self.features().get(name)
        return values is not None and value in values.split(",")


class MultiwordToken(NamedTuple):
    """A surface token spanning words ``start`` … ``end`` (inclusive)."""

    start: int
    end: int
    form: str
    misc: str
    line: int


class EmptyNode(NamedTuple):
    """An enhanced-graph empty node ``major.minor``; it is not a word of the basic tree."""

    major: int
    minor: int
    form: str
    line: int


class SurfaceToken(NamedTuple):
    """A token as written in the text: a single word, or a multiword token and its words."""

    form: str
    first_word: int
    last_word: int


@dataclass(frozen=True)
class Sentence:
    """One sentence: comments, words, multiword tokens, empty nodes and its original lines."""

    lines: tuple[str, ...]
    first_line: int
    comments: tuple[str, ...]
    words: tuple[Word, ...]
    multiword_tokens: tuple[MultiwordToken, ...] = ()
    empty_nodes: tuple[EmptyNode, ...] = ()
    _meta: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for comment in self.comments:
            key, sep, value = comment[1:].partition("=")
            if sep:
                # A key given twice keeps its first value.
                self._meta.setdefault(key.strip(), value[1:] if value.startswith(" ") else value)

    @property
    def metadata(self) -> dict[str, str]:
        """``# key = value`` comments as a mapping (first occurrence of a key wins)."""
        return dict(self._meta)

    @property
    def text(self) -> str | None:
        """The ``# text`` comment, or ``None`` when the sentence has none."""
        return self._meta.get("text")

    @property
    def sent_id(self) -> str | None:
        """The ``# sent_id`` comment, or ``None``."""
        return self._meta.get("sent_id")

    def word(self, word_id: int) -> Word:
        """The word with 1-based id ``word_id``."""
        if not 1 <= word_id <= len(self.words):
            raise IndexError(f"word id {word_id} outside 1..{len(self.words)}")
        return self.words[word_id - 1]

    def surface_tokens(self) -> list[SurfaceToken]:
        """Tokens in text order: each multiword token replaces the words it spans."""
        ranges = {token.start: token for token in self.multiword_tokens}
        tokens: list[SurfaceToken] = []
        word_id = 1
        while word_id <= len(self.words):
            token = ranges.get(word_id)
            if token is not None:
                tokens.append(SurfaceToken(token.form, token.start, token.end))
                word_id = token.end + 1
            else:
                tokens.append(SurfaceToken(self.words[word_id - 1].form, word_id, word_id))
                word_id += 1
        return tokens

    def surface_text(self) -> str:
        """The ``# text`` comment if present, else the surface tokens joined by spaces."""
        if self.text is not None:
            return self.text
        return " ".join(token.form for token in self.surface_tokens())

    def to_conllu(self) -> str:
        """The sentence exactly as read, followed by its terminating blank line."""
        return "\n".join(self.lines) + "\n\n"


def parse_features(feats: str) -> dict[str, str]:
    """Parse a FEATS column (``Case=Acc|Reflex=Yes``) into a mapping; ``_`` gives ``{}``."""
    if feats == "_":
        return {}
    result: dict[str, str] = {}
    for item in feats.split("|"):
        name, sep, value = item.partition("=")
        if sep:
            result[name] = value
    return result


class _SentenceBuilder:
    """Collects one sentence's lines and checks their order as they arrive."""

    def __init__(self, source: str, first_line: int):
        self.source = source
        self.first_line = first_line
        self.lines: list[str] = []
        self.comments: list[str] = []
        self.words: list[Word] = []
        self.multiword: list[MultiwordToken] = []
        self.empty: list[EmptyNode] = []

    def error(self, line: int, cause: str) -> InputError:
        return InputError(self.source, cause, line)

    def add(self, text: str, number: int) -> None:
        self.lines.append(text)
        if text.startswith("#"):
            if self.words or self.multiword or self.empty:
                raise self.error(number, "comment line after the first token line of a sentence")
            self.comments.append(text)
            return
        columns = text.split("\t")
        if len(columns) != N_COLUMNS:
            raise self.error(number, f"expected {N_COLUMNS} tab-separated columns, "
                                     f"found {len(columns)}")
        if "" in columns:
            raise self.error(number, f"column {columns.index('') + 1} is empty "
                                     f"(use '_' for no value)")
        ident = columns[0]
        if _WORD_ID.fullmatch(ident):
            self._add_word(int(ident), columns, number)
        elif match := _RANGE_ID.fullmatch(ident):
            self._add_range(int(match[1]), int(match[2]), columns, number)
        elif match := _EMPTY_ID.fullmatch(ident):
            self._add_empty(int(match[1]), int(match[2]), columns, number)
        else:
            raise self.error(number, f"malformed ID {ident!r}: expected N, N-M or N.M")

    def _add_word(self, word_id: int, columns: list[str], number: int) -> None:
        expected = len(self.words) + 1
        if word_id != expected:
            raise self.error(number, f"word ID {word_id} out of sequence, expected {expected}")
        head_text = columns[6]
        head: int | None
        if head_text == "_":
            head = None
        elif _HEAD.fullmatch(head_text):
            head = int(head_text)
            if head == word_id:
                raise self.error(number, f"word {word_id} is its own head")
        else:
            raise self.error(number, f"HEAD {head_text!r} is not a non-negative integer")
        form, lemma, upos, xpos, feats = columns[1:6]
        self.words.append(Word(word_id, form, lemma, upos, xpos, feats, head,
                               columns[7], columns[8], columns[9], number))

    def _add_range(self, start: int, end: int, columns: list[str], number: int) -> None:
        expected = len(self.words) + 1
        if start != expected:
            raise self.error(number, f"multiword token {start}-{end} must start at word "
                                     f"{expected}")
        if end <= start:
            raise self.error(number, f"multiword token {start}-{end} has an empty range")
        if self.multiword and self.multiword[-1].end >= start:
            raise self.error(number, f"multiword token {start}-{end} overlaps the previous one")
        self.multiword.append(MultiwordToken(start, end, columns[1], columns[9], number))

    def _add_empty(self, major: int, minor: int, columns: list[str], number: int) -> None:
        if major != len(self.words):
            raise self.error(number, f"empty node {major}.{minor} must follow word {major}")
        previous = [node.minor for node in self.empty if node.major == major]
        if previous and minor <= previous[-1]:
            raise self.error(number, f"empty node {major}.{minor} out of sequence")
        self.empty.append(EmptyNode(major, minor, columns[1], number))

    def finish(self) -> Sentence:
        if not self.words:
            raise self.error(self.first_line, "sentence has no word lines")
        count = len(self.words)
        for word in self.words:
            if word.head is not None and word.head > count:
                raise self.error(word.line, f"HEAD {word.head} exceeds the sentence's "
                                            f"{count} words")
        for token in self.multiword:
            if token.end > count:
                raise self.error(token.line, f"multiword token {token.start}-{token.end} "
                                             f"exceeds the sentence's {count} words")
        return Sentence(tuple(self.lines), self.first_line, tuple(self.comments),
                        tuple(self.words), tuple(self.multiword), tuple(self.empty))


def parse_conllu_lines(lines: Iterable[str], source: str | os.PathLike[str] = "<conllu>"
                       ) -> Iterator[Sentence]:
    """Yield sentences from CoNLL-U lines given without line endings.

    ``source`` names the input in error messages. Blank (or whitespace-only) lines separate
    sentences; several in a row are tolerated, and the last sentence needs no trailing blank.
    """
    name = str(source)
    builder: _SentenceBuilder | None = None
    for number, text in enumerate(lines, start=1):
        if text.strip() == "":
            if builder is not None:
                yield builder.finish()
                builder = None
            continue
        if builder is None:
            builder = _SentenceBuilder(name, number)
        builder.add(text, number)
    if builder is not None:
        yield builder.finish()


def iter_conllu(path: str | os.PathLike[str]) -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL-U file (``.gz`` allowed)."""
    yield from parse_conllu_lines(iter_lines(path), path)


def read_conllu(path: str | os.PathLike[str]) -> list[Sentence]:
    """All sentences of a CoNLL-U file, see :func:`iter_conllu`."""
    return list(iter_conllu(path))


def parse_conllu(text: str, source: str = "<conllu>") -> list[Sentence]:
    """All sentences of CoNLL-U held in a string."""
    # Only "\n" ends a line: str.splitlines would also split on U+2028 etc. inside a FORM.
    return list(parse_conllu_lines(text.replace("\r\n", "\n").split("\n"), source))


def count_sentences(path: str | os.PathLike[str]) -> int:
    """Number of sentences in a CoNLL-U file (the file is fully validated)."""
    return sum(1 for _ in iter_conllu(path))


def write_conllu(path: str | os.PathLike[str], sentences: Iterable[Sentence]) -> int:
    """Atomically write sentences, each exactly as read and followed by a blank line.

    Returns the number of sentences written; none gives an empty file.
    """
    count = 0
    with atomic_write(Path(path)) as out:
        for sentence in sentences:
            out.write(sentence.to_conllu())
            count += 1
    return count
