"""Corpus BLEU with sacreBLEU, always reported with its signature."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sacrebleu.metrics import BLEU

from phenomt.core.corpus import read_parallel
from phenomt.core.io import atomic_write


def default_tokenizer(target_lang: str) -> str:
    """sacreBLEU's recommended tokenizer for the target language."""
    return {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}.get(target_lang, "13a")


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str], tokenize: str = "13a",
                lowercase: bool = False) -> dict:
    """BLEU of detokenized hypotheses against one reference each.

    ``tokenize="none"`` on Moses-tokenized text reproduces Moses ``multi-bleu.perl``
    (which the LDD paper used), up to its handling of empty hypotheses.
    """
    metric = BLEU(tokenize=tokenize, lowercase=lowercase)
    score = metric.corpus_score(list(hypotheses), [list(references)])
    return {
        "bleu": round(score.score, 2),
        "precisions": [round(p, 2) for p in score.precisions],
        "bp": round(score.bp, 4),
        "sys_len": score.sys_len,
        "ref_len": score.ref_len,
        "sentences": len(hypotheses),
        "signature": str(metric.get_signature()),
    }


def score_files(hyp: str | Path, ref: str | Path, tokenize: str, lowercase: bool) -> dict:
    hyps, refs = read_parallel([hyp, ref])
    return corpus_bleu(hyps, refs, tokenize, lowercase)


def _score_command(args: argparse.Namespace) -> int:
    result = score_files(args.hyp, args.ref, args.tokenize, args.lowercase)
    result.update({k: v for k, v in (item.split("=", 1) for item in args.meta)})
    text = json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False)
    if args.output:
        with atomic_write(args.output) as out:
            out.write(text + "\n")
    print(text)
    return 0


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


def register_cli(tree) -> None:
    p = tree.add("score bleu", "Corpus BLEU with sacreBLEU, printed as JSON with its signature",
                 _score_command)
    p.add_argument("--hyp", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--tokenize", default="13a",
                   help="sacreBLEU tokenizer; 'none' on Moses-tokenized text = multi-bleu")
    p.add_argument("--lowercase", action="store_true")
    p.add_argument("--meta", nargs="*", default=[], metavar="KEY=VALUE",
                   help="extra fields stored with the score (model, test set ...)")
    p.add_argument("--output", help="also write the JSON here")
