"""The length-matched control of an LDD challenge set.

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
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from phenomt.core.metrics.base import get
from phenomt.ldd.score import scoring_name
from phenomt.ldd.sets import CONTROL_SCHEMA, SetKey, select_lines

DEFAULT_DRAWS = 100
DEFAULT_TOLERANCE = 1
DEFAULT_SEED = 1


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

    ``statistics_rows`` are the registered BLEU's statistics of the full corpus (computed once
    and shared by all sets), ``lengths`` the tokenized-source lengths, ``ids`` the set's 1-based
    ids.
    """
    if len(statistics_rows) != len(lengths):
        raise ValueError(f"{len(statistics_rows)} statistics rows but {len(lengths)} lengths")
    if not ids:
        raise ValueError("the set is empty: there is nothing to compare")
    indices = [i - 1 for i in ids]
    if min(indices) < 0 or max(indices) >= len(lengths):
        raise ValueError(f"sentence ids must lie in 1..{len(lengths)}")
    bleu = get("bleu", tokenize=tokenize, lowercase=lowercase)
    set_bleu = bleu.score(statistics_rows[indices].sum(axis=0))
    drawn = length_matched_draws(lengths, indices, draws, seed, tolerance, exclude_set)
    totals = np.array([statistics_rows[list(corpus)].sum(axis=0) for corpus in drawn.corpora])
    scores = [float(s) for s in bleu.scores(totals)] if len(totals) else []
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
    bleu = get("bleu", tokenize=tokenize, lowercase=lowercase)
    rows = bleu.statistics(hypotheses, references)
    lengths = [len(line.split()) for line in tokenized_sources]
    result = length_matched_control(rows, lengths, ids, draws, seed, tolerance, exclude_set,
                                     tokenize, lowercase)
    # Scored once more the ordinary way for the signature; the BLEU agrees with the statistics.
    direct = bleu.summary(select_lines(hypotheses, ids), select_lines(references, ids))
    return {**record, "signature": direct["signature"], **result}
