"""Evaluation of the long-distance-dependency (LDD) challenge sets (Choshen & Abend, CoNLL 2019).

The sets are the files written by :mod:`phenomt.challenge`; a set is named by a :class:`SetKey`
``corpus/direction/phenomenon/bin``, for example ``news/de-en/particle/ge1``. ``direction`` is
``<source>-<target>``; ``bin`` is a :class:`~phenomt.challenge.DistanceBin` label (``all``,
``ge<k>``, ``eq<k>``); reordering sets use ``reorder`` with the alignment threshold as their bin
(``ge5``); the full corpus, the baseline of every set, is ``<corpus>/<direction>/baseline/all``.

**Hypotheses of a set** are the full-corpus hypotheses at the set's ``.ids`` (1-based line
numbers): translating the full corpus once and selecting (:func:`select_lines`) gives the lines
a translation of the set would give, since every sentence is translated on its own (up to the
decoder's batching, which can change floating-point ties).

**Scores** (``phenomt ldd score``, :func:`score_set`) are JSON objects, one per set and model::

    {"schema": "phenomt.ldd.score/1", "model": "...", "corpus": "news", "direction": "de-en",
     "phenomenon": "particle", "bin": "ge1", "sentences": 232, "corpus_sentences": 3000,
     "bleu": {<phenomt.bleu.corpus_bleu result, with its "signature">},
     "scoring": "sacrebleu" | "multi-bleu",
     "ribes": null | {"score": 0.7712, "alpha": 0.25, "beta": 0.1, "tokens": "...",
                      "implementation": "nltk 3.x corpus_ribes"}}

The tables are built from a list of such files: Table 2/3 (sizes) from their ``sentences``,
Table 4 (BLEU) by pairing each set with the baseline record of the same model, corpus and
direction, Table 5 (BLEU by minimum distance) from the ``all``/``ge1``/``ge2``/``ge3`` records
of a phenomenon, Table 6 (RIBES) from the reordering and baseline records.

**BLEU** is sacreBLEU through :func:`phenomt.bleu.corpus_bleu`; ``tokenize="none"`` on
Moses-tokenized hypotheses and references is the Moses ``multi-bleu.perl`` setting the paper
used ("multi-bleu" in the tables; sacreBLEU's default ``exp`` smoothing still applies, which
differs from multi-bleu only when some n-gram order has no match at all).

**RIBES** is nltk's ``corpus_ribes`` with α = 0.25 and β = 0.10 pinned (:data:`RIBES_ALPHA`,
:data:`RIBES_BETA`): the mean over sentences of ``NKT · P1^α · BP^β``. It needs tokens: each
line is lower-cased when asked, then split by sacreBLEU's tokenizer of the same name as the BLEU
one (``13a`` by default; ``none`` = split on whitespace, for Moses-tokenized text), or,
when pre-tokenized files are given, split on whitespace.

**Length-matched control** (``phenomt ldd control``, :func:`length_matched_control`). Each of
``draws`` (100) random corpora matches every set sentence with a random full-corpus sentence
whose length, in whitespace tokens of the *tokenized source*, is within ±``tolerance`` (1) of
it. Within one random corpus sentences are drawn without replacement; only when every
candidate of a length window is used up is one drawn again (counted as ``reused``). A set
sentence with no candidate at all within the window (possible only with ``exclude_set``) takes
the nearest lengths that have candidates (counted as ``widened``). By default the pool is the
whole corpus, the set's own sentences included, so a random corpus is a plain length-matched
sample of the corpus that the set is compared with; ``exclude_set`` draws from the other
sentences only. (The paper's wording on replacement and on the set's own sentences could not be
consulted; these choices are ours.) Every random corpus is scored with the same BLEU as the
set, from sentence-level sufficient statistics computed once. The set's place in the
distribution: ``rank`` = 1 + the number of random corpora scoring strictly lower (1 = below
all of them, out of ``draws + 1``);
``percentile`` = the percentage of random corpora scoring lower, ties counted half;
``p_lower`` = (1 + number scoring lower or equal) / (draws + 1), the Monte-Carlo p-value of
"the set scores lower than length-matched random text". The draws depend only on the seed, the
lengths and the ids. A control record is::

    {"schema": "phenomt.ldd.control/1", <model, corpus, direction, phenomenon, bin,
     sentences, corpus_sentences as above>, "bleu": 21.31, "signature": "...",
     "control": {"draws": 100, "seed": 1, "tolerance": 1, "exclude_set": false,
                 "length": "...", "bleu": [...], "mean": ..., "std": ..., "min": ...,
                 "max": ..., "rank": 3, "of": 101, "percentile": 2.0, "p_lower": 0.0297,
                 "reused": 0, "widened": 0}}

**Manual-validation sheet** (``phenomt ldd sheet export|import``): a TSV (tab-separated, with
csv quoting) of :data:`SHEET_COLUMNS`, N random sentences of every set, sampled with a seed
per set, with an empty ``correct`` column to fill with y/n, yes/no or 1/0. Importing reports
the precision (correct / annotated) per direction and phenomenon.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import random
import re
import statistics
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sacrebleu.metrics import BLEU

from phenomt.bleu import corpus_bleu
from phenomt.challenge import (
    LEXICAL_PHENOMENA,
    PARTICLE,
    PREPOSITION_STRANDING,
    REFLEXIVE,
    REORDER,
    DistanceBin,
    phenomenon_pairs,
    word_distance,
)
from phenomt.conllu import read_conllu
from phenomt.io import InputError, atomic_write, count_lines, read_lines, write_json, write_lines
from phenomt.tables import bleu_table as model_bleu_table
from phenomt.tables import format_number as _fmt
from phenomt.tables import load_json, write_table

if TYPE_CHECKING:
    from phenomt.cli import CommandTree

BASELINE = "baseline"
PHENOMENA: tuple[str, ...] = (*LEXICAL_PHENOMENA, REORDER, BASELINE)
SCORE_SCHEMA = "phenomt.ldd.score/1"
CONTROL_SCHEMA = "phenomt.ldd.control/1"

RIBES_ALPHA = 0.25
RIBES_BETA = 0.10
DEFAULT_DRAWS = 100
DEFAULT_TOLERANCE = 1
DEFAULT_SEED = 1
DISTANCE_BINS: tuple[str, ...] = ("all", "ge1", "ge2", "ge3")

SHEET_COLUMNS: tuple[str, ...] = ("set", "corpus", "direction", "phenomenon", "bin",
                                  "sentence_id", "marked_source", "reference", "head",
                                  "dependent", "distance", "correct")
SHEET_TRUE = frozenset({"y", "yes", "1"})
SHEET_FALSE = frozenset({"n", "no", "0"})

# --- the paper's numbers ------------------------------------------------------------------------
PAPER = ("Choshen & Abend (CoNLL 2019), 'Automatically Extracting Challenge Sets for Non-local "
         "Phenomena in Neural Machine Translation', arXiv:1909.06814, ACL Anthology K19-1028")

#: Set sizes (sentences) from the paper, keyed by (corpus, direction, phenomenon, bin); a
#: direction of None means the number is not tied to a direction in our source. News is
#: newstest2013. Only the numbers below could be retrieved; every other cell is left empty.
PAPER_SIZES: dict[tuple[str, str | None, str, str], int] = {
    # Table 3, News, German source (De→En), minimum distance ≥1.
    ("news", "de-en", PARTICLE, "ge1"): 232,
    ("news", "de-en", REFLEXIVE, "ge1"): 281,
    # Table 3, News, English source (En→De), minimum distance ≥1.
    ("news", "en-de", PARTICLE, "ge1"): 17,
    ("news", "en-de", REFLEXIVE, "ge1"): 11,
    ("news", "en-de", PREPOSITION_STRANDING, "ge1"): 8,
    # Table 2, News, sentence pairs with an aligned pair at |i - j| >= 5.
    ("news", None, REORDER, "ge5"): 306,
}

#: Precision of the extracted instances in the paper's manual validation, in percent (a range).
PAPER_PRECISION: tuple[int, int] = (85, 87)

_NOT_FOUND = ("The paper's {what} numbers are not shown: they could not be retrieved from the "
              "sources consulted (arXiv 1909.06814, ACL Anthology K19-1028).")

_BIN = re.compile(r"all|ge([0-9]+)|eq([0-9]+)")
_DIRECTION = re.compile(r"[a-z]{2,3}-[a-z]{2,3}")


# --- set names ----------------------------------------------------------------------------------

def parse_bin(label: str) -> DistanceBin:
    """The :class:`DistanceBin` of a canonical label: ``all``, ``ge<k>`` (k ≥ 1), ``eq<k>``."""
    match = _BIN.fullmatch(label)
    if match is None:
        raise ValueError(f"bad distance bin {label!r}: expected all, ge<k> or eq<k>")
    if match[2] is not None:
        return DistanceBin(int(match[2]), exact=True)
    distance_bin = DistanceBin(int(match[1] or 0))
    if distance_bin.label != label:
        raise ValueError(f"bad distance bin {label!r}: write {distance_bin.label!r}")
    return distance_bin


def _bin_order(label: str) -> tuple[int, int]:
    distance_bin = parse_bin(label)
    return (int(distance_bin.exact), distance_bin.distance)


def bin_title(label: str) -> str:
    """How a bin is shown in tables: ``All``, ``≥k``, ``=k``."""
    distance_bin = parse_bin(label)
    if label == "all":
        return "All"
    return f"{'=' if distance_bin.exact else '≥'}{distance_bin.distance}"


@dataclass(frozen=True, slots=True, order=True)
class SetKey:
    """The name of a challenge set (or, with phenomenon ``baseline``, of the full corpus)."""

    corpus: str
    direction: str
    phenomenon: str
    bin: str

    def __post_init__(self) -> None:
        if not self.corpus or "/" in self.corpus or "=" in self.corpus:
            raise ValueError(f"bad corpus name {self.corpus!r}")
        if _DIRECTION.fullmatch(self.direction) is None:
            raise ValueError(f"bad direction {self.direction!r}: expected e.g. de-en")
        if self.phenomenon not in PHENOMENA:
            raise ValueError(f"unknown phenomenon {self.phenomenon!r}; "
                             f"choose from {', '.join(PHENOMENA)}")
        parse_bin(self.bin)
        if self.phenomenon == BASELINE and self.bin != "all":
            raise ValueError("the baseline (full corpus) has bin 'all'")

    @classmethod
    def parse(cls, text: str) -> SetKey:
        """Parse ``corpus/direction/phenomenon/bin``."""
        parts = text.split("/")
        if len(parts) != 4:
            raise ValueError(f"bad set name {text!r}: expected corpus/direction/phenomenon/bin")
        return cls(*parts)

    def __str__(self) -> str:
        return f"{self.corpus}/{self.direction}/{self.phenomenon}/{self.bin}"

    @property
    def source_lang(self) -> str:
        return self.direction.split("-")[0]

    def meta(self) -> dict[str, str]:
        """The key as the fields stored in score and control records."""
        return {"corpus": self.corpus, "direction": self.direction,
                "phenomenon": self.phenomenon, "bin": self.bin}


def parse_assignment(text: str) -> tuple[SetKey, str]:
    """Parse ``corpus/direction/phenomenon/bin=PATH``."""
    name, sep, path = text.partition("=")
    if not sep or not path:
        raise ValueError(f"bad set assignment {text!r}: expected corpus/direction/phenomenon/"
                         f"bin=PATH")
    return SetKey.parse(name), path


def _record_key(record: Mapping[str, Any]) -> SetKey:
    return SetKey(record["corpus"], record["direction"], record["phenomenon"], record["bin"])


# --- selecting a set's lines --------------------------------------------------------------------

def read_ids(path: str | os.PathLike[str]) -> list[int]:
    """The 1-based sentence ids of a ``.ids`` file: positive, strictly ascending integers."""
    ids: list[int] = []
    for number, line in enumerate(read_lines(path), start=1):
        text = line.strip()
        if not text.isdigit() or int(text) < 1:
            raise InputError(path, f"expected a positive sentence id, got {line!r}", number)
        if ids and int(text) <= ids[-1]:
            raise InputError(path, f"ids must be strictly ascending: {text} after {ids[-1]}",
                             number)
        ids.append(int(text))
    return ids


def select_lines(lines: Sequence[str], ids: Iterable[int],
                 ids_path: str | os.PathLike[str] = "<ids>",
                 lines_path: str | os.PathLike[str] = "<lines>") -> list[str]:
    """The lines at the 1-based ``ids``; an id outside the lines is an :class:`InputError`."""
    selected = []
    for number, sentence_id in enumerate(ids, start=1):
        if not 1 <= sentence_id <= len(lines):
            raise InputError(ids_path, f"sentence id {sentence_id} is outside {lines_path}, "
                                       f"which has {len(lines)} lines", number)
        selected.append(lines[sentence_id - 1])
    return selected


def select_file(full_path: str | os.PathLike[str], ids_path: str | os.PathLike[str]
                ) -> list[str]:
    """The lines of a full-corpus file at the sentence ids of a ``.ids`` file."""
    return select_lines(read_lines(full_path), read_ids(ids_path), ids_path, full_path)


def check_selection(selected: Sequence[str], expected_path: str | os.PathLike[str]) -> None:
    """Fail unless ``selected`` equals the lines of ``expected_path`` (e.g. a set's ``.ref``).

    Guards against pairing a set with the wrong full corpus.
    """
    expected = read_lines(expected_path)
    if len(expected) != len(selected):
        raise InputError(expected_path, f"has {len(expected)} lines but the ids select "
                                        f"{len(selected)}")
    for number, (got, want) in enumerate(zip(selected, expected, strict=True), start=1):
        if got != want:
            raise InputError(expected_path, f"differs from the selected full-corpus line: "
                                            f"{want!r} against {got!r}", number)


def _check_parallel(paths: Sequence[str | os.PathLike[str]], columns: Sequence[Sequence[str]]
                    ) -> None:
    if len({len(column) for column in columns}) > 1:
        detail = ", ".join(f"{p}: {len(c)} lines" for p, c in zip(paths, columns, strict=True))
        raise InputError(paths[0], f"parallel files differ in length ({detail})")


# --- BLEU and RIBES ------------------------------------------------------------------------------

def scoring_name(tokenize: str) -> str:
    """``multi-bleu`` for sacreBLEU without tokenization (on Moses-tokenized text), else
    ``sacrebleu``."""
    return "multi-bleu" if tokenize == "none" else "sacrebleu"


def ribes_tokens(lines: Iterable[str], tokenize: str = "13a", lowercase: bool = False
                 ) -> list[list[str]]:
    """Tokens for RIBES: sacreBLEU's tokenizer ``tokenize`` (``none``: whitespace) per line."""
    tokenizer = BLEU(tokenize=tokenize).tokenizer
    return [tokenizer((line.lower() if lowercase else line).rstrip()).split() for line in lines]


def corpus_ribes_score(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[str]]
                       ) -> float:
    """nltk's corpus RIBES with α and β pinned; one tokenized reference per hypothesis."""
    from nltk.translate.ribes_score import corpus_ribes  # slow to import: only when used

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    return float(corpus_ribes([[list(ref)] for ref in references],
                              [list(hyp) for hyp in hypotheses],
                              alpha=RIBES_ALPHA, beta=RIBES_BETA))


