"""Corpus BLEU with sacreBLEU, always reported with its signature."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sacrebleu.metrics import BLEU

from phenomt.core.cliargs import non_negative_int, positive_int
from phenomt.core.corpus import read_parallel
from phenomt.core.io import atomic_write
from phenomt.core.metrics import resample
from phenomt.core.metrics.base import SacrebleuMetric, register


def tokenizers() -> list[str]:
    """The tokenizer names the installed sacreBLEU accepts (``BLEU.TOKENIZERS``; older
    releases keep them in the module's ``_TOKENIZERS``)."""
    from sacrebleu.metrics import bleu

    return list(getattr(BLEU, "TOKENIZERS", None) or bleu._TOKENIZERS)


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


def score_files(hyp: str | Path, ref: str | Path, tokenize: str, lowercase: bool,
                samples: int = 0, seed: int = resample.DEFAULT_SEED) -> dict:
    """Corpus BLEU of two files; with ``samples``, also its sentence-bootstrap interval and
    the per-sentence statistics (so that later tables can resample and pair systems)."""
    hyps, refs = read_parallel([hyp, ref])
    result = corpus_bleu(hyps, refs, tokenize, lowercase)
    if samples:
        stats = bleu_statistics(hyps, refs, tokenize, lowercase)
        interval = resample.bootstrap(stats, bleu_score(tokenize, lowercase), samples=samples,
                                      seed=seed)
        result.update({
            "bleu_ci": [round(interval.low, 2), round(interval.high, 2)],
            "bootstrap": {"samples": samples, "seed": seed, "confidence": resample.CONFIDENCE,
                          "method": "percentile, sentence resampling"},
            "statistics": {"columns": STATISTICS_COLUMNS, "rows": stats.tolist()}})
    return result


def _score_command(args: argparse.Namespace) -> int:
    result = score_files(args.hyp, args.ref, args.tokenize, args.lowercase, args.bootstrap,
                         args.seed)
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
    return Bleu(tokenize, lowercase).statistics(hypotheses, references).astype(np.int64)


STATISTICS_COLUMNS = ["hyp_len", "ref_len", *(f"correct_{n}" for n in range(1, 5)),
                      *(f"total_{n}" for n in range(1, 5))]


def bleu_score(tokenize: str = "13a", lowercase: bool = False) -> resample.Score:
    """Corpus BLEU (unrounded) of one vector of summed :func:`bleu_statistics`, smoothed as
    :func:`corpus_bleu` does: the :class:`Bleu` metric's score."""
    return Bleu(tokenize, lowercase).score


def bleu_score_of(signature: str) -> resample.Score:
    """:func:`bleu_score` with the tokenizer and casing a sacreBLEU signature names
    (``tok:13a``, ``case:lc``), so that resampling scores as the record was scored."""
    fields = dict(part.split(":", 1) for part in signature.split("|") if ":" in part)
    return bleu_score(fields.get("tok", "13a"), fields.get("case") == "lc")


def bleu_from_statistics(totals: np.ndarray, tokenize: str = "13a", lowercase: bool = False
                         ) -> float:
    """Corpus BLEU (unrounded) of summed statistics, smoothed as :func:`corpus_bleu` does."""
    return bleu_score(tokenize, lowercase)(totals)


def register_cli(tree) -> None:
    p = tree.add("score bleu", "Corpus BLEU with sacreBLEU, printed as JSON with its signature",
                 _score_command)
    p.add_argument("--hyp", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--tokenize", default="13a", choices=tokenizers(),
                   help="sacreBLEU tokenizer; 'none' on Moses-tokenized text = multi-bleu")
    p.add_argument("--lowercase", action="store_true")
    p.add_argument("--meta", nargs="*", default=[], metavar="KEY=VALUE",
                   help="extra fields stored with the score (model, test set ...)")
    p.add_argument("--bootstrap", type=non_negative_int, default=0, metavar="N",
                   help="also a 95%% interval from N sentence resamples, and the per-sentence "
                        "statistics (0: neither)")
    p.add_argument("--seed", type=positive_int, default=resample.DEFAULT_SEED,
                   help="seed of the resampling")
    p.add_argument("--output", help="also write the JSON here")


@register
class Bleu(SacrebleuMetric):
    """sacreBLEU's corpus BLEU; the statistics are :data:`STATISTICS_COLUMNS`.

    sacreBLEU's default settings besides ``tokenize`` and ``lowercase``."""

    name = "bleu"
    label = "BLEU"
    columns = tuple(STATISTICS_COLUMNS)

    def __init__(self, tokenize: str = "13a", lowercase: bool = False) -> None:
        self.metric = BLEU(tokenize=tokenize, lowercase=lowercase)
