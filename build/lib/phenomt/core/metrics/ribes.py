"""RIBES (Isozaki et al., 2010) through nltk, with its parameters pinned.

**RIBES** is nltk's ``corpus_ribes`` with α = 0.25 and β = 0.10 pinned (:data:`RIBES_ALPHA`,
:data:`RIBES_BETA`): the mean over sentences of ``NKT · P1^α · BP^β``. It needs tokens: each
line is lower-cased when asked, then split by sacreBLEU's tokenizer of the same name as the BLEU
one (``13a`` by default; ``none`` = split on whitespace, for Moses-tokenized text), or,
when pre-tokenized files are given, split on whitespace.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from phenomt.core.metrics.base import Metric, register
from phenomt.core.metrics.bleu import make_bleu, tokenizers

RIBES_ALPHA = 0.25
RIBES_BETA = 0.10


def iter_tokens(lines: Iterable[str], tokenize: str = "13a", lowercase: bool = False
                ) -> Iterator[list[str]]:
    """The tokens of each line, one line at a time: sacreBLEU's tokenizer ``tokenize``
    (``none``: whitespace), made once."""
    tokenizer = make_bleu(tokenize).tokenizer
    for line in lines:
        yield tokenizer((line.lower() if lowercase else line).rstrip()).split()


def ribes_tokens(lines: Iterable[str], tokenize: str = "13a", lowercase: bool = False
                 ) -> list[list[str]]:
    """Tokens for RIBES: sacreBLEU's tokenizer ``tokenize`` (``none``: whitespace) per line."""
    return list(iter_tokens(lines, tokenize, lowercase))


def corpus_ribes_score(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[str]]
                       ) -> float:
    """nltk's corpus RIBES with α and β pinned; one tokenized reference per hypothesis."""
    from nltk.translate.ribes_score import corpus_ribes  # slow to import: only when used

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    return float(corpus_ribes([[list(ref)] for ref in references],
                              [list(hyp) for hyp in hypotheses],
                              alpha=RIBES_ALPHA, beta=RIBES_BETA))


def sentence_ribes_scores(hypotheses: Sequence[Sequence[str]],
                          references: Sequence[Sequence[str]]) -> list[float]:
    """nltk's sentence RIBES (α and β pinned) of every tokenized hypothesis."""
    from nltk.translate.ribes_score import sentence_ribes

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    return [sentence_ribes([list(ref)], list(hyp), alpha=RIBES_ALPHA, beta=RIBES_BETA)
            for hyp, ref in zip(hypotheses, references, strict=True)]


def mean_ribes(scores: Iterable[float]) -> float:
    """Corpus RIBES of sentence scores, summed in order and divided as nltk's
    ``corpus_ribes`` does, so that a subset's scores give exactly its corpus RIBES."""
    total, count = 0.0, 0
    for score in scores:
        total += score
        count += 1
    return total / count if count else 0.0


def ribes_record(hyp_tokens: Sequence[Sequence[str]], ref_tokens: Sequence[Sequence[str]],
                 tokens: str) -> dict[str, Any]:
    """RIBES with its parameters; ``tokens`` says how the text was tokenized."""
    return ribes_record_of(corpus_ribes_score(hyp_tokens, ref_tokens), tokens)


def ribes_record_of(score: float, tokens: str) -> dict[str, Any]:
    """The record of a corpus RIBES computed already (e.g. :func:`mean_ribes`)."""
    import nltk

    return {"score": round(score, 4), "alpha": RIBES_ALPHA, "beta": RIBES_BETA,
            "tokens": tokens, "implementation": f"nltk {nltk.__version__} corpus_ribes"}


@register
class Ribes(Metric):
    """RIBES (nltk, α and β pinned); the statistics are sentence RIBES and a count.

    The corpus score is the mean of sentence scores, as nltk's ``corpus_ribes``."""

    name = "ribes"
    label = "RIBES"
    columns = ("sentence_ribes", "sentences")
    bounds = (0.0, 1.0)

    def __init__(self, tokenize: str = "13a", lowercase: bool = False) -> None:
        make_bleu(tokenize)  # a tokenizer that cannot be made fails here, before any text
        self.tokenize, self.lowercase = tokenize, lowercase

    @classmethod
    def choices(cls) -> dict[str, list[str]]:
        return {"tokenize": tokenizers()}

    def signature(self) -> str:
        import nltk

        return (f"tok:{self.tokenize}|case:{'lc' if self.lowercase else 'mixed'}|"
                f"alpha:{RIBES_ALPHA}|beta:{RIBES_BETA}|nltk:{nltk.__version__}")

    def statistics(self, hypotheses: Sequence[str], references: Sequence[str],
                   sources: Sequence[str] | None = None) -> np.ndarray:
        self._check(hypotheses, references, sources)
        scores = sentence_ribes_scores(ribes_tokens(hypotheses, self.tokenize, self.lowercase),
                                       ribes_tokens(references, self.tokenize, self.lowercase))
        return np.array([[score, 1.0] for score in scores], dtype=np.float64).reshape(-1, 2)

    def score(self, totals: np.ndarray) -> float:
        return float(totals[0] / totals[1]) if totals[1] else float("nan")
