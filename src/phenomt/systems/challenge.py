"""The long-distance-dependency challenge sets of a test set (Choshen & Abend 2019), scored for
one given system: one JSON record per (test set, system).

The sets are extracted from the test set's source and reference by the LDD stages (UDPipe
parse of the source for the lexical sets, word alignment of source and reference for the
reordering set) and given here as ``NAME=PREFIX``: ``PREFIX.ids`` holds the 1-based lines of
the set, ``PREFIX.ref`` its reference lines, checked against the test set's reference so that a
set cannot be paired with the wrong test set (line for line for the lexical sets; a reordering
set's ``.ref`` is the tokenized reference, so only its length is checked). ``NAME`` is
``phenomenon.bin``, e.g. ``particle.ge1`` (a particle at distance ≥ 1 from its verb) or
``reorder.ge5``.

For the full test set (the baseline every set is compared with) and for every set:

- **BLEU** from sacreBLEU with its 95% percentile interval (:func:`phenomt.systems.scores.
  significance`: a sentence bootstrap of sacreBLEU's statistics, the same seed for every set,
  clipped to 0-100, flagged when it does not contain the score); the sets are small, so the
  interval is what tells a real drop from noise;
- **RIBES** (:mod:`phenomt.core.metrics.ribes`, α = 0.25, β = 0.10) for the reordering sets
  and the full test set (the paper's Table 6), on sacreBLEU's tokens, with its interval and
  each set's test against the full test set as for BLEU (the mean of the sentence scores
  resampled; its own Holm family over the record's sets). A line whose hypothesis
  or reference has more than :data:`~phenomt.core.linelimit.MAX_TOKENS` tokens gets no RIBES
  (nltk's word alignment is super-linear in length and refuses 2,000 tokens): the mean leaves
  it out, and the record names it (``ribes_unscored``, each entry's ``ribes.unscored``).

Every number comes from the one resampling engine: the test set's resamples are drawn once
(:class:`phenomt.core.metrics.resample.Resampler`) and a set's resample counts the draws of
its own lines, so the full test set and every set are paired on the same resamples. Δ = set −
full test set, with the paired interval of Δ and its two-sided p; the p-values of a system's
sets are Holm-adjusted together (the family of one record). ``below`` (``above``) says whether
the set is significantly below (above) the full test set after that correction. A set of
fewer than :data:`MIN_INTERVAL_SENTENCES` sentences gets no such verdict (None) and stays out
of the family: resampling a handful of sentences understates the spread, down to an interval
of width 0 for one sentence. An empty set gets ``bleu`` None.

Given the test set's tokenized source and reference (``tokenized``, what the parse and the
aligner read), the record names the lines they kept out as over the length limit
(``kept_out``, :func:`phenomt.core.linelimit.kept_out`): such a line holds no instance of any
set, but stays in the full test set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from phenomt.core.bins import parse_bin
from phenomt.core.io import InputError, check_line_count, read_lines
from phenomt.core.lineids import read_ids, select_lines
from phenomt.core.linelimit import kept_out_of_files, over_limit
from phenomt.core.metrics import resample
from phenomt.core.metrics.bleu import default_tokenizer
from phenomt.core.metrics.ribes import (
    mean_ribes,
    ribes_record_of,
    ribes_tokens,
    sentence_ribes_scores,
)
from phenomt.systems import intervals
from phenomt.systems.outputs import read_output, read_text
from phenomt.systems.scores import (
    CONFIDENCE,
    DEFAULT_SEED,
    INTERVAL_METHODS,
    recorded_statistics,
    registered_metrics,
    test_signature,
)

SCHEMA = "phenomt.systems.ldd/1"
REORDER = "reorder"
FULL = "full"
# a bootstrap of identical sentences gives interval bounds equal to the score up to rounding
TOLERANCE = 1e-6
MIN_INTERVAL_SENTENCES = resample.MIN_INTERVAL_SENTENCES
BINS_NOTE = "All = every instance; ≥k = an instance at distance ≥ k (words strictly between)"


@dataclass(frozen=True)
class ChallengeSet:
    """A set of a test set: ``phenomenon.bin`` and the path prefix of its files."""

    phenomenon: str
    bin: str
    prefix: str

    @property
    def name(self) -> str:
        return f"{self.phenomenon}.{self.bin}"


def parse_set(text: str) -> ChallengeSet:
    """``phenomenon.bin=PREFIX`` → :class:`ChallengeSet`."""
    name, sep, prefix = text.partition("=")
    phenomenon, dot, label = name.partition(".")
    if not sep or not prefix or not dot or not phenomenon:
        raise ValueError(f"expected phenomenon.bin=PREFIX, got {text!r}")
    parse_bin(label)
    return ChallengeSet(phenomenon, label, prefix)


def _check_set_reference(selected: Sequence[str], path: str, lines: bool = True) -> None:
    """The set's own reference lines must be the test set's at its ids (their number only,
    unless ``lines``)."""
    expected = read_lines(path)
    if len(expected) != len(selected):
        raise InputError(path, f"has {len(expected)} lines but its ids select {len(selected)} "
                               "lines of the test set's reference: another test set's set?")
    if not lines:
        return
    for number, (want, got) in enumerate(zip(expected, selected, strict=True), start=1):
        if want != got:
            raise InputError(path, f"differs from the test set's reference at the set's id: "
                                   f"{want!r} against {got!r}", number)


def sentence_ribes(hypotheses: Sequence[str], references: Sequence[str], tokenize: str
                   ) -> tuple[list[float | None], list[int]]:
    """Sentence RIBES of every line, None for a line whose hypothesis or reference is over the
    length limit, and the 1-based numbers of those lines."""
    hyp_tokens, ref_tokens = ribes_tokens(hypotheses, tokenize), ribes_tokens(references,
                                                                               tokenize)
    unscored = [n for n, (h, r) in enumerate(zip(hyp_tokens, ref_tokens, strict=True), start=1)
                if over_limit(h) or over_limit(r)]
    skip = set(unscored)
    scored = [n for n in range(1, len(hyp_tokens) + 1) if n not in skip]
    found: list[float | None] = [None] * len(hyp_tokens)
    for n, score in zip(scored, sentence_ribes_scores([hyp_tokens[n - 1] for n in scored],
                                                      [ref_tokens[n - 1] for n in scored]),
                        strict=True):
        found[n - 1] = score
    return found, unscored


class _Cells:
    """One metric's per-sentence statistics of one system on the test set, resampled by the
    test set's engine for the full test set and every set (so all are paired)."""

    def __init__(self, metric, hypotheses: Sequence[str], references: Sequence[str],
                 sources: Sequence[str] | None, engine: resample.Resampler,
                 recorded: Mapping[str, Any] | None = None,
                 stats: np.ndarray | None = None) -> None:
        self.metric = metric
        # given, or kept by the system's score record where computed the same way
        if stats is None:
            stats = recorded_statistics(recorded, metric, len(references))
        self.stats = (metric.statistics(hypotheses, references, sources) if stats is None
                      else stats)
        self.engine = engine
        self.signature = metric.signature()
        self.test_signature = test_signature(self.signature, "bs", engine.samples,
                                             engine.samples, engine.seed)
        self.full = engine.resampled(metric.score, self.stats)

    def cell(self, rows: Sequence[int] | None) -> tuple[dict, float, object]:
        """The entry of the lines ``rows`` (0-based; None: all), its score and its
        resampled scores."""
        score, values = (self.full if rows is None
                         else self.engine.resampled(self.metric.score, self.stats, rows))
        low, high = self.engine.interval(values)
        entry = {"score": score,
                 **intervals.checked_interval(score, low, high, bounds=self.metric.bounds,
                                              samples=self.engine.samples,
                                              confidence=self.engine.confidence,
                                              method=self.engine.method),
                 "signature": self.signature, "test_signature": self.test_signature}
        return entry, score, values


