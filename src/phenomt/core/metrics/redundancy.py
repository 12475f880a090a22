"""Information redundancy of translation output: CRR and DRR (Wang et al., "On the Information
Redundancy in Non-Autoregressive Translation").

Definitions, for an output Y = y_0 ... y_{n-1} (positions are 0-based here):

* **Redundancy check.** R(a, b) = 1 when a = b (string equality) or S(a, b) = 1, where S marks
  synonyms: the cosine similarity of the two tokens' embeddings exceeds a threshold (strictly).
  Without embeddings only identical tokens are redundant. Tokens missing from the embedding
  table, or whose vector is zero, have no synonyms.
* **Continuous redundancy.** Cr(y_i) = 1 when i > 0 and R(y_i, y_{i-1}) = 1.
  CRR(Y) = sum Cr / (|Y| - 1). Continuous repeats are never exempt.
* **Discontinuous redundancy.** Dr(y_i) = 1 when Cr(y_i) = 0 and some j < i has
  R(y_i, y_j) = 1, unless y_i is exempt. DRR(Y) = sum Dr / (|Y| - 1).
  The condition Cr(y_i) = 0 is the *operational reading* of the paper's formula: read
  literally, every continuous repeat that is not exempt would be counted a second time as
  discontinuous, so DRR would be at least CRR less the exempt continuous repeats, and the
  paper's own Table 10 (CMLM: CRR 51.6%, DRR 1.9%) would need nearly all of them exempt.
  A token is counted at most once, as continuous or as discontinuous.
* **Exemptions** (discontinuous redundancy only), checked in this order:

  1. *Stopwords*: y_i is a stopword. The paper's stopwords are the k most frequent tokens of the
     training data (k = 3 for Chinese, 10 otherwise, see :func:`default_stopword_count`) plus the
     most frequent tokens of the embedding's dictionary, because frequent tokens are similar to
     everything. A stopword exemption uses no quota.
  2. *Multiple occurrences*, the dynamic list M~: every token type t of the source and the
     reference receives the quota max(count of t in the source, count of t in the reference) - 1;
     for example, the reference "a x a" gives "a" a quota of 1. A redundant y_i is exempt when
     y_i itself, or else a synonym of y_i, still has quota left; the exemption uses up one unit
     of that entry. The identical entry is used first; otherwise the first synonym entry with
     quota, in order of first appearance in the source, then the reference.

* **Case.** Tokens are compared as strings (the paper's y_i = y_j), so case matters by default:
  "Tonight" and "tonight" are redundant only as synonyms, where embeddings are given and their
  vectors are close. The paper's Table 1 counts "Tonight I ate pizza tonight." as a
  discontinuous repetition, which string equality alone does not give: it either folds case
  or relies on its embedding synonyms, and it does not say which; we keep the formula's
  equality. ``lowercase=True`` (CLI ``--ignore-case``) is the other reading: it folds every
  token (output, source, reference, stopwords, and the keys of the embedding table) to lower
  case first.
* **Tokens.** BPE level by default: a line is split on whitespace and ``@@`` continuation markers
  stay part of the tokens, so "pi@@ zza" is two tokens. Word level (``level="word"``) first joins
  subword-nmt continuations ("pi@@ zza" -> "pizza"). Output, source, reference, stopword corpus
  and annotations must use the same tokenisation as each other and as the embedding vocabulary.
* **Corpus level.** Counts are pooled: CRR = sum over sentences of sum Cr / sum over sentences
  with |Y| >= 2 of (|Y| - 1), and likewise DRR; long sentences weigh more, exactly as for tokens.
  The macro average, the mean of the per-sentence ratios over sentences with |Y| >= 2, is also
  reported (``crr_macro``, ``drr_macro``). A sentence with |Y| <= 1 has no ratio (``None``) and
  adds nothing to either pooled sum; a corpus without any sentence of two or more tokens has no
  ratios (``None``, JSON ``null``).

Embedding tables:

* a plain vectors text file in word2vec/fastText text format: an optional header "N D" (a first
  line of exactly two integers), then one ``token v1 ... vD`` line per token; the token ends at
  the first ASCII space. Blank lines are ignored. A row of the wrong dimension, a value that is not
  a finite number, a duplicate token or a header whose N disagrees is an error naming the line.
  Rows are taken to be in descending frequency order (as these files are conventionally written)
  when picking the dictionary's frequent tokens.
* a fairseq checkpoint's embedding table (``decoder.embed_tokens.weight``, else
  ``encoder.embed_tokens.weight``, in the checkpoint's ``model`` state dict) with its
  ``dict.txt``. fairseq's :class:`Dictionary` puts ``<s> <pad> </s> <unk>`` at rows 0..3 and the
  dictionary line with 0-based index L at row L + 4 (1-based line number + 3). A
  ``#fairseq:overwrite`` entry takes a new row and replaces the earlier one for lookup. The table
  must have exactly 4 + (number of entries) rows; tasks such as mBART append symbols (language
  tags, ``<mask>``) after the dictionary, so ``allow_extra_rows=True`` accepts surplus rows at the
  end. Loading a checkpoint needs torch and unpickles it: only load checkpoints you trust.

Human annotations (paper Tables 4 and 9), a UTF-8 TSV file, one redundant pair a line::

    system<TAB>sentence<TAB>a<TAB>b<TAB>type

``system`` names a hypothesis file, ``sentence`` is its 0-based line, ``a < b`` are 0-based token
positions in that line (same tokenisation as the metric), and ``type`` is ``continuous``
(b = a + 1) or ``discontinuous`` (b >= a + 2); the row says tokens a and b are mutually
redundant. Blank lines and lines starting with ``#`` are skipped, and a first row whose first
field is ``system`` is a header. Every line of every hypothesis file given with the annotations
counts as inspected: a sentence without rows has no redundancy.

The automatic metric's pairs are (i - 1, i) for each Cr(y_i) = 1 and (j, i) for each
Dr(y_i) = 1, where j is the *nearest* earlier position with R(y_i, y_j) = 1, so a repeated
token is linked to its previous occurrence (annotators should link the same way). Agreement is
reported both on exact pairs and on redundant tokens (the later position b only, which does not
depend on the partner chosen). Human ratios count each later token b once per type, and, as for
the metric, a token marked continuous is not counted again as discontinuous. Name a system
``<model>.<raw|distilled>`` (e.g. ``cmlm_oaxe.distilled``) and the agreement table puts the
paper's Table 4 and Table 9 numbers of the same training data and model beside ours.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import pickle
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from phenomt.core.cliargs import named_file, non_negative_int, positive_int
from phenomt.core.corpus import read_parallel
from phenomt.core.io import InputError, atomic_write, iter_lines, open_binary
from phenomt.core.metrics import resample
from phenomt.core.metrics.base import Metric, register
from phenomt.core.requires import import_torch

Synonyms = Callable[[str, str], bool]
"""S(a, b): True when two distinct tokens are synonyms."""

LEVELS = ("bpe", "word")
KINDS = ("continuous", "discontinuous")
FAIRSEQ_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")
FAIRSEQ_OVERWRITE = "#fairseq:overwrite"
TABLE_KEYS = ("decoder.embed_tokens.weight", "encoder.embed_tokens.weight")

_BPE_JOIN = re.compile(r"@@ |@@$")


# --------------------------------------------------------------------------- tokens

def merge_bpe(line: str) -> str:
    """Join subword-nmt continuations: ``"pi@@ zza"`` -> ``"pizza"``; a final ``@@`` is dropped."""
    return _BPE_JOIN.sub("", line.rstrip())


def tokenize(line: str, level: str = "bpe", lowercase: bool = False) -> list[str]:
    """The tokens of one line at ``level`` (``bpe``: as written; ``word``: BPE merged)."""
    if level not in LEVELS:
        raise ValueError(f"unknown token level {level!r}; expected one of {LEVELS}")
    if level == "word":
        line = merge_bpe(line)
    if lowercase:
        line = line.lower()
    return line.split()


def read_tokenized(path: str | Path, level: str = "bpe",
                   lowercase: bool = False) -> list[list[str]]:
    """Every line of a text file as tokens, see :func:`tokenize`."""
    return [tokenize(line, level, lowercase) for line in iter_lines(path)]


def read_parallel_tokenized(paths: Sequence[str | Path | None], level: str = "bpe",
                            lowercase: bool = False) -> list[list[list[str]] | None]:
    """Tokenise parallel files (``None`` entries stay ``None``), failing on unequal line counts."""
    given = [p for p in paths if p is not None]
    columns = iter(read_parallel(given))
    return [None if p is None else [tokenize(line, level, lowercase) for line in next(columns)]
            for p in paths]


# --------------------------------------------------------------------------- embeddings

def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32, which also halves a large table's memory); all-zero
    rows stay zero."""
    table = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    return np.divide(table, norms, out=np.zeros_like(table), where=norms > 0).astype(np.float32)


