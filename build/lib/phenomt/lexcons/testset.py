"""Reader of the released test-set layout of Lei et al. (2024).

A test-set folder holds

- ``zh2en_token/test-N.txt`` (required): one sentence pair a line, ``zh ||| en``, both sides
  tokenized (Chinese word-segmented, English split);
- ``zh2en_raw/test-N.txt`` (optional): the same pairs untokenized, line for line;
- ``res/test-N.txt`` (optional): one annotated true-consistency chain a line, a Python list
  ``['词/s/t', …, 'translation']`` with 0-based sentence ``s`` and token ``t`` into
  ``zh2en_token`` and the chain's shared reference translation last.

Documents are the files ``test-1`` … ``test-n`` in numeric order. Every inconsistency (a
line without `` ||| ``, raw and token files of different length, a chain item whose word is
not the token at its position, ...) raises :class:`InputError` naming the file and line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

# the folder layout is shared with the corpus reader; re-exported for the wing's modules
from phenomt.core.io import InputError, read_lines
from phenomt.core.layout import (  # noqa: F401
    CHAIN_DIR,
    RAW_DIR,
    SEPARATOR,
    TOKEN_DIR,
    document_names,
    read_pairs,
    split_pair,
)

Position = tuple[int, int]
"""(sentence index, token index), both 0-based."""


@dataclass(frozen=True)
class Chain:
    """One annotated chain: a source word, where it occurs, its shared reference translation."""

    word: str
    positions: tuple[Position, ...]
    translation: str
    line: int
    """1-based line of the chain in its ``res`` file."""


@dataclass(frozen=True)
class Document:
    """One document: tokenized source and reference sentences, and its chains if annotated."""

    name: str
    source: tuple[tuple[str, ...], ...]
    reference: tuple[tuple[str, ...], ...]
    chains: tuple[Chain, ...] | None
    """``None`` when the folder has no ``res`` layer (not the same as no chains)."""

    @property
    def sentences(self) -> int:
        return len(self.source)

    def token(self, position: Position) -> str:
        sentence, index = position
        return self.source[sentence][index]


@dataclass(frozen=True)
class TestSet:
    """All documents of a folder in numeric order."""

    __test__ = False  # not a pytest class despite its name

    root: Path
    documents: tuple[Document, ...]
    annotated: bool
    has_raw: bool

    @property
    def sentences(self) -> int:
        return sum(d.sentences for d in self.documents)

    def source_sentences(self) -> list[tuple[str, ...]]:
        """Every source sentence of the set, documents in order."""
        return [s for d in self.documents for s in d.source]

    def reference_sentences(self) -> list[tuple[str, ...]]:
        return [s for d in self.documents for s in d.reference]


def parse_chain(text: str, path: Path, number: int, source: tuple[tuple[str, ...], ...]
                ) -> Chain:
    """One ``res`` line, checked against the tokenized source of its document."""
    try:
        items = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        raise InputError(path, "not a Python list of strings", number) from None
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise InputError(path, "not a Python list of strings", number)
    if len(items) < 3:
        raise InputError(path, "a chain needs at least two positions and a translation", number)
    *occurrences, translation = items
    words, positions = set(), []
    for item in occurrences:
        # rsplit: the word itself may contain '/'
        parts = item.rsplit("/", 2)
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
            raise InputError(path, f"chain item {item!r} is not word/sentence/token", number)
        word, sentence, index = parts[0], int(parts[1]), int(parts[2])
        if sentence >= len(source):
            raise InputError(path, f"chain item {item!r}: the document has only "
                                   f"{len(source)} sentences", number)
        if index >= len(source[sentence]):
            raise InputError(path, f"chain item {item!r}: sentence {sentence} has only "
                                   f"{len(source[sentence])} tokens", number)
        if source[sentence][index] != word:
            raise InputError(path, f"chain item {item!r}: token {index} of sentence "
                                   f"{sentence} is {source[sentence][index]!r}", number)
        words.add(word)
        positions.append((sentence, index))
    if len(words) != 1:
        raise InputError(path, f"chain mixes different words {sorted(words)}", number)
    if len(set(positions)) != len(positions):
        raise InputError(path, "chain lists a position twice", number)
    return Chain(words.pop(), tuple(positions), translation.strip(), number)


def read_chains(path: Path, source: tuple[tuple[str, ...], ...]) -> tuple[Chain, ...]:
    """The chains of one ``res`` file; blank lines are skipped."""
    return tuple(parse_chain(line, path, n, source)
                 for n, line in enumerate(read_lines(path), start=1) if line.strip())


def _check_raw(raw_path: Path, token_path: Path, n_token: int) -> None:
    raw = read_pairs(raw_path)
    if len(raw) != n_token:
        raise InputError(raw_path, f"has {len(raw)} lines but {token_path} has {n_token}",
                         min(len(raw), n_token) + 1)


def read_document(root: Path, name: str, annotated: bool, has_raw: bool) -> Document:
    """One document of the folder ``root``, validated across its layers."""
    token_path = root / TOKEN_DIR / f"{name}.txt"
    pairs = read_pairs(token_path)
    source = tuple(tuple(zh.split()) for zh, _ in pairs)
    reference = tuple(tuple(en.split()) for _, en in pairs)
    if has_raw:
        _check_raw(root / RAW_DIR / f"{name}.txt", token_path, len(pairs))
    chains = None
    if annotated:
        chain_path = root / CHAIN_DIR / f"{name}.txt"
        if not chain_path.is_file():
            raise InputError(chain_path, "missing: every document needs a res file (it may be "
                                         "empty)")
        chains = read_chains(chain_path, source)
    return Document(name, source, reference, chains)


def read_testset(root: str | Path) -> TestSet:
    """Read and validate a test-set folder."""
    root = Path(root)
    names = document_names(root / TOKEN_DIR)
    annotated = (root / CHAIN_DIR).is_dir()
    has_raw = (root / RAW_DIR).is_dir()
    for layer, present in ((CHAIN_DIR, annotated), (RAW_DIR, has_raw)):
        if present:
            extra = set(document_names(root / layer)) - set(names)
            if extra:
                raise InputError(root / layer / f"{sorted(extra)[0]}.txt",
                                 f"has no counterpart in {TOKEN_DIR}")
    documents = tuple(read_document(root, name, annotated, has_raw) for name in names)
    return TestSet(root, documents, annotated, has_raw)
