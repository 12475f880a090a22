"""Scoring an LDD challenge set: BLEU and, for reordering sets and baselines, RIBES.

**Scores** (``phenomt ldd score``, :func:`score_set`) are JSON objects, one per set and model::

    {"schema": "phenomt.ldd.score/1", "model": "...", "corpus": "news", "direction": "de-en",
     "phenomenon": "particle", "bin": "ge1", "sentences": 232, "corpus_sentences": 3000,
     "bleu": {<phenomt.core.metrics.bleu.Bleu.summary record, with its "signature">},
     "scoring": "sacrebleu" | "multi-bleu",
     "ribes": null | {"score": 0.7712, "alpha": 0.25, "beta": 0.1, "tokens": "...",
                      "implementation": "nltk 3.x corpus_ribes"}}

**BLEU** is the registered metric's sacreBLEU BLEU
(:meth:`~phenomt.core.metrics.bleu.Bleu.summary`); ``tokenize="none"`` on Moses-tokenized
hypotheses and references is the Moses ``multi-bleu.perl`` setting the paper used
("multi-bleu" in the tables; sacreBLEU's default ``exp`` smoothing still applies, which
differs from multi-bleu only when some n-gram order has no match at all).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from phenomt.core.metrics.base import get
from phenomt.core.metrics.ribes import ribes_record, ribes_tokens
from phenomt.ldd.extract import (
    REORDER,
)
from phenomt.ldd.sets import BASELINE, SCORE_SCHEMA, SetKey


def scoring_name(tokenize: str) -> str:
    """``multi-bleu`` for sacreBLEU without tokenization (on Moses-tokenized text), else
    ``sacrebleu``."""
    return "multi-bleu" if tokenize == "none" else "sacrebleu"


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
                              "bleu": get("bleu", tokenize=tokenize, lowercase=lowercase)
                              .summary(hypotheses, references) if hypotheses else None,
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