def ribes_record(hyp_tokens: Sequence[Sequence[str]], ref_tokens: Sequence[Sequence[str]],
                 tokens: str) -> dict[str, Any]:
    """RIBES with its parameters; ``tokens`` says how the text was tokenized."""
    import nltk

    return {"score": round(corpus_ribes_score(hyp_tokens, ref_tokens), 4),
            "alpha": RIBES_ALPHA, "beta": RIBES_BETA, "tokens": tokens,
            "implementation": f"nltk {nltk.__version__} corpus_ribes"}


def score_set(key: SetKey, model: str, hypotheses: Sequence[str], references: Sequence[str],
              corpus_sentences: int | None = None, tokenize: str = "13a",
              lowercase: bool = False, ribes: bool | None = None,
              ribes_hypotheses: Sequence[str] | None = None,
              ribes_references: Sequence[str] | None = None) -> dict[str, Any]:
    """The score record of one set (or baseline) for one model.

    ``ribes`` defaults to on for reordering sets and the baseline (Table 6). RIBES tokens come
    from ``ribes_hypotheses``/``ribes_references`` split on whitespace when given (pre-tokenized
    lines), else from the BLEU text through sacreBLEU's ``tokenize`` tokenizer. An empty set
    (extraction writes empty files) gets ``"bleu": None`` and no RIBES.
    """
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    if ribes is None:
        ribes = key.phenomenon in (REORDER, BASELINE)
    record: dict[str, Any] = {"schema": SCORE_SCHEMA, "model": model, **key.meta(),
                              "sentences": len(hypotheses),
                              "corpus_sentences": corpus_sentences,
                              "bleu": corpus_bleu(hypotheses, references, tokenize, lowercase)
                              if hypotheses else None,
                              "scoring": scoring_name(tokenize), "ribes": None}
    if ribes and hypotheses:
        if (ribes_hypotheses is None) != (ribes_references is None):
            raise ValueError("give both pre-tokenized RIBES hypotheses and references, or none")
        if ribes_hypotheses is not None and ribes_references is not None:
            hyp_tokens = [(h.lower() if lowercase else h).split() for h in ribes_hypotheses]
            ref_tokens = [(r.lower() if lowercase else r).split() for r in ribes_references]
            tokens = "pre-tokenized files split on whitespace"
        else:
            hyp_tokens = ribes_tokens(hypotheses, tokenize, lowercase)
            ref_tokens = ribes_tokens(references, tokenize, lowercase)
            tokens = ("BLEU input split on whitespace" if tokenize == "none"
                      else f"BLEU input tokenized by sacreBLEU's {tokenize} tokenizer")
        if lowercase:
            tokens += ", lower-cased"
        record["ribes"] = ribes_record(hyp_tokens, ref_tokens, tokens)
    return record


