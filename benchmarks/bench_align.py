"""Throughput of fast_align word alignment: one process against contiguous shards on N cores.

Trains forward and reverse models on the input (or reuses ``--model-dir``), then aligns the
input with :func:`phenomt.core.align.align_sentences`. Wall times are end to end, best of
``--repeats``: they include loading the saved models, and for the sharded run starting the worker
processes. CPU time (this process plus its finished children) is printed beside wall time, so a
machine shared with other work shows as wall time well above CPU time / processes. Tokens count
both sides. Also checks that the sharded output equals the single-process one.

    PYTHONPATH=src python benchmarks/bench_align.py [--src F --tgt E] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from phenomt.core import align
from phenomt.core.fetch import find_mirror

MIRROR = Path(find_mirror(None, Path(__file__).resolve().parents[1]) or "shared/data") / \
    "wmt/de-en/newstest2013"


def cpu_seconds() -> float:
    """CPU time of this process and of its reaped child processes."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def best_of(repeats: int, run: Callable[[], object]) -> tuple[float, float, object]:
    """Wall and CPU seconds of the fastest of ``repeats`` runs, and the last run's result."""
    best, best_cpu, result = float("inf"), 0.0, None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), cpu_seconds()
        result = run()
        wall = time.perf_counter() - start
        if wall < best:
            best, best_cpu = wall, cpu_seconds() - start_cpu
    return best, best_cpu, result


def report(label: str, seconds: float, cpu: float, sentences: int, tokens: int) -> None:
    print(f"{label:<30} {seconds:8.2f} s wall {cpu:8.2f} s CPU {sentences / seconds:8.0f} sent/s "
          f"{tokens / seconds:9.0f} tok/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", default=str(MIRROR.with_suffix(".de")))
    parser.add_argument("--tgt", default=str(MIRROR.with_suffix(".en")))
    parser.add_argument("--model-dir", help="trained models to reuse (default: train anew)")
    parser.add_argument("--iterations", type=int, default=align.DEFAULT_ITERATIONS)
    parser.add_argument("--jobs", type=int, default=2, help="processes for the sharded run")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    src_sents, tgt_sents = align.read_parallel(args.src, args.tgt)
    sentences = len(src_sents)
    tokens = sum(map(len, src_sents)) + sum(map(len, tgt_sents))
    print(f"input: {args.src} / {args.tgt}: {sentences} pairs, {tokens} tokens")
    print(f"{os.cpu_count()} CPUs visible; load average before start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    with tempfile.TemporaryDirectory() as scratch:
        model_dir = args.model_dir
        if model_dir is None:
            model_dir = str(Path(scratch) / "model")
            wall, cpu, _ = best_of(1, lambda: align.train_models(
                [(args.src, args.tgt)], model_dir, args.iterations))
            report(f"train fwd+rev, {args.iterations} iter.", wall, cpu, sentences, tokens)

        wall, cpu, _ = best_of(args.repeats, lambda: align.Aligner(model_dir))
        print(f"{'load both models':<30} {wall:8.2f} s wall {cpu:8.2f} s CPU")
        single, cpu, expected = best_of(
            args.repeats, lambda: align.align_sentences(model_dir, src_sents, tgt_sents, jobs=1))
        report("align, 1 process", single, cpu, sentences, tokens)
        sharded, cpu, result = best_of(
            args.repeats,
            lambda: align.align_sentences(model_dir, src_sents, tgt_sents, jobs=args.jobs))
        report(f"align, {args.jobs} shards/processes", sharded, cpu, sentences, tokens)
        print(f"speed-up {single / sharded:.2f}x; sharded output identical: {result == expected}")


if __name__ == "__main__":
    main()