def _recorded_cells(record: Mapping[str, Any] | None, hyp: str | os.PathLike[str],
                    ref: str | os.PathLike[str]) -> Mapping[str, Any]:
    """The metric cells of a score record's main subset, if it scored these very files."""
    if record is None or record.get("hypothesis") != str(hyp) or \
            record.get("reference") != str(ref):
        return {}
    return record.get("subsets", {}).get(record.get("main"), {})


def _ribes_statistics(ribes: Sequence[float | None]) -> np.ndarray:
    """The RIBES metric's statistics (sentence score, 1) of sentence scores; (0, 0) for an
    unscored line, which the mean then leaves out."""
    return np.array([(0.0, 0.0) if score is None else (score, 1.0) for score in ribes],
                    dtype=np.float64).reshape(-1, 2)


def _ribes_entry(ribes: Sequence[float | None], tokenize: str, cell: Mapping[str, Any]
                 ) -> dict | None:
    """The RIBES of some lines (``ribes``: their sentence scores) with the interval of their
    RIBES ``cell`` (:meth:`_Cells.cell`); None where no line has a score."""
    scored = [score for score in ribes if score is not None]
    if not scored:
        return None
    return {**ribes_record_of(mean_ribes(scored), f"sacreBLEU's {tokenize} tokenizer"),
            "unscored": len(ribes) - len(scored),
            **{k: cell[k] for k in ("ci_low", "ci_high", "ci_contains_score", "ci_reason",
                                    "test_signature")}}