# --- length-matched control ---------------------------------------------------------------------

def bleu_statistics(hypotheses: Sequence[str], references: Sequence[str], tokenize: str = "13a",
                    lowercase: bool = False) -> np.ndarray:
    """Sentence-level BLEU sufficient statistics, one row per sentence:
    ``hyp_len, ref_len, correct_1..4, total_1..4`` (sacreBLEU's counts).

    The sum of the rows of any subset gives that subset's corpus BLEU exactly
    (:func:`bleu_from_statistics`).
    """
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    # effective_order only changes sentence scores, not the counts, and silences sacreBLEU's
    # advice about sentence-level BLEU.
    metric = BLEU(tokenize=tokenize, lowercase=lowercase, effective_order=True)
    order = metric.max_ngram_order
    rows = np.zeros((len(hypotheses), 2 + 2 * order), dtype=np.int64)
    for row, (hyp, ref) in enumerate(zip(hypotheses, references, strict=True)):
        score = metric.sentence_score(hyp, [ref])
        rows[row] = [score.sys_len, score.ref_len, *score.counts, *score.totals]
    return rows


def bleu_from_statistics(totals: np.ndarray, tokenize: str = "13a", lowercase: bool = False
                         ) -> float:
    """Corpus BLEU (unrounded) of summed statistics, smoothed as :func:`corpus_bleu` does."""
    metric = BLEU(tokenize=tokenize, lowercase=lowercase)
    order = (len(totals) - 2) // 2
    return BLEU.compute_bleu(correct=[int(x) for x in totals[2:2 + order]],
                             total=[int(x) for x in totals[2 + order:]],
                             sys_len=int(totals[0]), ref_len=int(totals[1]),
                             smooth_method=metric.smooth_method,
                             smooth_value=metric.smooth_value,
                             max_ngram_order=order).score


@dataclass(frozen=True)
class ControlDraws:
    """The random corpora of a control: 0-based full-corpus indices, one tuple per corpus,
    aligned with the set's sentences; ``reused`` and ``widened`` as in the module notes."""

    corpora: tuple[tuple[int, ...], ...]
    reused: int
    widened: int


def length_matched_draws(lengths: Sequence[int], set_indices: Sequence[int], draws: int,
                         seed: int, tolerance: int = DEFAULT_TOLERANCE,
                         exclude_set: bool = False) -> ControlDraws:
    """Draw ``draws`` random corpora length-matched to the set at 0-based ``set_indices``.

    Sentence *k* of a random corpus has ``|lengths[c] - lengths[set_indices[k]]| <= tolerance``
    unless no sentence of the pool is that close (then the nearest lengths are used).
    """
    if draws < 1 or tolerance < 0:
        raise ValueError("draws must be positive and the tolerance non-negative")
    excluded = set(set_indices) if exclude_set else set()
    by_length: dict[int, list[int]] = {}
    for index, length in enumerate(lengths):
        if index not in excluded:
            by_length.setdefault(length, []).append(index)
    if not by_length:
        raise ValueError("no sentence is left to draw from")
    window: dict[int, tuple[list[int], bool]] = {}
    for index in set_indices:
        if lengths[index] not in window:
            window[lengths[index]] = _length_window(by_length, lengths[index], tolerance)
    widened = sum(1 for index in set_indices if window[lengths[index]][1])
    rng = random.Random(seed)
    reused = 0
    corpora = []
    for _ in range(draws):
        order = list(range(len(set_indices)))
        rng.shuffle(order)
        used: set[int] = set()
        chosen = [0] * len(set_indices)
        for position in order:
            candidates = window[lengths[set_indices[position]]][0]
            pick, fresh = _draw_unused(candidates, used, rng)
            reused += not fresh
            used.add(pick)
            chosen[position] = pick
        corpora.append(tuple(chosen))
    return ControlDraws(tuple(corpora), reused, widened)


def _length_window(by_length: Mapping[int, list[int]], length: int, tolerance: int
                   ) -> tuple[list[int], bool]:
    """Candidates within ``length ± tolerance``, else within the narrowest wider window that
    has any; the flag says whether the window had to be widened."""
    width = tolerance
    while True:
        candidates = [c for x in range(length - width, length + width + 1)
                      for c in by_length.get(x, ())]
        if candidates:
            return candidates, width > tolerance
        width += 1


def _draw_unused(candidates: Sequence[int], used: set[int], rng: random.Random
                 ) -> tuple[int, bool]:
    """A uniform draw among the unused candidates, or among all when every one is used."""
    # A few blind tries are cheap and usually succeed; accepting the first unused one keeps the
    # draw uniform over the unused candidates.
    for _ in range(8):
        pick = candidates[rng.randrange(len(candidates))]
        if pick not in used:
            return pick, True
    free = [c for c in candidates if c not in used]
    if free:
        return free[rng.randrange(len(free))], True
    return candidates[rng.randrange(len(candidates))], False


