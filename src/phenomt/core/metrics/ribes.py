"""RIBES (Isozaki et al., 2010) through nltk, with its parameters pinned.

**RIBES** is nltk's ``corpus_ribes`` with α = 0.25 and β = 0.10 pinned (:data:`RIBES_ALPHA`,
:data:`RIBES_BETA`): the mean over sentences of ``NKT · P1^α · BP^β``. It needs tokens: each
line is lower-cased when asked, then split by sacreBLEU's tokenizer of the same name as the BLEU
one (``13a`` by default; ``none`` = split on whitespace, for Moses-tokenized text), or,
when pre-tokenized files are given, split on whitespace.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sacrebleu.metrics import BLEU

RIBES_ALPHA = 0.25
RIBES_BETA = 0.10


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