def ldd_record(*, testset: str, system: str, hyp: str | os.PathLike[str],
               ref: str | os.PathLike[str], target_lang: str, sets: Sequence[ChallengeSet],
               tokenize: str | None = None, samples: int = 1000, seed: int = DEFAULT_SEED,
               kind: str | None = None,
               tokenized: Sequence[str | os.PathLike[str]] | None = None,
               metrics: Sequence[str] = (), src: str | os.PathLike[str] | None = None,
               source_lang: str | None = None,
               settings: Mapping[str, Mapping[str, Any]] | None = None,
               score_record: Mapping[str, Any] | None = None) -> dict:
    """The challenge-set record of one system on one test set: the full test set, then every
    set with its BLEU (interval), Δ against the full test set and RIBES where it applies;
    with ``tokenized`` (the test set's tokenized source and reference), the lines kept out of
    parsing and alignment. ``score_record``: the system's record of ``systems score`` on the
    same files, whose kept per-sentence statistics are used instead of scoring the output
    again wherever they were computed as here (same metric signature, every line).

    ``metrics``: more registered metrics (chrF, TER, RIBES, CRR, DRR ...), each scored like
    BLEU under ``metrics`` of the full test set and of every set, on the same resamples, its
    sets' p Holm-adjusted together (a family per metric); those that read the source need
    ``src`` and ``source_lang``."""
    names = [s.name for s in sets]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"challenge set(s) given twice: {', '.join(duplicated)}")
    if "bleu" in metrics:
        raise ValueError("BLEU is every record's first metric: name only the others")
    extra = registered_metrics(tokenize or default_tokenizer(target_lang), tuple(metrics),
                               (source_lang or "", target_lang), settings) if metrics else {}
    needing = [name for name, metric in extra.items() if metric.needs_source]
    if needing and (src is None or source_lang is None):
        raise ValueError(f"{', '.join(needing)} read the source: give src and source_lang")
    references = read_text(ref)
    sources = None
    if src is not None:
        sources = read_text(src)
        check_line_count(src, len(sources), len(references), ref)
    kept_out = None
    if tokenized is not None:
        kept_out = kept_out_of_files(*tokenized)
        if kept_out["lines"] != len(references):
            raise InputError(tokenized[0], f"has {kept_out['lines']} lines but the test set's "
                                           f"reference {ref} has {len(references)}")
    output = read_output(hyp, ref)
    tokenize = tokenize or default_tokenizer(target_lang)
    # sentence RIBES once: the reordering set's lines are test-set lines
    ribes, ribes_unscored = sentence_ribes(output.lines, references, tokenize)
    engine = resample.Resampler(len(references), samples, seed)
    ribes_cells = _Cells(registered_metrics(tokenize, ("ribes",))["ribes"], output.lines,
                         references, None, engine, stats=_ribes_statistics(ribes))
    recorded = _recorded_cells(score_record, hyp, ref)
    bleu = _Cells(registered_metrics(tokenize, ("bleu",))["bleu"], output.lines, references,
                  None, engine, recorded.get("bleu"))
    # a metric that draws whole documents (LTCR) has its own resamples, same seed
    others = {name: _Cells(metric, output.lines, references, sources,
                           engine if metric.clusters(len(references)) is None
                           else metric.engine(len(references), samples, seed),
                           recorded.get(name))
              for name, metric in extra.items()}
    full_entry, full_bleu, full_values = bleu.cell(None)
    full_others = {name: cells.cell(None) for name, cells in others.items()}
    full = {"sentences": len(references), "bleu": full_entry,
            "ribes": _ribes_entry(ribes, tokenize, ribes_cells.cell(None)[0])}
    if others:
        full["metrics"] = {name: cell[0] for name, cell in full_others.items()}
    scored = {}
    for challenge in sets:
        ids_path = f"{challenge.prefix}.ids"
        ids = read_ids(ids_path)
        refs = select_lines(references, ids, ids_path, ref)
        select_lines(output.lines, ids, ids_path, hyp)  # the ids fit the hypothesis too
        _check_set_reference(refs, f"{challenge.prefix}.ref",
                             lines=challenge.phenomenon != REORDER)
        rows = [i - 1 for i in ids]
        ribes_cell = ribes_cells.cell(rows) if challenge.phenomenon == REORDER and ids else None
        entry: dict = {"sentences": len(ids), "bleu": None,
                       "ribes": None if ribes_cell is None else _ribes_entry(
                           select_lines(ribes, ids, ids_path), tokenize, ribes_cell[0]),
                       "phenomenon": challenge.phenomenon, "bin": challenge.bin,
                       "ids": ids_path, "difference": None, "difference_ci": None,
                       "p_value": None, "p_adjusted": None, "below": None, "above": None}
        if ids:
            entry["bleu"], score, values = bleu.cell(rows)
            tested = bleu.engine.compare(score, values, full_bleu, full_values)
            entry.update(difference=tested.difference, difference_ci=[tested.low, tested.high])
            if entry["sentences"] >= MIN_INTERVAL_SENTENCES:
                entry["p_value"] = tested.p
        if ribes_cell is not None and entry["ribes"] and full["ribes"]:
            _ribes_test(entry["ribes"], full["ribes"],
                        ribes_cells.engine.compare(*ribes_cell[1:], *ribes_cells.full),
                        len(ids) - entry["ribes"]["unscored"] >= MIN_INTERVAL_SENTENCES)
        if others:
            entry["metrics"] = {
                name: _metric_entry(cells, rows, full_others[name][1:],
                                    len(ids) >= MIN_INTERVAL_SENTENCES)
                for name, cells in others.items()}
        scored[challenge.name] = entry
    _holm_verdicts(scored)
    _holm_verdicts({name: entry["ribes"] for name, entry in scored.items() if entry["ribes"]})
    for name in others:
        _holm_verdicts({set_name: entry["metrics"][name] for set_name, entry in scored.items()})
    return {"schema": SCHEMA, "testset": testset, "system": system, "kind": kind,
            "hypothesis": str(hyp), "reference": str(ref), "target_lang": target_lang,
            **output.summary(),
            "test": {"name": "sentence bootstrap of sacreBLEU's BLEU statistics, drawn once "
                             "for the test set: the 95% percentile interval, and each set "
                             "against the full test set on the same resamples (paired; p "
                             "Holm-adjusted over the record's sets)", "samples": samples,
                     "seed": seed,
                     "confidence": CONFIDENCE, "tokenize": tokenize,
                     "method": INTERVAL_METHODS["percentile"]},
            "kept_out": kept_out, "ribes_unscored": ribes_unscored, FULL: full,
            "sets": scored}