class Embeddings:
    """An embedding table: ``tokens[r]`` names row ``r`` of ``vectors`` (unit-length rows).

    ``counts`` are dictionary frequencies where the format records them; ``specials`` are
    symbols that never count as ordinary tokens (fairseq's ``<s> <pad> </s> <unk>``).
    When a token names several rows, the last one wins (fairseq's overwrite rule).
    """

    def __init__(self, tokens: Sequence[str], matrix: np.ndarray, *,
                 counts: Sequence[int] | None = None, specials: Iterable[str] = (),
                 source: str = "<memory>"):
        if matrix.ndim != 2 or matrix.shape[0] != len(tokens):
            raise ValueError(f"{len(tokens)} tokens for a table of shape {matrix.shape}")
        self.tokens = tuple(tokens)
        self.vectors = unit_rows(matrix)
        self.counts = None if counts is None else tuple(counts)
        self.specials = frozenset(specials)
        self.source = source
        self.index = {token: row for row, token in enumerate(self.tokens)}

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def frequent_tokens(self, k: int) -> list[str]:
        """The ``k`` most frequent ordinary tokens: by count where known, else in row order.

        Specials and zero-count padding symbols (fairseq's ``madeupword0000``...) are skipped.
        """
        rows = sorted(row for token, row in self.index.items() if token not in self.specials
                      and (self.counts is None or self.counts[row] > 0))
        if self.counts is not None:
            rows.sort(key=lambda row: -self.counts[row])  # stable: ties keep row order
        return [self.tokens[row] for row in rows[:max(k, 0)]]


def _looks_like_checkpoint(path: Path) -> bool:
    """A zip (torch >= 1.6) or raw pickle file rather than text."""
    with open_binary(path) as handle:
        head = handle.read(4)
    return head.startswith(b"PK\x03\x04") or head[:1] == b"\x80"