def control_summary(set_bleu: float, control: Sequence[float]) -> dict[str, Any]:
    """Where ``set_bleu`` falls among the control BLEU scores (see the module notes)."""
    if not control:
        raise ValueError("no control scores")
    below = sum(1 for score in control if score < set_bleu)
    ties = sum(1 for score in control if score == set_bleu)
    draws = len(control)
    return {"mean": round(statistics.fmean(control), 2),
            "std": round(statistics.stdev(control), 2) if draws > 1 else None,
            "min": round(min(control), 2), "max": round(max(control), 2),
            "rank": below + 1, "of": draws + 1,
            "percentile": round(100 * (below + ties / 2) / draws, 2),
            "p_lower": round((1 + below + ties) / (draws + 1), 4)}


def length_matched_control(statistics_rows: np.ndarray, lengths: Sequence[int],
                           ids: Sequence[int], draws: int = DEFAULT_DRAWS,
                           seed: int = DEFAULT_SEED, tolerance: int = DEFAULT_TOLERANCE,
                           exclude_set: bool = False, tokenize: str = "13a",
                           lowercase: bool = False) -> dict[str, Any]:
    """The set's BLEU and its length-matched control distribution.

    ``statistics_rows`` are :func:`bleu_statistics` of the full corpus (computed once and
    shared by all sets), ``lengths`` the tokenized-source lengths, ``ids`` the set's 1-based ids.
    """
    if len(statistics_rows) != len(lengths):
        raise ValueError(f"{len(statistics_rows)} statistics rows but {len(lengths)} lengths")
    if not ids:
        raise ValueError("the set is empty: there is nothing to compare")
    indices = [i - 1 for i in ids]
    if min(indices) < 0 or max(indices) >= len(lengths):
        raise ValueError(f"sentence ids must lie in 1..{len(lengths)}")
    set_bleu = bleu_from_statistics(statistics_rows[indices].sum(axis=0), tokenize, lowercase)
    drawn = length_matched_draws(lengths, indices, draws, seed, tolerance, exclude_set)
    scores = [bleu_from_statistics(statistics_rows[list(corpus)].sum(axis=0), tokenize,
                                   lowercase) for corpus in drawn.corpora]
    return {"bleu": round(set_bleu, 2),
            "control": {"draws": draws, "seed": seed, "tolerance": tolerance,
                        "exclude_set": exclude_set,
                        "length": "whitespace tokens of the tokenized source",
                        "bleu": [round(s, 2) for s in scores],
                        **control_summary(set_bleu, scores),
                        "reused": drawn.reused, "widened": drawn.widened}}


def control_record(key: SetKey, model: str, hypotheses: Sequence[str],
                   references: Sequence[str], tokenized_sources: Sequence[str],
                   ids: Sequence[int], draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED,
                   tolerance: int = DEFAULT_TOLERANCE, exclude_set: bool = False,
                   tokenize: str = "13a", lowercase: bool = False) -> dict[str, Any]:
    """The control record of one set: full-corpus hypotheses, references and tokenized sources,
    and the set's 1-based ids. An empty set gets ``"bleu"``, ``"signature"`` and ``"control"``
    None."""
    if not len(hypotheses) == len(references) == len(tokenized_sources):
        raise ValueError("hypotheses, references and sources must have one line per sentence")
    record = {"schema": CONTROL_SCHEMA, "model": model, **key.meta(), "sentences": len(ids),
              "corpus_sentences": len(hypotheses), "scoring": scoring_name(tokenize)}
    if not ids:
        return {**record, "bleu": None, "signature": None, "control": None}
    rows = bleu_statistics(hypotheses, references, tokenize, lowercase)
    lengths = [len(line.split()) for line in tokenized_sources]
    result = length_matched_control(rows, lengths, ids, draws, seed, tolerance, exclude_set,
                                     tokenize, lowercase)
    # Scored once more the ordinary way for the signature; the BLEU agrees with the statistics.
    direct = corpus_bleu(select_lines(hypotheses, ids), select_lines(references, ids),
                         tokenize, lowercase)
    return {**record, "signature": direct["signature"], **result}


# --- tables --------------------------------------------------------------------------------------

def load_records(paths: Iterable[str | os.PathLike[str]], schema: str) -> list[dict[str, Any]]:
    """Read score or control records, checking their schema and set name."""
    records = []
    for path in paths:
        record = load_json(path)
        if not isinstance(record, dict) or record.get("schema") != schema:
            raise InputError(path, f"not a {schema} record")
        try:
            _record_key(record)
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(path, f"bad set name in record: {err}") from None
        records.append(record)
    return records


def _phenomenon_order(phenomenon: str) -> int:
    return PHENOMENA.index(phenomenon)


def _frame(rows: Sequence[Mapping[str, Any]], sort_by: Sequence[str] = ()) -> pd.DataFrame:
    """Rows as a table sorted by ``sort_by``; phenomena and bins in their natural order.

    A column with a missing cell keeps its Python values (232, not 232.0, beside a missing
    cell); complete columns get their natural dtype.
    """
    frame = pd.DataFrame(list(rows), dtype=object)
    for column in frame.columns:
        if frame[column].notna().all():
            frame[column] = frame[column].infer_objects()
    if frame.empty or not sort_by:
        return frame

    def key(column: pd.Series) -> pd.Series:
        if column.name == "phenomenon":
            return column.map(_phenomenon_order)
        if column.name == "bin":
            return column.map(_bin_order)
        return column

    return frame.sort_values(list(sort_by), key=key, kind="stable").reset_index(drop=True)


def _scale_notes(records: Sequence[Mapping[str, Any]],
                 model_cards: Sequence[str | os.PathLike[str]] = ()) -> list[str]:
    """What our run is: corpus sizes, models, and the models' own scale where cards are given."""
    corpora = sorted({(r["corpus"], r["direction"], r.get("corpus_sentences"))
                      for r in records if r.get("corpus_sentences") is not None})
    notes = []
    if corpora:
        notes.append("Our run: " + "; ".join(f"{c} {d}: {n} sentences in the full corpus"
                                              for c, d, n in corpora) + ".")
    models = sorted({r["model"] for r in records if r.get("model")})
    if models:
        notes.append(f"Models: {', '.join(f'`{m}`' for m in models)}.")
    # The model cards are described exactly as in the main BLEU table.
    notes.extend(model_bleu_table([], list(model_cards))[1])
    return notes


def _paper_size(key: SetKey) -> int | None:
    found = PAPER_SIZES.get((key.corpus, key.direction, key.phenomenon, key.bin))
    if found is None:
        found = PAPER_SIZES.get((key.corpus, None, key.phenomenon, key.bin))
    return found


def sizes_from_ids(assignments: Mapping[SetKey, str | os.PathLike[str]]) -> dict[SetKey, int]:
    """Sentences per set, read from ``.ids`` files."""
    return {key: len(read_ids(path)) for key, path in assignments.items()}


def sizes_from_records(records: Iterable[Mapping[str, Any]]) -> dict[SetKey, int]:
    """Sentences per set from score records (any model; they must agree). Baselines are left
    out."""
    sizes: dict[SetKey, int] = {}
    for record in records:
        key = _record_key(record)
        if key.phenomenon == BASELINE:
            continue
        if sizes.setdefault(key, record["sentences"]) != record["sentences"]:
            raise ValueError(f"set {key} has {sizes[key]} sentences in one record and "
                             f"{record['sentences']} in another")
    return sizes


