"""Cost of the CRR/DRR metric against sacreBLEU's corpus BLEU on the same output.

Hypotheses are newstest sentences with injected repetitions (a token doubled, or an earlier token
copied further on), the references are the original sentences. Prints seconds per 10k sentences,
best of ``--repeats`` runs, for the metric in increasing configurations and for corpus BLEU.

    PYTHONPATH=src python benchmarks/bench_redundancy.py [--text FILE] [--sentences 10000]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from itertools import cycle, islice
from pathlib import Path

import numpy as np
from sacrebleu.metrics import BLEU

from phenomt.core.fetch import find_mirror
from phenomt.core.io import read_lines
from phenomt.core.metrics.redundancy import (
    Embeddings,
    EmbeddingSynonyms,
    frequent_tokens,
    pool,
    score_sentences,
    tokenize,
)

MIRROR = str(Path(find_mirror(None, Path(__file__).resolve().parents[1]) or "shared/data")
             / "wmt/de-en/newstest2013.en")


def repetitive(tokens: list[str], rng: random.Random, doubled: float, copied: float) -> list[str]:
    """Double each token with probability ``doubled``; copy an earlier one with ``copied``."""
    out: list[str] = []
    for token in tokens:
        out.append(token)
        if rng.random() < doubled:
            out.append(token)
        if out and rng.random() < copied:
            out.append(rng.choice(out))
    return out


def best_of(repeats: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", default=MIRROR, help="one sentence a line (the references)")
    parser.add_argument("--sentences", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dim", type=int, default=512, help="random embedding dimension")
    parser.add_argument("--threshold", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    refs = list(islice(cycle(read_lines(args.text)), args.sentences))
    hyps = [" ".join(repetitive(r.split(), rng, 0.05, 0.05)) for r in refs]

    vocabulary = sorted({t for line in hyps + refs for t in line.split()})
    table = np.random.default_rng(args.seed).normal(size=(len(vocabulary), args.dim))
    start = time.perf_counter()
    synonyms = EmbeddingSynonyms(Embeddings(vocabulary, table), args.threshold)
    setup = time.perf_counter() - start

    def metric(with_refs: bool, stop: bool, embed: bool) -> Callable[[], object]:
        def run() -> object:
            hyp_tokens = [tokenize(h) for h in hyps]
            ref_tokens = [tokenize(r) for r in refs] if with_refs else None
            stopwords = frozenset(frequent_tokens(ref_tokens or hyp_tokens, 10)) if stop else (
                frozenset())
            return pool(score_sentences(hyp_tokens, references=ref_tokens, stopwords=stopwords,
                                        synonyms=synonyms if embed else None))
        return run

    def bleu() -> object:
        return BLEU().corpus_score(hyps, [refs])

    rows = [
        ("CRR/DRR, identical tokens only", metric(False, False, False)),
        ("CRR/DRR, + reference M~ + 10 stopwords", metric(True, True, False)),
        (f"CRR/DRR, + {args.dim}-d embeddings (threshold {args.threshold})",
         metric(True, True, True)),
        ("sacreBLEU corpus BLEU (13a)", bleu),
    ]
    scale = 10_000 / args.sentences
    result = metric(True, True, True)()
    print(f"{args.sentences} sentences from {args.text}, {len(vocabulary)} token types; "
          f"best of {args.repeats}")
    print(f"embedding setup (normalise {len(vocabulary)}x{args.dim}): {setup:.3f} s, once")
    print(f"{'configuration':<52} s / 10k sentences")
    for name, run in rows:
        print(f"{name:<52} {best_of(args.repeats, run) * scale:8.3f}")
    print(f"(with embeddings: CRR {result.crr:.4f}, DRR {result.drr:.4f}; "
          f"BLEU {bleu().score:.2f})")


if __name__ == "__main__":
    main()