def load_vectors_text(path: str | Path) -> Embeddings:
    """Read a word2vec/fastText text vectors file (format in the module docstring)."""
    path = Path(path)
    if path.suffix != ".gz" and _looks_like_checkpoint(path):
        raise InputError(path, "looks like a torch checkpoint; give its dictionary as well "
                               "(--embeddings-dict)")
    tokens: list[str] = []
    rows: list[np.ndarray] = []
    first_line: dict[str, int] = {}
    header: tuple[int, int] | None = None
    dim: int | None = None
    dim_origin = ""
    for number, line in enumerate(iter_lines(path), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if not tokens and header is None and len(fields) == 2 and all(
                f.isdigit() for f in fields):
            header = (int(fields[0]), int(fields[1]))
            dim, dim_origin = header[1], f"the header on line {number}"
            continue
        token, _, rest = line.partition(" ")
        if not token:
            raise InputError(path, "line starts with a space: no token", number)
        try:
            values = np.array(rest.split(), dtype=np.float32)
        except ValueError:
            raise InputError(path, f"values of {token!r} are not all numbers", number) from None
        if values.size == 0:
            raise InputError(path, f"token {token!r} has no vector values", number)
        if not np.isfinite(values).all():
            raise InputError(path, f"vector of {token!r} has a value that is not finite in "
                                   "single precision", number)
        if dim is None:
            dim, dim_origin = values.size, f"line {number}"
        elif values.size != dim:
            raise InputError(path, f"vector of {token!r} has {values.size} values, but "
                                   f"{dim_origin} gives dimension {dim}", number)
        if token in first_line:
            raise InputError(path, f"duplicate token {token!r} (first on line "
                                   f"{first_line[token]})", number)
        first_line[token] = number
        tokens.append(token)
        rows.append(values)
    if not rows:
        raise InputError(path, "no vectors")
    if header is not None and header[0] != len(rows):
        raise InputError(path, f"header announces {header[0]} vectors, the file has {len(rows)}",
                         1)
    return Embeddings(tokens, np.vstack(rows), source=str(path))


def read_fairseq_dictionary(path: str | Path) -> tuple[list[str], list[int]]:
    """Symbols and counts of a fairseq ``dict.txt``, by row: 4 specials first, then the entries.

    Lines are ``token count [#fairseq:overwrite]``; the token is everything before the last
    space-separated field(s), as in fairseq. A repeated token without the overwrite flag is an
    error, as in fairseq.
    """
    symbols = list(FAIRSEQ_SPECIALS)
    counts = [0] * len(FAIRSEQ_SPECIALS)
    known = set(symbols)
    for number, line in enumerate(iter_lines(path), start=1):
        fields = line.rstrip().rsplit(" ", 1)
        overwrite = len(fields) == 2 and fields[1] == FAIRSEQ_OVERWRITE
        if overwrite:
            fields = fields[0].rsplit(" ", 1)
        if len(fields) != 2 or not fields[0] or not fields[1].lstrip("-").isdigit():
            raise InputError(path, "expected '<token> <count> [#fairseq:overwrite]'", number)
        token, count = fields[0], int(fields[1])
        if token in known and not overwrite:
            raise InputError(path, f"duplicate token {token!r} without {FAIRSEQ_OVERWRITE}",
                             number)
        known.add(token)
        symbols.append(token)
        counts.append(count)
    return symbols, counts


def embeddings_from_table(table: np.ndarray, dictionary: str | Path, *,
                          table_source: str = "<table>",
                          allow_extra_rows: bool = False) -> Embeddings:
    """Pair a fairseq embedding table with its ``dict.txt`` (row rule in the module docstring)."""
    symbols, counts = read_fairseq_dictionary(dictionary)
    if table.ndim != 2:
        raise InputError(table_source, f"embedding table has shape {tuple(table.shape)}, "
                                       "expected 2 dimensions")
    rows = table.shape[0]
    if rows < len(symbols) or (rows > len(symbols) and not allow_extra_rows):
        raise InputError(table_source, f"embedding table has {rows} rows, but {dictionary} gives "
                                       f"{len(symbols)} symbols ({len(FAIRSEQ_SPECIALS)} specials "
                                       f"+ {len(symbols) - len(FAIRSEQ_SPECIALS)} entries)")
    return Embeddings(symbols, table[:len(symbols)], counts=counts, specials=FAIRSEQ_SPECIALS,
                      source=table_source)


def _read_checkpoint_table(path: Path, key: str | None) -> np.ndarray:
    torch = import_torch(f"{path}: reading a fairseq checkpoint")
    if not path.exists():
        raise InputError(path, "file not found")
    try:
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError:
            # fairseq stores its configuration objects beside the weights; they need full
            # unpickling, which the safe loader refuses.
            state = torch.load(path, map_location="cpu", weights_only=False)
    except (RuntimeError, OSError, EOFError, pickle.UnpicklingError) as err:
        raise InputError(path, f"cannot read checkpoint: {err}") from None
    model = state.get("model", state) if isinstance(state, Mapping) else None
    if not isinstance(model, Mapping):
        raise InputError(path, "not a fairseq checkpoint: no 'model' state dict")
    keys = (key,) if key else TABLE_KEYS
    found = next((k for k in keys if k in model), None)
    if found is None:
        raise InputError(path, f"no embedding table: none of {', '.join(keys)}")
    return model[found].detach().to(torch.float32).cpu().numpy()


def load_fairseq_embeddings(checkpoint: str | Path, dictionary: str | Path, *,
                            key: str | None = None,
                            allow_extra_rows: bool = False) -> Embeddings:
    """The embedding table of a fairseq checkpoint, indexed by its ``dict.txt``.

    ``key`` names the state-dict entry; by default the decoder's table (the output side), else
    the encoder's.
    """
    table = _read_checkpoint_table(Path(checkpoint), key)
    return embeddings_from_table(table, dictionary, table_source=str(checkpoint),
                                 allow_extra_rows=allow_extra_rows)


def load_embeddings(path: str | Path, dictionary: str | Path | None = None, *,
                    allow_extra_rows: bool = False) -> Embeddings:
    """A fairseq checkpoint when ``dictionary`` is given, else a vectors text file."""
    if dictionary is not None:
        return load_fairseq_embeddings(path, dictionary, allow_extra_rows=allow_extra_rows)
    return load_vectors_text(path)


class EmbeddingSynonyms:
    """S(a, b) = 1 when the cosine similarity of the tokens' embeddings exceeds ``threshold``.

    Vectors are normalised once (in :class:`Embeddings`), so a cosine is a dot product, computed
    in single precision like the stored vectors. Single decisions are cached (least recently
    used, ``cache_size`` pairs); :meth:`table` decides all pairs of one sentence in a single
    matrix product.
    """

    def __init__(self, embeddings: Embeddings, threshold: float, *, lowercase: bool = False,
                 cache_size: int = 1 << 20):
        if not -1.0 <= threshold <= 1.0:
            raise ValueError(f"cosine threshold {threshold} outside [-1, 1]")
        self.embeddings = embeddings
        self.threshold = threshold
        usable = np.linalg.norm(embeddings.vectors, axis=1) > 0
        self._rows: dict[str, int] = {}
        # Under case folding, the first (most frequent) surface form of a key gives its vector.
        for token, row in sorted(embeddings.index.items(), key=lambda item: item[1]):
            if usable[row]:
                self._rows.setdefault(token.lower() if lowercase else token, row)
        self._decide = functools.lru_cache(maxsize=cache_size)(self._above)

    def __contains__(self, token: str) -> bool:
        return token in self._rows

    def cosine(self, a: str, b: str) -> float | None:
        """Cosine similarity, or ``None`` when either token has no usable vector."""
        ra, rb = self._rows.get(a), self._rows.get(b)
        if ra is None or rb is None:
            return None
        vectors = self.embeddings.vectors
        return float(vectors[ra] @ vectors[rb])

    def _above(self, a: str, b: str) -> bool:
        cosine = self.cosine(a, b)
        return cosine is not None and cosine > self.threshold

    def __call__(self, a: str, b: str) -> bool:
        return self._decide(a, b) if a <= b else self._decide(b, a)

    def table(self, tokens: Sequence[str]) -> np.ndarray:
        """Boolean matrix of S(tokens[x], tokens[y]) for all pairs, in one matrix product."""
        n = len(tokens)
        decided = np.zeros((n, n), dtype=bool)
        known = [x for x, token in enumerate(tokens) if token in self._rows]
        if known:
            rows = [self._rows[tokens[x]] for x in known]
            vectors = self.embeddings.vectors[rows]
            decided[np.ix_(known, known)] = vectors @ vectors.T > self.threshold
        return decided


# --------------------------------------------------------------------------- stopwords

def default_stopword_count(lang: str) -> int:
    """The paper's k: 3 most frequent tokens for Chinese, 10 otherwise."""
    return 3 if lang.lower().startswith("zh") else 10


def frequent_tokens(sentences: Iterable[Sequence[str]], k: int) -> list[str]:
    """The ``k`` most frequent tokens; ties go to the lexicographically smaller token."""
    counts = Counter(chain.from_iterable(sentences))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [token for token, _ in ranked[:max(k, 0)]]


def corpus_stopwords(path: str | Path, k: int, level: str = "bpe",
                     lowercase: bool = False) -> frozenset[str]:
    """The ``k`` most frequent tokens of a (training) corpus, read as a stream."""
    return frozenset(frequent_tokens((tokenize(line, level, lowercase)
                                      for line in iter_lines(path)), k))


def read_stopwords(path: str | Path, lowercase: bool = False) -> frozenset[str]:
    """One stopword a line; surrounding whitespace is ignored, blank lines are skipped."""
    words = set()
    for number, line in enumerate(iter_lines(path), start=1):
        fields = line.split()
        if len(fields) > 1:
            raise InputError(path, "one stopword a line expected (tokens contain no spaces)",
                             number)
        if fields:
            words.add(fields[0].lower() if lowercase else fields[0])
    return frozenset(words)


# --------------------------------------------------------------------------- settings

#: Tokenizations: ``bpe``/``word`` (:func:`tokenize`) or ``moses`` (sacremoses by language,
#: jieba for Chinese, as the given systems are scored).
TOKENIZATIONS = ("moses", *LEVELS)


@functools.lru_cache(maxsize=4)
def _cached_embeddings(path: str, dictionary: str | None, allow_extra_rows: bool) -> Embeddings:
    # CRR and DRR of one job, and every system of a test set, share one table
    return load_embeddings(path, dictionary, allow_extra_rows=allow_extra_rows)


@dataclass(frozen=True)
class RedundancySettings:
    """Everything CRR and DRR depend on besides the text, for every way of scoring them (the
    registered ``crr``/``drr`` metrics, ``phenomt score redundancy`` of the NAT rules, the given
    systems' tables): tokens, case, the synonym relation and the stopwords.

    Stopwords, in this order: a file (``stopwords``); the ``stopword_count`` most frequent
    tokens of a corpus (``stopword_corpus``, the paper's training data); else, with
    ``reference_stopwords``, the ``stopword_count`` most frequent tokens of the references
    scored (the paper's k by target language when not given); else none. The embedding
    dictionary's ``embedding_stopword_count`` most frequent tokens are added to any of them.
    """

    tokenize: str = "bpe"
    ignore_case: bool = False
    embeddings: str | None = None
    embeddings_dict: str | None = None
    threshold: float | None = None
    allow_extra_embedding_rows: bool = False
    embedding_stopword_count: int = 0
    stopwords: str | None = None
    stopword_corpus: str | None = None
    stopword_count: int | None = None
    reference_stopwords: bool = False

    def check(self) -> None:
        """Raise ``ValueError`` naming the option that is missing or out of range."""
        if self.tokenize not in TOKENIZATIONS:
            raise ValueError(f"unknown tokenization {self.tokenize!r}: "
                             f"{', '.join(TOKENIZATIONS)}")
        if self.embeddings is None:
            for option, value in (("--embeddings-dict", self.embeddings_dict),
                                  ("--threshold", self.threshold)):
                if value is not None:
                    raise ValueError(f"{option} needs --embeddings")
            if self.embedding_stopword_count:
                raise ValueError("--embedding-stopword-count needs --embeddings")
        elif self.threshold is None:
            raise ValueError("--embeddings needs --threshold")
        elif not -1.0 <= self.threshold <= 1.0:
            raise ValueError("--threshold is a cosine similarity, in [-1, 1]")
        if self.stopwords is not None and self.stopword_corpus is not None:
            raise ValueError("--stopwords and --stopword-corpus exclude each other")
        if self.stopword_corpus is not None and self.stopword_count is None:
            raise ValueError("--stopword-corpus needs --stopword-count")
        if (self.stopword_count is not None and self.stopword_corpus is None
                and not self.reference_stopwords):
            raise ValueError("--stopword-count needs --stopword-corpus")
        for option, value in (("--stopword-count", self.stopword_count),
                              ("--embedding-stopword-count", self.embedding_stopword_count)):
            if value is not None and value < 0:
                raise ValueError(f"{option} must not be negative")

    def tokens(self, lines: Sequence[str], lang: str) -> list[list[str]]:
        """Each line's tokens under this tokenization and case."""
        if self.tokenize == "moses":
            from phenomt.core.text import word_tokens

            found = word_tokens(lines, lang)
            return [[t.lower() for t in sent] for sent in found] if self.ignore_case else found
        return [tokenize(line, self.tokenize, self.ignore_case) for line in lines]

    @property
    def synonyms(self) -> EmbeddingSynonyms | None:
        """S, from the embeddings (loaded once per process); ``None``: identical tokens only."""
        if self.embeddings is None or self.threshold is None:
            return None
        table = _cached_embeddings(self.embeddings, self.embeddings_dict,
                                   self.allow_extra_embedding_rows)
        return _cached_synonyms(table, self.threshold, self.ignore_case)

    def stopword_set(self, references: Sequence[Sequence[str]] = (),
                     target_lang: str = "en") -> frozenset[str]:
        """The stopwords (rule in the class docstring); ``references``: the scored
        references' tokens."""
        words = _given_stopwords(self)
        if self.stopwords is None and self.stopword_corpus is None and self.reference_stopwords:
            k = (default_stopword_count(target_lang) if self.stopword_count is None
                 else self.stopword_count)
            words |= frozenset(frequent_tokens(references, k))
        return words

    def stopword_rule(self, target_lang: str = "en") -> str:
        if self.stopwords is not None:
            rule = f"the file {self.stopwords}"
        elif self.stopword_corpus is not None:
            rule = f"the {self.stopword_count} most frequent tokens of {self.stopword_corpus}"
        elif self.reference_stopwords:
            k = (default_stopword_count(target_lang) if self.stopword_count is None
                 else self.stopword_count)
            rule = f"the {k} most frequent tokens of the whole reference"
        else:
            rule = "none"
        if self.embeddings is not None and self.embedding_stopword_count:
            rule += (f", and the embedding dictionary's {self.embedding_stopword_count} most "
                     "frequent tokens")
        return rule

    def results(self, hypotheses: Sequence[Sequence[str]],
                sources: Sequence[Sequence[str]] | None,
                references: Sequence[Sequence[str]] | None,
                target_lang: str = "en") -> list[SentenceRedundancy]:
        """Cr and Dr of every tokenised output (:func:`score_sentences`) under these settings."""
        return score_sentences(hypotheses, sources, references, synonyms=self.synonyms,
                               stopwords=self.stopword_set(references or (), target_lang))


@functools.lru_cache(maxsize=8)
def _given_stopwords(settings: RedundancySettings) -> frozenset[str]:
    """The stopwords that do not depend on the references: a file's or a corpus's (read once
    per process: a training corpus can be large), and the embedding dictionary's."""
    words: set[str] = set()
    if settings.stopwords is not None:
        words |= read_stopwords(settings.stopwords, settings.ignore_case)
    elif settings.stopword_corpus is not None:
        words |= corpus_stopwords(settings.stopword_corpus, int(settings.stopword_count or 0),
                                  "word" if settings.tokenize == "word" else "bpe",
                                  settings.ignore_case)
    if settings.embeddings is not None and settings.embedding_stopword_count:
        table = _cached_embeddings(settings.embeddings, settings.embeddings_dict,
                                   settings.allow_extra_embedding_rows)
        words.update(t.lower() if settings.ignore_case else t
                     for t in table.frequent_tokens(settings.embedding_stopword_count))
    return frozenset(words)


@functools.lru_cache(maxsize=8)
def _cached_synonyms(table: Embeddings, threshold: float, lowercase: bool
                     ) -> EmbeddingSynonyms:
    return EmbeddingSynonyms(table, threshold, lowercase=lowercase)


# --------------------------------------------------------------------------- the metric

def redundant(a: str, b: str, synonyms: Synonyms | None = None) -> bool:
    """R(a, b): identical, or synonyms according to ``synonyms``."""
    return a == b or (synonyms is not None and synonyms(a, b))


def exemption_quota(source: Sequence[str], reference: Sequence[str]) -> dict[str, int]:
    """M~: type -> max(count in source, count in reference) - 1, for quotas above zero.

    Entries are ordered by first appearance in the source, then the reference.
    """
    in_source, in_reference = Counter(source), Counter(reference)
    quota: dict[str, int] = {}
    for token in chain(source, reference):
        if token not in quota:
            quota[token] = max(in_source[token], in_reference[token]) - 1
    return {token: left for token, left in quota.items() if left > 0}


def _use_exemption(token: str, quota: dict[str, int], synonyms: Synonyms | None) -> bool:
    """Use up one unit of M~ for ``token`` (identical entry first), if any is left."""
    if quota.get(token, 0) > 0:
        quota[token] -= 1
        return True
    if synonyms is not None:
        for entry, left in quota.items():
            if left > 0 and synonyms(token, entry):
                quota[entry] -= 1
                return True
    return False


class _Ratios:
    """CRR and DRR from counts; ``None`` where |Y| - 1 is 0 (no ratio is defined)."""

    continuous: int
    discontinuous: int
    denominator: int

    @property
    def crr(self) -> float | None:
        return self.continuous / self.denominator if self.denominator else None

    @property
    def drr(self) -> float | None:
        return self.discontinuous / self.denominator if self.denominator else None


@dataclass(frozen=True)
class SentenceRedundancy(_Ratios):
    """Counts of one output sentence; pairs are (earlier, later) 0-based positions."""

    length: int
    continuous_pairs: tuple[tuple[int, int], ...] = ()
    discontinuous_pairs: tuple[tuple[int, int], ...] = ()
    stopword_exemptions: int = 0
    multiple_exemptions: int = 0

    @property
    def continuous(self) -> int:
        return len(self.continuous_pairs)

    @property
    def discontinuous(self) -> int:
        return len(self.discontinuous_pairs)

    @property
    def denominator(self) -> int:
        """|Y| - 1, or 0 when the sentence has fewer than two tokens."""
        return max(self.length - 1, 0)

    def as_dict(self) -> dict:
        return {"length": self.length, "continuous": self.continuous,
                "discontinuous": self.discontinuous, "denominator": self.denominator,
                "crr": self.crr, "drr": self.drr,
                "exempt_stopword": self.stopword_exemptions,
                "exempt_multiple": self.multiple_exemptions,
                "continuous_pairs": [list(p) for p in self.continuous_pairs],
                "discontinuous_pairs": [list(p) for p in self.discontinuous_pairs]}


def _synonym_types(types: Sequence[str], synonyms: Synonyms | None) -> list[list[int]] | None:
    """For each distinct type of a sentence, the other types that are its synonyms.

    Each pair is decided once per sentence; ``None`` means identity only.
    """
    if synonyms is None:
        return None
    if isinstance(synonyms, EmbeddingSynonyms):
        matrix = synonyms.table(types)
    else:
        matrix = np.array([[synonyms(a, b) for b in types] for a in types],
                          dtype=bool).reshape(len(types), len(types))
    np.fill_diagonal(matrix, False)
    others: list[list[int]] = [[] for _ in types]
    rows, cols = np.nonzero(matrix)
    for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
        others[row].append(col)
    return others


def sentence_redundancy(hypothesis: Sequence[str], source: Sequence[str] = (),
                        reference: Sequence[str] = (), *, synonyms: Synonyms | None = None,
                        stopwords: AbstractSet[str] = frozenset()) -> SentenceRedundancy:
    """Cr and Dr of every token of one output (definitions in the module docstring)."""
    type_ids: dict[str, int] = {}
    ids = [type_ids.setdefault(token, len(type_ids)) for token in hypothesis]
    others = _synonym_types(list(type_ids), synonyms)
    quota: dict[str, int] | None = None  # M~, built when first needed
    latest: dict[int, int] = {}  # type id -> its latest position so far
    continuous: list[tuple[int, int]] = []
    discontinuous: list[tuple[int, int]] = []
    stop_exempt = multiple_exempt = 0
    for i, t in enumerate(ids):
        if i > 0 and (t == ids[i - 1] or (others is not None and ids[i - 1] in others[t])):
            continuous.append((i - 1, i))
        else:
            # y_{i-1} is not redundant with y_i here, so any match lies before i - 1.
            partner = latest.get(t, -1)
            if others is not None:
                for u in others[t]:
                    partner = max(partner, latest.get(u, -1))
            if partner >= 0:
                token = hypothesis[i]
                if token in stopwords:
                    stop_exempt += 1
                else:
                    if quota is None:
                        quota = exemption_quota(source, reference)
                    if _use_exemption(token, quota, synonyms):
                        multiple_exempt += 1
                    else:
                        discontinuous.append((partner, i))
        latest[t] = i
    return SentenceRedundancy(len(hypothesis), tuple(continuous), tuple(discontinuous),
                              stop_exempt, multiple_exempt)


def score_sentences(hypotheses: Sequence[Sequence[str]],
                    sources: Sequence[Sequence[str]] | None = None,
                    references: Sequence[Sequence[str]] | None = None, *,
                    synonyms: Synonyms | None = None,
                    stopwords: AbstractSet[str] = frozenset()) -> list[SentenceRedundancy]:
    """:func:`sentence_redundancy` for every tokenised output, with its source and reference."""
    for name, side in (("sources", sources), ("references", references)):
        if side is not None and len(side) != len(hypotheses):
            raise ValueError(f"{len(hypotheses)} hypotheses but {len(side)} {name}")
    return [sentence_redundancy(hyp, sources[n] if sources is not None else (),
                                references[n] if references is not None else (),
                                synonyms=synonyms, stopwords=stopwords)
            for n, hyp in enumerate(hypotheses)]


@dataclass(frozen=True)
class CorpusRedundancy(_Ratios):
    """Pooled counts of a corpus (pooling rule in the module docstring)."""

    sentences: int
    scored_sentences: int
    tokens: int
    denominator: int
    continuous: int
    discontinuous: int
    stopword_exemptions: int
    multiple_exemptions: int
    crr_macro: float | None
    drr_macro: float | None

    def as_dict(self) -> dict:
        return {"crr": self.crr, "drr": self.drr, "crr_macro": self.crr_macro,
                "drr_macro": self.drr_macro, "continuous": self.continuous,
                "discontinuous": self.discontinuous, "denominator": self.denominator,
                "tokens": self.tokens, "sentences": self.sentences,
                "scored_sentences": self.scored_sentences,
                "exempt_stopword": self.stopword_exemptions,
                "exempt_multiple": self.multiple_exemptions}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def pool(results: Iterable[SentenceRedundancy]) -> CorpusRedundancy:
    """Pool sentence counts: sum of counts over the sum of (|Y| - 1) for |Y| >= 2."""
    results = list(results)
    scored = [r for r in results if r.denominator]
    return CorpusRedundancy(
        sentences=len(results), scored_sentences=len(scored),
        tokens=sum(r.length for r in results),
        denominator=sum(r.denominator for r in results),
        continuous=sum(r.continuous for r in results),
        discontinuous=sum(r.discontinuous for r in results),
        stopword_exemptions=sum(r.stopword_exemptions for r in results),
        multiple_exemptions=sum(r.multiple_exemptions for r in results),
        crr_macro=_mean([r.crr for r in scored]), drr_macro=_mean([r.drr for r in scored]))


STATISTICS_COLUMNS = ["continuous", "discontinuous", "denominator"]
# Score of each measure over summed STATISTICS_COLUMNS; Redu. = CRR + DRR.
MEASURE_COLUMNS = {"crr": (0,), "drr": (1,), "redundancy": (0, 1)}


def sentence_statistics(results: Sequence[SentenceRedundancy]) -> list[list[int]]:
    """One row of :data:`STATISTICS_COLUMNS` per sentence (what a resample sums)."""
    return [[r.continuous, r.discontinuous, r.denominator] for r in results]


def measure_score(measure: str) -> Callable[[Any], float]:
    """The pooled ratio ``measure`` (crr, drr or redundancy) of summed sentence statistics;
    NaN when no sentence has two tokens."""
    columns = MEASURE_COLUMNS[measure]

    def score(totals: Any) -> float:
        return float(sum(totals[c] for c in columns) / totals[2]) if totals[2] else math.nan

    def batch(totals: np.ndarray) -> np.ndarray:
        rows = np.atleast_2d(np.asarray(totals, dtype=np.float64))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(rows[:, 2] != 0, rows[:, list(columns)].sum(axis=1) / rows[:, 2],
                            np.nan)
    score.batch = batch  # type: ignore[attr-defined]
    return score


def bootstrap_record(results: Sequence[SentenceRedundancy], samples: int,
                     seed: int) -> dict:
    """Percentile intervals of CRR, DRR and CRR + DRR from ``samples`` sentence resamples,
    with the per-sentence statistics they were drawn from."""
    stats = sentence_statistics(results)
    # one set of resamples for the three measures (the same seed gave the same draws anyway)
    intervals = (resample.bootstrap_scores(stats, {m: measure_score(m) for m in MEASURE_COLUMNS},
                                           samples=samples, seed=seed) if stats else {})
    found: dict = {}
    for measure in MEASURE_COLUMNS:
        interval = intervals.get(measure)
        found[f"{measure}_ci"] = (None if interval is None or math.isnan(interval.value)
                                  else interval.as_list())
    found["bootstrap"] = {"samples": samples, "seed": seed,
                          "confidence": resample.CONFIDENCE,
                          "method": "percentile, sentence resampling"}
    found["statistics"] = {"columns": STATISTICS_COLUMNS, "rows": stats}
    return found


# --------------------------------------------------------------------------- human agreement

@dataclass(frozen=True)
class Annotation:
    """One human-marked redundant pair (format in the module docstring)."""

    system: str
    sentence: int
    a: int
    b: int
    kind: str
    line: int = 0


def read_annotations(path: str | Path,
                     hypotheses: Mapping[str, Sequence[Sequence[str]]]) -> list[Annotation]:
    """Read and check annotations against the tokenised hypotheses of each system."""
    found: list[Annotation] = []
    seen: dict[tuple, int] = {}
    header_allowed = True
    for number, line in enumerate(iter_lines(path), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if header_allowed and fields[0] == "system":
            header_allowed = False
            continue
        header_allowed = False
        if len(fields) != 5:
            raise InputError(path, f"expected 5 tab-separated fields "
                                   f"(system, sentence, a, b, type), found {len(fields)}", number)
        system, kind = fields[0], fields[4].strip()
        try:
            sentence, a, b = (int(f) for f in fields[1:4])
        except ValueError:
            raise InputError(path, "sentence, a and b must be integers", number) from None
        if system not in hypotheses:
            raise InputError(path, f"unknown system {system!r}; hypotheses were given for "
                                   f"{', '.join(sorted(hypotheses)) or 'none'}", number)
        lines = hypotheses[system]
        if not 0 <= sentence < len(lines):
            raise InputError(path, f"sentence {sentence} out of range: system {system!r} has "
                                   f"{len(lines)} sentences (0-based)", number)
        length = len(lines[sentence])
        if not 0 <= a < b < length:
            raise InputError(path, f"positions {a}, {b} out of range or not a < b: sentence "
                                   f"{sentence} of {system!r} has {length} tokens (0-based)",
                             number)
        if kind not in KINDS:
            raise InputError(path, f"type {kind!r} is not one of {', '.join(KINDS)}", number)
        if (kind == "continuous") != (b == a + 1):
            raise InputError(path, f"{kind} pair {a}, {b}: continuous pairs are adjacent, "
                                   "discontinuous ones are not", number)
        key = (system, sentence, a, b, kind)
        if key in seen:
            raise InputError(path, f"duplicate annotation (first on line {seen[key]})", number)
        seen[key] = number
        found.append(Annotation(system, sentence, a, b, kind, number))
    return found


@dataclass(frozen=True)
class Agreement:
    """Precision, recall and F1 (= 2 matched / (automatic + human)) of automatic items against
    human ones; a ratio with a zero denominator is ``None``."""

    matched: int
    automatic: int
    human: int

    @property
    def precision(self) -> float | None:
        return self.matched / self.automatic if self.automatic else None

    @property
    def recall(self) -> float | None:
        return self.matched / self.human if self.human else None

    @property
    def f1(self) -> float | None:
        total = self.automatic + self.human
        return 2 * self.matched / total if total else None

    def as_dict(self) -> dict:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "matched": self.matched, "automatic": self.automatic, "human": self.human}


Item = tuple[str, int, int, int]  # (system, sentence, a, b) for pairs


def automatic_pairs(results: Mapping[str, Sequence[SentenceRedundancy]]) -> dict[str, set[Item]]:
    """The metric's pairs by type: (system, sentence, i - 1, i) and (system, sentence, j, i)."""
    pairs: dict[str, set[Item]] = {kind: set() for kind in KINDS}
    for system, sentences in results.items():
        for n, result in enumerate(sentences):
            pairs["continuous"].update((system, n, a, b) for a, b in result.continuous_pairs)
            pairs["discontinuous"].update((system, n, a, b) for a, b in result.discontinuous_pairs)
    return pairs


def human_pairs(annotations: Iterable[Annotation]) -> dict[str, set[Item]]:
    """The annotated pairs by type, keyed like :func:`automatic_pairs`."""
    pairs: dict[str, set[Item]] = {kind: set() for kind in KINDS}
    for note in annotations:
        pairs[note.kind].add((note.system, note.sentence, note.a, note.b))
    return pairs


def redundant_tokens(pairs: Mapping[str, set[Item]]) -> dict[str, set[tuple[str, int, int]]]:
    """The later token of each pair; a token marked continuous is not also discontinuous."""
    continuous = {(s, n, b) for s, n, _, b in pairs["continuous"]}
    discontinuous = {(s, n, b) for s, n, _, b in pairs["discontinuous"]} - continuous
    return {"continuous": continuous, "discontinuous": discontinuous}


def _agree(automatic: set, human: set) -> Agreement:
    return Agreement(len(automatic & human), len(automatic), len(human))


def _ratios(continuous: int, discontinuous: int, denominator: int) -> dict:
    return {"crr": continuous / denominator if denominator else None,
            "drr": discontinuous / denominator if denominator else None,
            "continuous": continuous, "discontinuous": discontinuous, "denominator": denominator}


def agreement(annotations: Sequence[Annotation],
              results: Mapping[str, Sequence[SentenceRedundancy]]) -> dict:
    """Table 4: P/R/F1 per type, on exact pairs and on redundant tokens; Table 9: ratios.

    ``results`` holds the metric's sentence results of every annotated system, one per line of
    its hypothesis file; all those lines count as inspected by the annotators. Human and
    automatic ratios share the pooled denominator, the sum of (|Y| - 1) over the system's lines.
    Each system also gets its own pair and token agreement: items are keyed by system, so the
    counts of a group of systems add up (the paper's Table 4 pools by training data).
    """
    auto, human = automatic_pairs(results), human_pairs(annotations)
    auto_tokens, human_tokens = redundant_tokens(auto), redundant_tokens(human)

    def own(items: Mapping[str, set], system: str) -> dict[str, set]:
        return {kind: {i for i in items[kind] if i[0] == system} for kind in KINDS}

    systems = {}
    for system, sentences in results.items():
        pooled = pool(sentences)
        marked = {kind: sum(1 for s, *_ in human_tokens[kind] if s == system) for kind in KINDS}
        pairs = own(auto, system), own(human, system)
        tokens = own(auto_tokens, system), own(human_tokens, system)
        systems[system] = {
            "human": _ratios(marked["continuous"], marked["discontinuous"], pooled.denominator),
            "automatic": _ratios(pooled.continuous, pooled.discontinuous, pooled.denominator),
            "pairs": {kind: _agree(pairs[0][kind], pairs[1][kind]).as_dict() for kind in KINDS},
            "tokens": {kind: _agree(tokens[0][kind], tokens[1][kind]).as_dict()
                       for kind in KINDS},
        }
    return {
        "pairs": {kind: _agree(auto[kind], human[kind]).as_dict() for kind in KINDS},
        "tokens": {kind: _agree(auto_tokens[kind], human_tokens[kind]).as_dict()
                   for kind in KINDS},
        "systems": systems,
    }


# --------------------------------------------------------------------------- command line

def _add_metric_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--src", help="source file (exemption counts M~)")
    parser.add_argument("--ref", help="reference file (exemption counts M~)")
    parser.add_argument("--embeddings", metavar="E",
                        help="vectors text file, or a fairseq checkpoint with --embeddings-dict; "
                             "without it only identical tokens are redundant")
    parser.add_argument("--embeddings-dict", metavar="D",
                        help="fairseq dict.txt of the checkpoint given as --embeddings")
    parser.add_argument("--allow-extra-embedding-rows", action="store_true",
                        help="accept table rows after the dictionary's (mBART language tags)")
    parser.add_argument("--threshold", type=float, metavar="T",
                        help="cosine similarity above which two tokens are synonyms")
    stop = parser.add_mutually_exclusive_group()
    stop.add_argument("--stopwords", metavar="FILE", help="one stopword a line")
    stop.add_argument("--stopword-corpus", metavar="C",
                      help="take the --stopword-count most frequent tokens of this corpus "
                           "(the training target side, tokenised like --hyp)")
    parser.add_argument("--stopword-count", type=int, metavar="K",
                        help="k of --stopword-corpus (paper: 3 for Chinese, 10 otherwise)")
    parser.add_argument("--embedding-stopword-count", type=int, default=0, metavar="K",
                        help="also take the K most frequent tokens of the embedding dictionary")
    parser.add_argument("--level", choices=LEVELS, default="bpe",
                        help="bpe: tokens as written (default); word: join '@@ ' continuations")
    parser.add_argument("--ignore-case", action="store_true",
                        help="fold all tokens to lower case before comparing")
    parser.add_argument("--output", metavar="FILE", help="also write the JSON here")


def _metric(args: argparse.Namespace) -> _RedundancyMetric:
    """The registered CRR metric with the command's settings (DRR shares them); an
    inconsistent combination of options is the parser's error. This command takes no
    stopwords unless told (a file, a corpus: the paper's are its training data's); the
    registered metrics' own default is the references' most frequent tokens."""
    settings = RedundancySettings(
        tokenize=args.level, ignore_case=args.ignore_case, embeddings=args.embeddings,
        embeddings_dict=args.embeddings_dict, threshold=args.threshold,
        allow_extra_embedding_rows=args.allow_extra_embedding_rows,
        embedding_stopword_count=args.embedding_stopword_count, stopwords=args.stopwords,
        stopword_corpus=args.stopword_corpus, stopword_count=args.stopword_count)
    try:
        settings.check()
    except ValueError as err:
        args.redundancy_parser.error(str(err))
    return Crr.from_settings(settings)


def _settings(args: argparse.Namespace, stopwords: frozenset[str],
              metric: _RedundancyMetric) -> dict:
    return {"level": args.level, "ignore_case": args.ignore_case,
            "embeddings": args.embeddings, "threshold": args.threshold,
            "stopwords": len(stopwords), "source": args.src, "reference": args.ref,
            "signature": metric.signature()}


def _report(args: argparse.Namespace, report: dict) -> None:
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if args.output:
        with atomic_write(args.output) as out:
            out.write(text + "\n")
    print(text)


def _score_command(args: argparse.Namespace) -> int:
    metric = _metric(args)
    hyps, srcs, refs = read_parallel_tokenized([args.hyp, args.src, args.ref], args.level,
                                               args.ignore_case)
    results = metric.results(hyps, srcs, refs)
    if args.per_sentence:
        with atomic_write(args.per_sentence) as out:
            for n, result in enumerate(results):
                out.write(json.dumps({"sentence": n, **result.as_dict()}) + "\n")
    report = {**pool(results).as_dict(),
              "settings": _settings(args, metric.settings.stopword_set(), metric)}
    if args.samples:
        report.update(bootstrap_record(results, args.samples, args.seed))
    _report(args, report)
    return 0


def _agreement_command(args: argparse.Namespace) -> int:
    metric = _metric(args)
    systems = dict(args.hyp)
    if len(systems) != len(args.hyp):
        args.redundancy_parser.error("each system may be given only once")
    tokens: dict[str, list[list[str]]] = {}
    results: dict[str, list[SentenceRedundancy]] = {}
    for system, path in systems.items():
        hyps, srcs, refs = read_parallel_tokenized([path, args.src, args.ref], args.level,
                                                   args.ignore_case)
        tokens[system] = hyps
        results[system] = metric.results(hyps, srcs, refs)
    annotations = read_annotations(args.annotations, tokens)
    _report(args, {**agreement(annotations, results),
                   "settings": _settings(args, metric.settings.stopword_set(), metric)})
    return 0


def register_cli(tree) -> None:
    score = tree.add("score redundancy",
                     "Continuous and discontinuous redundancy ratios (CRR, DRR) as JSON",
                     _score_command)
    score.add_argument("--hyp", required=True, help="system output, one sentence a line")
    _add_metric_options(score)
    score.add_argument("--per-sentence", metavar="FILE",
                       help="also write each sentence's counts and pairs as JSON lines")
    score.add_argument("--samples", type=non_negative_int, default=0, metavar="N",
                       help="also 95%% intervals from N sentence resamples, and the "
                            "per-sentence counts (0: neither)")
    score.add_argument("--seed", type=positive_int, default=resample.DEFAULT_SEED,
                       help="seed of the resampling")
    score.set_defaults(redundancy_parser=score)

    agree = tree.add("score redundancy-agreement",
                     "Agreement of CRR/DRR with human redundancy annotations (P/R/F1, ratios)",
                     _agreement_command)
    agree.add_argument("--annotations", required=True,
                       help="TSV: system, sentence, a, b, type (see "
                            "phenomt.core.metrics.redundancy)")
    agree.add_argument("--hyp", required=True, action="append", type=named_file,
                       metavar="SYSTEM=FILE", help="an annotated system's output (repeatable)")
    _add_metric_options(agree)
    agree.set_defaults(redundancy_parser=agree)


# --------------------------------------------------------------------------- registered metrics

class _RedundancyMetric(Metric):
    """CRR or DRR over raw text lines, as the registry's metrics: the paper's definition with
    every setting of :class:`RedundancySettings` (synonyms from embeddings, stopwords, M~).

    ``tokenize``: ``moses`` (sacremoses by language, jieba for Chinese, as the given systems
    are scored), ``bpe`` (tokens as written) or ``word`` (BPE merged). Stopwords: a file, the
    ``stopword_count`` most frequent tokens of ``stopword_corpus``, else of the references
    passed to :meth:`statistics` (the paper's k by target language by default; so give the
    whole test set's references and sum subsets' rows afterwards when a subset is scored).
    """

    needs_source = True
    columns = tuple(STATISTICS_COLUMNS)
    higher_is_better = False
    measure: str

    def __init__(self, target_lang: str = "en", source_lang: str = "de",
                 tokenize: str = "moses", stopword_count: int | None = None,
                 stopwords: str | None = None, stopword_corpus: str | None = None,
                 embeddings: str | None = None, embeddings_dict: str | None = None,
                 threshold: float | None = None, embedding_stopword_count: int = 0,
                 ignore_case: bool = False) -> None:
        self.target_lang, self.source_lang = target_lang, source_lang
        self.settings = RedundancySettings(
            tokenize=tokenize, ignore_case=ignore_case, embeddings=embeddings,
            embeddings_dict=embeddings_dict, threshold=threshold,
            embedding_stopword_count=embedding_stopword_count, stopwords=stopwords,
            stopword_corpus=stopword_corpus, stopword_count=stopword_count,
            reference_stopwords=True)
        self.settings.check()

    @classmethod
    def from_settings(cls, settings: RedundancySettings, target_lang: str = "en",
                      source_lang: str = "de") -> _RedundancyMetric:
        """The metric with ``settings`` as they are (a command's own stopword default)."""
        settings.check()
        metric = cls(target_lang, source_lang)
        metric.settings = settings
        return metric

    @property
    def tokenize(self) -> str:
        return self.settings.tokenize

    @property
    def stopword_count(self) -> int:
        k = self.settings.stopword_count
        return default_stopword_count(self.target_lang) if k is None else k

    @classmethod
    def choices(cls) -> dict[str, list[str]]:
        return {"tokenize": list(TOKENIZATIONS)}

    def signature(self) -> str:
        settings = self.settings
        if settings.stopwords is not None:
            stop = f"file:{Path(settings.stopwords).name}"
        elif settings.stopword_corpus is not None:
            stop = f"corpus:{Path(settings.stopword_corpus).name}:{settings.stopword_count}"
        elif settings.reference_stopwords:
            stop = str(self.stopword_count)
        else:
            stop = "none"
        if settings.embeddings is not None and settings.embedding_stopword_count:
            stop += f"+emb:{settings.embedding_stopword_count}"
        synonyms = ("identical" if settings.embeddings is None else
                    f"cos>{settings.threshold}:{Path(settings.embeddings).name}")
        case = "|case:ignored" if settings.ignore_case else ""
        return (f"tok:{settings.tokenize}{case}|langs:{self.source_lang}-{self.target_lang}|"
                f"stopwords:{stop}|synonyms:{synonyms}")

    def description(self) -> dict[str, Any]:
        """The settings as a record's ``settings`` (what a table's note reports)."""
        settings = self.settings
        return {"tokenize": settings.tokenize, "case": "ignored" if settings.ignore_case
                else "kept", "redundant": ("identical tokens" if settings.embeddings is None
                                           else f"identical tokens or embedding cosine > "
                                                f"{settings.threshold}"),
                "embeddings": settings.embeddings, "threshold": settings.threshold,
                "stopword_rule": settings.stopword_rule(self.target_lang),
                "stopword_count": self.stopword_count,
                "exemptions": "stopwords; repeats up to max(source count, reference count) - 1 "
                              "per line",
                "pooling": "sum of counts over sum of (|Y| - 1)",
                "signature": self.signature()}

    def results(self, hypotheses: Sequence[Sequence[str]], sources: Sequence[Sequence[str]],
                references: Sequence[Sequence[str]]) -> list[SentenceRedundancy]:
        """Cr and Dr of every output, from tokens (:meth:`RedundancySettings.tokens`)."""
        return self.settings.results(hypotheses, sources, references, self.target_lang)

    def statistics(self, hypotheses: Sequence[str], references: Sequence[str],
                   sources: Sequence[str] | None = None) -> np.ndarray:
        self._check(hypotheses, references, sources)
        tokens = self.settings.tokens
        results = self.results(tokens(hypotheses, self.target_lang),
                               tokens(sources or [], self.source_lang),
                               tokens(references, self.target_lang))
        return np.asarray(sentence_statistics(results), dtype=np.float64).reshape(-1, 3)

    def score(self, totals: np.ndarray) -> float:
        return 100 * measure_score(self.measure)(totals)

    def scores(self, totals: np.ndarray) -> np.ndarray:
        return 100 * measure_score(self.measure).batch(totals)  # type: ignore[attr-defined]


@register
class Crr(_RedundancyMetric):
    """Continuous redundancy ratio (Wang et al.), percent."""

    name = "crr"
    label = "CRR (%)"
    measure = "crr"


@register
class Drr(_RedundancyMetric):
    """Discontinuous redundancy ratio (Wang et al.), percent."""

    name = "drr"
    label = "DRR (%)"
    measure = "drr"
