"""Corpus BLEU with sacreBLEU, always reported with its signature."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from sacrebleu.metrics import BLEU

from phenomt.corpus import read_parallel
from phenomt.io import atomic_write


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