def sizes_table(sizes: Mapping[SetKey, int], corpus_sentences: Mapping[tuple[str, str], int]
                | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Table 2/3: sentences per corpus, direction, phenomenon and bin, beside the paper's."""
    rows = [{"corpus": key.corpus, "direction": key.direction, "phenomenon": key.phenomenon,
             "bin": key.bin, "distance": bin_title(key.bin), "sentences": count,
             "paper sentences": _paper_size(key),
             "corpus sentences": (corpus_sentences or {}).get((key.corpus, key.direction))}
            for key, count in sizes.items()]
    frame = _frame(rows, ["corpus", "direction", "phenomenon", "bin"])
    notes = [
        "Distance = words strictly between head and dependent; ≥k sets hold the sentences "
        "with at least one instance at distance ≥ k, =k sets those with one at exactly k. "
        "Reordering sets (bin ≥d) hold the pairs with an aligned pair |i − j| ≥ d.",
        f"Paper numbers: {PAPER}, Table 3 (lexical sets, News = newstest2013, ≥1) and Table 2 "
        f"(reordering, News); '—' where the paper's number for that cell was not available.",
    ]
    if corpus_sentences:
        notes.append("Our run: " + "; ".join(f"{c} {d}: {n} sentences"
                                              for (c, d), n in sorted(corpus_sentences.items()))
                     + ".")
    return frame, notes


def _bleu(record: Mapping[str, Any] | None) -> float | None:
    """A score record's BLEU; ``None`` for an empty set or a missing record."""
    return record["bleu"]["bleu"] if record and record.get("bleu") else None


def _scoring(record: Mapping[str, Any]) -> str:
    return record.get("scoring", "sacrebleu")


def _pairing(record: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """What a set shares with its baseline: model, corpus, direction and BLEU setting."""
    return (record["model"], record["corpus"], record["direction"], _scoring(record))


def _baselines(records: Iterable[Mapping[str, Any]]
               ) -> dict[tuple[str, str, str, str], Mapping[str, Any]]:
    return {_pairing(r): r for r in records if r["phenomenon"] == BASELINE}


def bleu_table(records: Sequence[Mapping[str, Any]],
               model_cards: Sequence[str | os.PathLike[str]] = ()
               ) -> tuple[pd.DataFrame, list[str]]:
    """Table 4: BLEU per set and of its baseline (the full corpus), per model and corpus."""
    baselines = _baselines(records)
    rows = []
    for record in records:
        if record["phenomenon"] == BASELINE:
            continue
        base = baselines.get(_pairing(record))
        bleu, base_bleu = _bleu(record), _bleu(base)
        rows.append({"model": record["model"], "corpus": record["corpus"],
                     "direction": record["direction"], "phenomenon": record["phenomenon"],
                     "bin": record["bin"], "distance": bin_title(record["bin"]),
                     "scoring": _scoring(record), "sentences": record["sentences"],
                     "BLEU": _fmt(bleu), "baseline BLEU": _fmt(base_bleu),
                     "Δ BLEU": None if bleu is None or base_bleu is None
                     else _fmt(bleu - base_bleu)})
    frame = _frame(rows, ["model", "corpus", "direction", "scoring", "phenomenon", "bin"])
    notes = ["Baseline = the full corpus the sets were extracted from, translated by the same "
             "model; Δ = set − baseline."]
    notes += _scoring_notes(records)
    notes += [_NOT_FOUND.format(what="Table 4 (BLEU per set)")]
    return frame, notes + _scale_notes(records, model_cards)


_SCORING_TITLES = {"sacrebleu": "sacreBLEU",
                   "multi-bleu": "multi-bleu style (sacreBLEU, tokenize=none, on "
                                 "Moses-tokenized text)"}


def _scoring_notes(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """One note per BLEU setting used, with its sacreBLEU signature."""
    used = sorted({(_scoring(r), r["bleu"]["signature"]) for r in records if r.get("bleu")})
    return [f"{_SCORING_TITLES.get(scoring, scoring)} signature: `{signature}`"
            for scoring, signature in used]


def distance_correlation(distances: Sequence[float], scores: Sequence[float]
                         ) -> dict[str, Any]:
    """Spearman's ρ between distance and score, with its p-value, or ``None`` and a reason.

    ρ is undefined with fewer than three points or when either side is constant; scipy would
    return NaN there, which is reported as ``None`` with a note instead.
    """
    if len(distances) != len(scores):
        raise ValueError("one score per distance is needed")
    n = len(scores)
    result: dict[str, Any] = {"rho": None, "p": None, "n": n, "note": None}
    if n < 3:
        result["note"] = f"only {n} distance bin{'s' if n != 1 else ''}: ρ not computed"
    elif len(set(scores)) == 1:
        result["note"] = "BLEU is the same at every distance: ρ undefined"
    elif len(set(distances)) == 1:
        result["note"] = "a single distance: ρ undefined"
    else:
        from scipy.stats import spearmanr  # slow to import: only when used

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcome = spearmanr(distances, scores)
        rho, p = float(outcome.statistic), float(outcome.pvalue)
        if math.isnan(rho):
            result["note"] = "ρ undefined"
        else:
            result["rho"] = rho
            result["p"] = None if math.isnan(p) else p
    return result


def distance_table(records: Sequence[Mapping[str, Any]], bins: Sequence[str] = DISTANCE_BINS,
                   model_cards: Sequence[str | os.PathLike[str]] = ()
                   ) -> tuple[pd.DataFrame, list[str]]:
    """Table 5: BLEU by distance bin per model, corpus, direction and lexical phenomenon, with
    Spearman's ρ between BLEU and the bins' distances (All = 0, ≥k = k, =k = k)."""
    for label in bins:
        parse_bin(label)
    groups: dict[tuple[str, str, str, str, str], dict[str, float]] = {}
    for record in records:
        if record["phenomenon"] in (BASELINE, REORDER) or record["bin"] not in bins:
            continue
        group = (*_pairing(record), record["phenomenon"])
        if _bleu(record) is not None:
            groups.setdefault(group, {})[record["bin"]] = _bleu(record)
    rows = []
    for (model, corpus, direction, scoring, phenomenon), by_bin in groups.items():
        present = [label for label in bins if label in by_bin]
        correlation = distance_correlation([parse_bin(b).distance for b in present],
                                           [by_bin[b] for b in present])
        row: dict[str, Any] = {"model": model, "corpus": corpus, "direction": direction,
                               "scoring": scoring, "phenomenon": phenomenon}
        row.update({f"BLEU {bin_title(b)}": _fmt(by_bin.get(b)) for b in bins})
        row.update({"Spearman ρ": _fmt(correlation["rho"], 3),
                    "p": _fmt(correlation["p"], 3), "n": correlation["n"],
                    "note": correlation["note"]})
        rows.append(row)
    frame = _frame(rows, ["model", "corpus", "direction", "scoring", "phenomenon"])
    notes = ["Spearman's ρ (scipy.stats.spearmanr) between each bin's BLEU and its distance "
             "(All = 0, ≥k = k); p is scipy's two-sided p-value, from so few points it is only "
             "indicative."]
    notes += _scoring_notes(r for r in records if r["phenomenon"] not in (BASELINE, REORDER))
    notes += [_NOT_FOUND.format(what="Table 5 (BLEU by distance)")]
    return frame, notes + _scale_notes(records, model_cards)


def ribes_table(records: Sequence[Mapping[str, Any]],
                model_cards: Sequence[str | os.PathLike[str]] = ()
                ) -> tuple[pd.DataFrame, list[str]]:
    """Table 6: RIBES of the reordering sets against their baseline."""
    baselines = _baselines(records)
    rows, described = [], set()
    for record in records:
        if record["phenomenon"] != REORDER:
            continue
        base = baselines.get(_pairing(record))
        score = record["ribes"]["score"] if record.get("ribes") else None
        base_ribes = base["ribes"]["score"] if base and base.get("ribes") else None
        rows.append({"model": record["model"], "corpus": record["corpus"],
                     "direction": record["direction"], "bin": record["bin"],
                     "distance": bin_title(record["bin"]), "scoring": _scoring(record),
                     "sentences": record["sentences"],
                     "RIBES": _fmt(score, 4), "baseline RIBES": _fmt(base_ribes, 4),
                     "Δ RIBES": None if score is None or base_ribes is None
                     else _fmt(score - base_ribes, 4)})
        for item in (record, base):
            if item and item.get("ribes"):
                r = item["ribes"]
                described.add(f"{r['implementation']}, α = {r['alpha']}, β = {r['beta']}, "
                              f"tokens: {r['tokens']}")
    frame = _frame(rows, ["model", "corpus", "direction", "scoring", "bin"])
    notes = ["RIBES = mean over sentences of NKT · P1^α · BP^β (0–1); baseline = the full "
             "corpus; Δ = set − baseline."]
    notes += [f"RIBES: {d}." for d in sorted(described)]
    notes += [_NOT_FOUND.format(what="Table 6 (RIBES)")]
    return frame, notes + _scale_notes(records, model_cards)


def control_table(records: Sequence[Mapping[str, Any]],
                  model_cards: Sequence[str | os.PathLike[str]] = ()
                  ) -> tuple[pd.DataFrame, list[str]]:
    """The length-matched control: each set's BLEU against its random corpora."""
    rows = []
    for record in records:
        control = record["control"] or {}
        rows.append({"model": record["model"], "corpus": record["corpus"],
                     "direction": record["direction"], "phenomenon": record["phenomenon"],
                     "bin": record["bin"], "distance": bin_title(record["bin"]),
                     "scoring": _scoring(record), "sentences": record["sentences"],
                     "BLEU": _fmt(record["bleu"]),
                     "control mean": _fmt(control.get("mean")),
                     "control std": _fmt(control.get("std")),
                     "control min": _fmt(control.get("min")),
                     "control max": _fmt(control.get("max")),
                     "rank": f"{control['rank']}/{control['of']}" if control else None,
                     "percentile": _fmt(control.get("percentile"), 1),
                     "p (lower)": _fmt(control.get("p_lower"), 4),
                     "reused": control.get("reused"), "widened": control.get("widened")})
    frame = _frame(rows, ["model", "corpus", "direction", "phenomenon", "bin"])
    settings = sorted({(r["control"]["draws"], r["control"]["tolerance"], r["control"]["seed"],
                        r["control"]["exclude_set"]) for r in records if r["control"]})
    notes = [f"{draws} random corpora per set, each set sentence matched by a full-corpus "
             f"sentence whose tokenized source length is within ±{tolerance} token"
             f"{'s' if tolerance != 1 else ''}, without replacement inside a corpus; pool: "
             f"{'the corpus without the set' if exclude else 'the whole corpus'}; seed {seed}."
             for draws, tolerance, seed, exclude in settings]
    notes += ["rank = 1 + number of random corpora with lower BLEU, out of draws + 1 (1 = lowest); "
              "percentile = % of random corpora with lower BLEU (ties count half); p (lower) = "
              "(1 + number with BLEU ≤ the set's) / (draws + 1). std is the sample standard "
              "deviation. reused: sentences drawn a second time inside one random corpus "
              "(summed over the corpora) because their length window was used up; widened: "
              "set sentences with no candidate within the tolerance."]
    notes += [f"Signature: `{s}`" for s in sorted({r["signature"] for r in records
                                                   if r["signature"]})]
    notes += [_NOT_FOUND.format(what="length-matched control")]
    return frame, notes + _scale_notes(records, model_cards)


# --- manual-validation sheet ---------------------------------------------------------------------

def _clean(text: str) -> str:
    # One sheet row per sentence: line breaks inside a cell would confuse spreadsheet users.
    return " ".join(text.splitlines())


def sheet_rows(key: SetKey, prefix: str | os.PathLike[str], per_set: int, seed: int
               ) -> list[dict[str, str]]:
    """``per_set`` random sentences of the set at ``prefix`` (all if it has fewer), by id.

    The sample depends only on ``seed`` and the set name. Head and dependent words come from the
    set's ``.conllu`` (lexical sets; several instances are joined by `` | ``); reordering sets
    have none. A missing ``.ref`` leaves the reference empty.
    """
    if per_set < 1:
        raise ValueError("at least one sentence per set is needed")
    base = os.fspath(prefix)
    ids = read_ids(f"{base}.ids")
    marked = read_lines(f"{base}.src_marked")
    _check_parallel([f"{base}.ids", f"{base}.src_marked"], [ids, marked])
    ref_path = Path(f"{base}.ref")
    refs = read_lines(ref_path) if ref_path.is_file() else [""] * len(ids)
    _check_parallel([f"{base}.ids", ref_path], [ids, refs])
    conllu_path = Path(f"{base}.conllu")
    sentences = None
    if key.phenomenon in LEXICAL_PHENOMENA and conllu_path.is_file():
        sentences = read_conllu(conllu_path)
        if len(sentences) != len(ids):
            raise InputError(conllu_path, f"has {len(sentences)} sentences but {base}.ids has "
                                          f"{len(ids)} ids")
    rng = random.Random(f"{seed}/{key}")
    chosen = sorted(rng.sample(range(len(ids)), min(per_set, len(ids))))
    distance_bin = parse_bin(key.bin)
    rows = []
    for position in chosen:
        heads, dependents, distances = [], [], []
        if sentences is not None:
            sentence = sentences[position]
            for head, dependent in phenomenon_pairs(sentence, key.phenomenon):
                distance = word_distance(head, dependent)
                if distance_bin.admits(distance):
                    heads.append(sentence.word(head).form)
                    dependents.append(sentence.word(dependent).form)
                    distances.append(str(distance))
        rows.append({"set": str(key), **key.meta(), "sentence_id": str(ids[position]),
                     "marked_source": _clean(marked[position]), "reference": _clean(refs[position]),
                     "head": " | ".join(heads), "dependent": " | ".join(dependents),
                     "distance": " | ".join(distances), "correct": ""})
    return rows


def export_sheet(sets: Sequence[tuple[SetKey, str | os.PathLike[str]]],
                 output: str | os.PathLike[str], per_set: int, seed: int) -> int:
    """Write the validation sheet of ``sets`` (key and prefix) as TSV; returns the row count."""
    rows = [row for key, prefix in sets for row in sheet_rows(key, prefix, per_set, seed)]
    with atomic_write(output) as out:
        writer = csv.DictWriter(out, fieldnames=SHEET_COLUMNS, delimiter="\t",
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def parse_judgement(value: str) -> bool | None:
    """``True`` for y/yes/1, ``False`` for n/no/0 (any case), ``None`` for an empty cell."""
    text = value.strip().lower()
    if not text:
        return None
    if text in SHEET_TRUE:
        return True
    if text in SHEET_FALSE:
        return False
    raise ValueError(f"bad judgement {value!r}: write y/n, yes/no or 1/0")


def read_sheet(path: str | os.PathLike[str], allow_blank: bool = False
               ) -> list[dict[str, Any]]:
    """The rows of a filled sheet, ``correct`` parsed to ``True``/``False`` (``None`` = blank).

    A bad judgement, or a blank one unless ``allow_blank``, is an :class:`InputError` naming
    the file and line.
    """
    if not Path(path).is_file():
        raise InputError(path, "file not found")
    rows = []
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = [c for c in ("set", "phenomenon", "direction", "correct")
                   if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(path, f"missing column(s) {', '.join(missing)}", 1)
        for row in reader:
            try:
                judgement = parse_judgement(row["correct"] or "")
            except ValueError as err:
                raise InputError(path, str(err), reader.line_num) from None
            if judgement is None and not allow_blank:
                raise InputError(path, "the 'correct' cell is empty", reader.line_num)
            rows.append({**row, "correct": judgement})
    return rows


def precision_table(rows: Sequence[Mapping[str, Any]]) -> tuple[pd.DataFrame, list[str]]:
    """Precision of the extracted instances per direction and phenomenon, and overall."""
    groups: dict[tuple[str, str], list[bool]] = {}
    blank = 0
    for row in rows:
        if row["correct"] is None:
            blank += 1
            continue
        groups.setdefault((row["direction"], row["phenomenon"]), []).append(row["correct"])
    low, high = PAPER_PRECISION

    def line(direction: str, phenomenon: str, judged: list[bool], paper: str | None) -> dict:
        return {"direction": direction, "phenomenon": phenomenon, "annotated": len(judged),
                "correct": sum(judged),
                "precision (%)": _fmt(100 * sum(judged) / len(judged), 1) if judged else None,
                "paper precision (%)": paper}

    ordered = sorted(groups, key=lambda g: (g[0], PHENOMENA.index(g[1])
                                            if g[1] in PHENOMENA else len(PHENOMENA), g[1]))
    table = [line(d, p, groups[(d, p)], None) for d, p in ordered]
    every = [judged for group in groups.values() for judged in group]
    table.append(line("all", "all", every, f"{low}–{high}"))
    notes = [f"Precision = sentences judged correct / sentences annotated; {blank} blank "
             f"row{'s' if blank != 1 else ''} not counted.",
             f"The paper ({PAPER}) reports {low}–{high}% precision in its manual validation; "
             f"its per-phenomenon numbers are not shown here."]
    return _frame(table), notes


# --- command line --------------------------------------------------------------------------------

def _key_from_args(args: argparse.Namespace) -> SetKey:
    try:
        return SetKey(args.corpus, args.direction, args.phenomenon, args.bin)
    except ValueError as err:
        raise InputError("command line", str(err)) from None


def _selected(path: str, ids: list[int] | None, ids_path: str | None) -> list[str]:
    lines = read_lines(path)
    return lines if ids is None else select_lines(lines, ids, ids_path or "<ids>", path)


def _cmd_select(args: argparse.Namespace) -> int:
    count = write_lines(args.output, select_file(args.full, args.ids))
    print(f"selected {count} lines -> {args.output}", file=sys.stderr)
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    key = _key_from_args(args)
    if key.phenomenon == BASELINE and args.ids:
        raise InputError(args.ids, "the baseline is the full corpus: give no --ids")
    ids = read_ids(args.ids) if args.ids else None
    full_hyp, full_ref = read_lines(args.hyp), read_lines(args.ref)
    _check_parallel([args.hyp, args.ref], [full_hyp, full_ref])
    hyps = full_hyp if ids is None else select_lines(full_hyp, ids, args.ids, args.hyp)
    refs = full_ref if ids is None else select_lines(full_ref, ids, args.ids, args.ref)
    if args.set_ref:
        check_selection(refs, args.set_ref)
    ribes_hyps = ribes_refs = None
    if args.ribes_hyp or args.ribes_ref:
        if not (args.ribes_hyp and args.ribes_ref):
            raise InputError(args.ribes_hyp or args.ribes_ref,
                             "give both --ribes-hyp and --ribes-ref")
        ribes_hyps = _selected(args.ribes_hyp, ids, args.ids)
        ribes_refs = _selected(args.ribes_ref, ids, args.ids)
        _check_parallel([args.ribes_hyp, args.hyp], [ribes_hyps, hyps])
        _check_parallel([args.ribes_ref, args.ref], [ribes_refs, refs])
    corpus_sentences = args.corpus_sentences
    if corpus_sentences is None and (ids is not None or key.phenomenon == BASELINE):
        corpus_sentences = len(full_hyp)
    record = score_set(key, args.model, hyps, refs, corpus_sentences, args.tokenize,
                       args.lowercase, args.ribes, ribes_hyps, ribes_refs)
    write_json(args.output, record)
    ribes = f", RIBES {record['ribes']['score']}" if record["ribes"] else ""
    print(f"{key} ({args.model}): {record['sentences']} sentences, BLEU "
          f"{_bleu(record)}{ribes} -> {args.output}", file=sys.stderr)
    return 0


def _cmd_control(args: argparse.Namespace) -> int:
    key = _key_from_args(args)
    hyps, refs, srcs = read_lines(args.hyp), read_lines(args.ref), read_lines(args.src)
    _check_parallel([args.hyp, args.ref, args.src], [hyps, refs, srcs])
    ids = read_ids(args.ids)
    select_lines(hyps, ids, args.ids, args.hyp)  # range check with a file-and-line error
    try:
        record = control_record(key, args.model, hyps, refs, srcs, ids, args.draws, args.seed,
                                args.tolerance, args.exclude_set, args.tokenize, args.lowercase)
    except ValueError as err:
        raise InputError(args.ids, str(err)) from None
    write_json(args.output, record)
    control = record["control"]
    summary = (f"BLEU {record['bleu']}, control {control['mean']} ± {control['std']}, rank "
               f"{control['rank']}/{control['of']}" if control else "empty set, no control")
    print(f"{key} ({args.model}): {summary} -> {args.output}", file=sys.stderr)
    return 0


def _assignments(items: Sequence[str], option: str) -> list[tuple[SetKey, str]]:
    parsed = []
    for item in items:
        try:
            parsed.append(parse_assignment(item))
        except ValueError as err:
            raise InputError(option, str(err)) from None
    return parsed


def _cmd_table_sizes(args: argparse.Namespace) -> int:
    if not (args.scores or args.ids):
        raise InputError("--ids", "give the sets' .ids files (--ids) or score files (--scores)")
    sizes: dict[SetKey, int] = {}
    totals: dict[tuple[str, str], int] = {}
    if args.scores:
        records = load_records(args.scores, SCORE_SCHEMA)
        try:
            sizes.update(sizes_from_records(records))
        except ValueError as err:
            raise InputError(args.scores[0], str(err)) from None
        totals.update({(r["corpus"], r["direction"]): r["corpus_sentences"] for r in records
                       if r.get("corpus_sentences") is not None})
    sizes.update(sizes_from_ids(dict(_assignments(args.ids or [], "--ids"))))
    for item in args.corpus or []:
        name, sep, path = item.partition("=")
        corpus, slash, direction = name.partition("/")
        if not (sep and slash and path):
            raise InputError("--corpus", f"bad value {item!r}: expected corpus/direction=PATH")
        totals[(corpus, direction)] = count_lines(path)
    frame, notes = sizes_table(sizes, totals)
    write_table(frame, args.md, args.csv, "LDD challenge-set sizes (paper Tables 2 and 3)",
                notes + args.note)
    return 0


def _check_bins(labels: Sequence[str]) -> list[str]:
    try:
        for label in labels:
            parse_bin(label)
    except ValueError as err:
        raise InputError("--bins", str(err)) from None
    return list(labels)


_TableBuilder = Callable[[list[dict[str, Any]], argparse.Namespace],
                         tuple[pd.DataFrame, list[str]]]

#: The tables built from records: builder(records, args), record schema, title.
_RECORD_TABLES: dict[str, tuple[_TableBuilder, str, str]] = {
    "bleu": (lambda records, args: bleu_table(records, args.models), SCORE_SCHEMA,
             "BLEU on the LDD challenge sets and the full-corpus baseline (paper Table 4)"),
    "distance": (lambda records, args: distance_table(records, _check_bins(args.bins),
                                                      args.models), SCORE_SCHEMA,
                 "BLEU by head–dependent distance, with Spearman's ρ (paper Table 5)"),
    "ribes": (lambda records, args: ribes_table(records, args.models), SCORE_SCHEMA,
              "RIBES on the reordering sets and the full-corpus baseline (paper Table 6)"),
    "control": (lambda records, args: control_table(records, args.models), CONTROL_SCHEMA,
                "Length-matched random control of the LDD sets"),
}


def _cmd_record_table(args: argparse.Namespace) -> int:
    build, schema, title = _RECORD_TABLES[args.table]
    frame, notes = build(load_records(args.inputs, schema), args)
    write_table(frame, args.md, args.csv, title, notes + args.note)
    return 0


def _cmd_sheet_export(args: argparse.Namespace) -> int:
    count = export_sheet(_assignments(args.set, "--set"), args.output, args.per_set, args.seed)
    print(f"{count} sentences to validate -> {args.output}", file=sys.stderr)
    return 0


def _cmd_sheet_import(args: argparse.Namespace) -> int:
    frame, notes = precision_table(read_sheet(args.sheet, args.allow_blank))
    write_table(frame, args.md, args.csv, "Manual validation of the LDD challenge sets",
                notes + args.note)
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text}")
    return value


def _add_set_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="model name shown in the tables")
    parser.add_argument("--corpus", required=True, help="corpus (domain) name, e.g. news")
    parser.add_argument("--direction", required=True, help="translation direction, e.g. de-en")
    parser.add_argument("--phenomenon", required=True, choices=PHENOMENA,
                        help=f"'{BASELINE}' scores the full corpus")
    parser.add_argument("--bin", default="all",
                        help="distance bin: all, ge<k> or eq<k> (reordering: ge<d>)")


def _add_bleu_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tokenize", default="13a",
                        help="sacreBLEU tokenizer (default 13a); 'none' on Moses-tokenized "
                             "--hyp/--ref is the paper's multi-bleu setting")
    parser.add_argument("--lowercase", action="store_true")


def _add_table_outputs(parser: argparse.ArgumentParser, models: bool = True) -> None:
    if models:
        parser.add_argument("--models", nargs="*", default=[],
                            help="model-card JSON files (phenomt table model-card) for the notes")
    parser.add_argument("--note", action="append", default=[],
                        help="a further note under the table, e.g. that a corpus is a biased "
                             "sample (repeatable)")
    parser.add_argument("--md", required=True)
    parser.add_argument("--csv", required=True)


def register_cli(tree: CommandTree) -> None:
    """Add the ``ldd`` commands: select, score, control, table …, sheet export|import."""
    p = tree.add("ldd select", "Select the lines of a full-corpus file (e.g. hypotheses) at a "
                               "challenge set's .ids", _cmd_select)
    p.add_argument("--full", required=True, help="full-corpus file, one sentence a line")
    p.add_argument("--ids", required=True, help="the set's .ids file (1-based)")
    p.add_argument("--output", required=True)

    p = tree.add("ldd score", "Score one challenge set (or the baseline) of one model: BLEU "
                              "with its signature, RIBES for reordering sets, as JSON",
                 _cmd_score)
    _add_set_options(p)
    p.add_argument("--hyp", required=True,
                   help="full-corpus hypotheses (with --ids), else the set's own")
    p.add_argument("--ref", required=True, help="full-corpus references (with --ids)")
    p.add_argument("--ids", help="the set's .ids; not for the baseline")
    p.add_argument("--set-ref", help="check that the selected references equal this file")
    p.add_argument("--corpus-sentences", type=_non_negative,
                   help="full-corpus size, when --hyp/--ref are the set's own lines")
    _add_bleu_options(p)
    p.add_argument("--ribes", action=argparse.BooleanOptionalAction, default=None,
                   help="compute RIBES (default: for reordering sets and the baseline)")
    p.add_argument("--ribes-hyp", help="pre-tokenized hypotheses for RIBES (same lines as --hyp)")
    p.add_argument("--ribes-ref", help="pre-tokenized references for RIBES (same lines as --ref)")
    p.add_argument("--output", required=True, help="score JSON")

    p = tree.add("ldd control", "Length-matched random control: the set's BLEU against random "
                                "corpora of matching source lengths, as JSON", _cmd_control)
    _add_set_options(p)
    p.add_argument("--hyp", required=True, help="full-corpus hypotheses")
    p.add_argument("--ref", required=True, help="full-corpus references")
    p.add_argument("--src", required=True, help="full-corpus tokenized source (for lengths)")
    p.add_argument("--ids", required=True, help="the set's .ids")
    p.add_argument("--draws", type=_positive, default=DEFAULT_DRAWS)
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--tolerance", type=_non_negative, default=DEFAULT_TOLERANCE,
                   help="length window ± tokens (default 1)")
    p.add_argument("--exclude-set", action="store_true",
                   help="draw from the sentences outside the set only")
    _add_bleu_options(p)
    p.add_argument("--output", required=True, help="control JSON")

    p = tree.add("ldd table sizes", "Table 2/3: challenge-set sizes beside the paper's",
                 _cmd_table_sizes)
    p.add_argument("--ids", nargs="*", metavar="SET=PATH",
                   help="corpus/direction/phenomenon/bin=path.ids")
    p.add_argument("--scores", nargs="*", help="score JSON files (their set sizes)")
    p.add_argument("--corpus", nargs="*", metavar="CORPUS/DIRECTION=PATH",
                   help="full-corpus text files, counted for the notes")
    _add_table_outputs(p, models=False)

    for name, what in (("bleu", "Table 4: BLEU per set and baseline"),
                       ("distance", "Table 5: BLEU by minimum distance with Spearman's ρ"),
                       ("ribes", "Table 6: RIBES of the reordering sets and baseline"),
                       ("control", "The length-matched control table")):
        p = tree.add(f"ldd table {name}", what, _cmd_record_table)
        p.set_defaults(table=name)
        if name == "control":
            p.add_argument("--controls", dest="inputs", nargs="+", required=True,
                           help="control JSON files")
        else:
            p.add_argument("--scores", dest="inputs", nargs="+", required=True,
                           help="score JSON files")
        if name == "distance":
            p.add_argument("--bins", nargs="+", default=list(DISTANCE_BINS),
                           help="bins to correlate (default: all ge1 ge2 ge3)")
        _add_table_outputs(p)

    p = tree.add("ldd sheet export", "Manual-validation sheet: random sentences of each set "
                                     "with the marked words, as TSV", _cmd_sheet_export)
    p.add_argument("--set", nargs="+", required=True, metavar="SET=PREFIX",
                   help="corpus/direction/phenomenon/bin=set prefix")
    p.add_argument("--per-set", type=_positive, default=20, help="sentences per set (default 20)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--output", required=True)

    p = tree.add("ldd sheet import", "Precision per phenomenon from a filled validation sheet",
                 _cmd_sheet_import)
    p.add_argument("--sheet", required=True)
    p.add_argument("--allow-blank", action="store_true",
                   help="skip rows whose 'correct' cell is empty instead of failing")
    _add_table_outputs(p, models=False)
