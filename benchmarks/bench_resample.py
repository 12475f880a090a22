"""The one resampling engine against sacreBLEU's paired bootstrap, in one run on one core.

    PYTHONPATH=src python benchmarks/bench_resample.py [--systems 20] [--slices 10]

Real newstest2017 En->De outputs from the mirror (3,004 lines, 8 systems, reused to make
``--systems``): per-sentence statistics of BLEU, chrF, CRR and DRR are computed first (not
timed: every record keeps them), then the engine (:class:`Resampler`, one weight matrix for
the test set) gives every system x metric x (full set + slices) cell its 1,000 resampled
scores and interval, and every system its paired test against the baseline in every cell.
Beside it, on the same lines, sacreBLEU's own paired bootstrap for one pair, BLEU only
(``sacrebleu.significance.PairedTest``, 1,000 resamples).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: BLAS threads too
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from phenomt.core.fetch import find_mirror  # noqa: E402
from phenomt.core.metrics.base import get  # noqa: E402
from phenomt.core.metrics.resample import Resampler  # noqa: E402
from phenomt.plan import PROJECT_ROOT  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--slices", type=int, default=10)
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    mirror = find_mirror(None, PROJECT_ROOT)
    if mirror is None:
        raise SystemExit("no data mirror (../shared/data or $PHENOMT_MIRROR)")
    folder = mirror / "sysout" / "newstest2017.en-de"
    sources = (mirror / "wmt" / "de-en" / "newstest2017.en").read_text("utf-8").splitlines()
    references = (mirror / "wmt" / "de-en" / "newstest2017.de").read_text("utf-8").splitlines()
    outputs = {p.stem: p.read_text("utf-8").splitlines() for p in sorted(folder.glob("*.de"))}
    metrics = {"bleu": get("bleu"), "chrf": get("chrf"),
               "crr": get("crr", target_lang="de", source_lang="en"),
               "drr": get("drr", target_lang="de", source_lang="en")}
    start = time.perf_counter()
    stats = {key: {name: metric.statistics(lines, references, sources)
                   for name, lines in outputs.items()} for key, metric in metrics.items()}
    extraction = time.perf_counter() - start
    names = list(outputs)
    systems = [names[k % len(names)] for k in range(args.systems)]
    rng = np.random.default_rng(1)
    n = len(references)
    slices = [None, *(np.sort(rng.choice(n, size=int(n * f), replace=False))
                      for f in rng.uniform(0.05, 0.5, size=args.slices))]

    start = time.perf_counter()
    engine = Resampler(n, args.samples, seed=12345)
    cells = 0
    for key, metric in metrics.items():
        for rows in slices:
            observed, values = engine.resampled_many(metric.score,
                                                     [stats[key][s] for s in systems], rows)
            engine.intervals(values)
            engine.compare_all(observed, values, base=0)
            cells += len(systems)
    ours = time.perf_counter() - start

    from sacrebleu.significance import PairedTest

    os.environ["SACREBLEU_SEED"] = "12345"
    bleu = get("bleu").metric
    start = time.perf_counter()
    PairedTest([("baseline", outputs[names[0]]), ("system", outputs[names[1]])],
               {"BLEU": bleu}, [references], test_type="bs", n_samples=args.samples)()
    theirs = time.perf_counter() - start

    print(f"newstest2017 en-de: {n:,} lines, {args.samples:,} resamples, one core")
    print(f"statistics of {len(names)} real systems x 4 metrics (not timed below): "
          f"{extraction:.1f} s")
    print(f"phenomt engine: {args.systems} systems x 4 metrics (BLEU, chrF, CRR, DRR) x "
          f"(full set + {args.slices} slices) = {cells} cells, each with its interval and "
          f"its paired test against the baseline: {ours:.2f} s")
    print(f"sacreBLEU PairedTest, one pair, BLEU only (its statistics included): "
          f"{theirs:.2f} s")


if __name__ == "__main__":
    main()
