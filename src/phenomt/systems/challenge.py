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
  and the full test set (the paper's Table 6), on sacreBLEU's tokens. A line whose hypothesis
  or reference has more than :data:`~phenomt.core.linelimit.MAX_TOKENS` tokens gets no RIBES
  (nltk's word alignment is super-linear in length and refuses 2,000 tokens): the mean leaves
  it out, and the record names it (``ribes_unscored``, each entry's ``ribes.unscored``).

Δ = set − full test set; ``below`` (``above``) says whether the whole interval of the set lies
below (above) the full test set's BLEU. A set of fewer than :data:`MIN_INTERVAL_SENTENCES`
sentences gets no such verdict (None): resampling a handful of sentences understates the
spread, down to an interval of width 0 for one sentence. An empty set gets ``bleu`` None.

Given the test set's tokenized source and reference (``tokenized``, what the parse and the
aligner read), the record names the lines they kept out as over the length limit
(``kept_out``, :func:`phenomt.core.linelimit.kept_out`): such a line holds no instance of any
set, but stays in the full test set.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from phenomt.core.bins import parse_bin
from phenomt.core.io import InputError, read_lines
from phenomt.core.lineids import read_ids, select_lines
from phenomt.core.linelimit import kept_out_of_files, over_limit
from phenomt.core.metrics.bleu import default_tokenizer
from phenomt.core.metrics.ribes import (
    mean_ribes,
    ribes_record_of,
    ribes_tokens,
    sentence_ribes_scores,
)
from phenomt.systems.outputs import read_output, read_text
from phenomt.systems.scores import CONFIDENCE, DEFAULT_SEED, INTERVAL_METHODS, significance

SCHEMA = "phenomt.systems.ldd/1"
REORDER = "reorder"
FULL = "full"
# a bootstrap of identical sentences gives interval bounds equal to the score up to rounding
TOLERANCE = 1e-6
MIN_INTERVAL_SENTENCES = 10
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


def score_lines(hypotheses: Sequence[str], references: Sequence[str], *, tokenize: str,
                ribes: Sequence[float | None] | None, samples: int, seed: int) -> dict:
    """Sentences, BLEU with its interval and, given their sentence RIBES scores, RIBES of
    selected lines."""
    entry: dict = {"sentences": len(hypotheses), "bleu": None, "ribes": None}
    if not hypotheses:
        return entry
    bleu = significance(hypotheses, references, None, tokenize=tokenize, test="bs",
                        samples=samples, seed=seed, metrics=("bleu",))["bleu"]
    entry["bleu"] = {key: bleu[key] for key in ("score", "ci_low", "ci_high",
                                                 "ci_contains_score", "ci_reason",
                                                 "signature", "test_signature")}
    scored = None if ribes is None else [score for score in ribes if score is not None]
    if scored:
        entry["ribes"] = {**ribes_record_of(mean_ribes(scored), f"sacreBLEU's {tokenize} "
                                                                 "tokenizer"),
                          "unscored": len(ribes) - len(scored)}
    return entry


def ldd_record(*, testset: str, system: str, hyp: str | os.PathLike[str],
               ref: str | os.PathLike[str], target_lang: str, sets: Sequence[ChallengeSet],
               tokenize: str | None = None, samples: int = 1000, seed: int = DEFAULT_SEED,
               kind: str | None = None,
               tokenized: Sequence[str | os.PathLike[str]] | None = None) -> dict:
    """The challenge-set record of one system on one test set: the full test set, then every
    set with its BLEU (interval), Δ against the full test set and RIBES where it applies;
    with ``tokenized`` (the test set's tokenized source and reference), the lines kept out of
    parsing and alignment."""
    names = [s.name for s in sets]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"challenge set(s) given twice: {', '.join(duplicated)}")
    references = read_text(ref)
    kept_out = None
    if tokenized is not None:
        kept_out = kept_out_of_files(*tokenized)
        if kept_out["lines"] != len(references):
            raise InputError(tokenized[0], f"has {kept_out['lines']} lines but the test set's "
                                           f"reference {ref} has {len(references)}")
    output = read_output(hyp, ref)
    tokenize = tokenize or default_tokenizer(target_lang)
    settings = {"tokenize": tokenize, "samples": samples, "seed": seed}
    # sentence RIBES once: the reordering set's lines are test-set lines
    ribes, ribes_unscored = sentence_ribes(output.lines, references, tokenize)
    full = score_lines(output.lines, references, ribes=ribes, **settings)
    full_bleu = full["bleu"]["score"] if full["bleu"] else None
    scored = {}
    for challenge in sets:
        ids_path = f"{challenge.prefix}.ids"
        ids = read_ids(ids_path)
        hyps = select_lines(output.lines, ids, ids_path, hyp)
        refs = select_lines(references, ids, ids_path, ref)
        _check_set_reference(refs, f"{challenge.prefix}.ref",
                             lines=challenge.phenomenon != REORDER)
        entry = score_lines(hyps, refs, **settings, ribes=select_lines(ribes, ids, ids_path)
                            if challenge.phenomenon == REORDER else None)
        bleu = entry["bleu"]
        entry.update(phenomenon=challenge.phenomenon, bin=challenge.bin, ids=ids_path,
                     difference=None, below=None, above=None)
        if bleu is not None and full_bleu is not None:
            entry["difference"] = bleu["score"] - full_bleu
            if entry["sentences"] >= MIN_INTERVAL_SENTENCES:
                entry.update(below=bleu["ci_high"] < full_bleu - TOLERANCE,
                             above=bleu["ci_low"] > full_bleu + TOLERANCE)
        if entry["ribes"] and full["ribes"]:
            entry["ribes"]["difference"] = entry["ribes"]["score"] - full["ribes"]["score"]
        scored[challenge.name] = entry
    return {"schema": SCHEMA, "testset": testset, "system": system, "kind": kind,
            "hypothesis": str(hyp), "reference": str(ref), "target_lang": target_lang,
            **output.summary(),
            "test": {"name": "sentence bootstrap of sacreBLEU's BLEU statistics: the 95% "
                             "percentile interval", "samples": samples, "seed": seed,
                     "confidence": CONFIDENCE, "tokenize": tokenize,
                     "method": INTERVAL_METHODS["percentile"]},
            "kept_out": kept_out, "ribes_unscored": ribes_unscored, FULL: full,
            "sets": scored}