def _ribes_test(entry: dict, full: Mapping[str, Any], tested: resample.Comparison,
                judged: bool) -> None:
    """A set's RIBES ``entry`` against the ``full`` test set's: Δ of the two entries' RIBES
    (nltk's means), the paired interval of ``tested`` (the set's resampled RIBES against the
    full test set's) and its p where ``judged`` (a set of
    :data:`MIN_INTERVAL_SENTENCES` scored lines or more)."""
    entry.update(difference=entry["score"] - full["score"],
                 difference_ci=[tested.low, tested.high],
                 p_value=tested.p if judged else None, p_adjusted=None, below=None,
                 above=None)


def _metric_entry(cells: _Cells, rows: list[int], full: tuple[float, object],
                  judged: bool) -> dict | None:
    """Another metric's entry of a set: its cell, and Δ against the full test set with the
    paired interval and p (None below :data:`MIN_INTERVAL_SENTENCES` sentences)."""
    if not rows:
        return None
    entry, score, values = cells.cell(rows)
    tested = cells.engine.compare(score, values, *full)
    entry.update(difference=tested.difference, difference_ci=[tested.low, tested.high],
                 p_value=tested.p if judged else None, p_adjusted=None, below=None,
                 above=None)
    return entry


def _holm_verdicts(scored: dict[str, dict | None], alpha: float = resample.ALPHA) -> None:
    """Holm-adjust the p of the sets large enough for a verdict, then mark each below or
    above the full test set when its adjusted p < ``alpha``."""
    names = [n for n, e in scored.items() if e is not None and e["p_value"] is not None]
    for name, adjusted in zip(names, resample.holm([scored[n]["p_value"] for n in names]),
                              strict=True):
        entry = scored[name]
        significant = adjusted < alpha
        entry.update(p_adjusted=adjusted,
                     below=significant and entry["difference"] < -TOLERANCE,
                     above=significant and entry["difference"] > TOLERANCE)
