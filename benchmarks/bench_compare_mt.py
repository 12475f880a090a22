"""`phenomt evaluate` beside compare-mt on the same files, timed in one run: newstest2017
En->De (3,004 lines) of the mirror, uedin-nmt against online-B.

compare-mt comes from the package index, installed into a folder of this run (``pip install
--target``; the benchmark needs the index, as CI has it); it runs its default analyses (BLEU,
length ratio, word accuracy by frequency bucket, sentence buckets, n-gram differences,
examples) on the same files, which it splits on whitespace. phenomt runs ``evaluate
--no-ldd --no-report`` in a fresh output folder: its first run, then the run that adds one
more system (only that system's jobs); then the same two runs with the LDD challenge sets
(parsing the test set with UDPipe, aligning it, extracting and scoring the sets), in another
fresh folder, and a first run with the sets but without the part-of-speech buckets
(``--no-pos-buckets``: no tagging of the reference). The first runs with the sets parse with an
empty cache (a fresh ``--cache-dir``, or ``--no-cache``); one more first run, in another
fresh folder, then finds the test set's parses and aligner models in the cache the first one
filled, as a later evaluation of other systems on the same test set does. Each measurement is
taken ``--repeat`` times (default 3), the tools taking turns, each phenomt run in a fresh
folder; the median is printed with the range, so that the first tool to read the files or
import its modules is not the only one that pays for a cold cache.

    PYTHONPATH=src python benchmarks/bench_compare_mt.py [--cores 2] [--compare-mt DIR]
        [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from phenomt.core.fetch import find_mirror

ROOT = Path(__file__).resolve().parents[1]
PAIR = "newstest2017.en-de"
SYSTEMS = ("uedin-nmt", "online-B", "KIT")
COMPARE_MT = "compare-mt==0.2.10"


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def install_compare_mt(target: Path) -> None:
    if not (target / "compare_mt").is_dir():
        # absl-py and six besides: its other dependencies (nltk, numpy, matplotlib,
        # sacrebleu) are phenomt's too
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                        str(target), COMPARE_MT, "absl-py", "six"], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--compare-mt", type=Path,
                        help="a folder with compare-mt installed (default: install it here)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    mirror = find_mirror(None, ROOT)
    if mirror is None:
        sys.exit("no data mirror: set PHENOMT_MIRROR")
    src, ref = mirror / "wmt/en-de/newstest2017.en", mirror / "wmt/en-de/newstest2017.de"
    outputs = [mirror / "sysout" / PAIR / f"{s}.de" for s in SYSTEMS]
    with tempfile.TemporaryDirectory(prefix="bench-compare-mt-") as scratch:
        work = Path(scratch)
        target = args.compare_mt or work / "compare-mt"
        install_compare_mt(target)
        env = dict(os.environ, PYTHONPATH=str(target))
        phenomt = str(Path(sys.executable).with_name("phenomt"))

        def evaluate(outdir: str, *hyps: Path, ldd: bool = False, more: tuple[str, ...] = ()
                     ) -> float:
            pairs = [a for h in hyps for a in ("--hyp", f"{h.stem}={h}")]
            return timed([phenomt, "evaluate", "--src", str(src), "--ref", str(ref), "--langs",
                          "en-de", *pairs, *([] if ldd else ["--no-ldd"]), *more, "--no-report",
                          "--cores", str(args.cores), "--outdir", str(work / outdir)])

        times: dict[str, list[float]] = {key: [] for key in LABELS}
        for run in range(args.repeat):
            times["compare"].append(timed([sys.executable, "-m", "compare_mt.compare_mt_main",
                                           str(ref), *map(str, outputs[:2])], env))
            times["first"].append(evaluate(f"eval{run}", *outputs[:2]))
            times["more"].append(evaluate(f"eval{run}", outputs[2]))
            cache = ("--cache-dir", str(work / f"cache{run}"))
            times["ldd_first"].append(evaluate(f"eval-ldd{run}", *outputs[:2], ldd=True,
                                               more=cache))
            times["ldd_more"].append(evaluate(f"eval-ldd{run}", outputs[2], ldd=True,
                                              more=cache))
            times["ldd_no_pos"].append(evaluate(f"eval-ldd-no-pos{run}", *outputs[:2], ldd=True,
                                                more=("--no-pos-buckets", "--no-cache")))
            times["ldd_cached"].append(evaluate(f"eval-ldd-cached{run}", *outputs[:2], ldd=True,
                                                more=cache))
    median = {key: statistics.median(values) for key, values in times.items()}
    print(f"{PAIR}, {SYSTEMS[0]} against {SYSTEMS[1]} ({args.cores} cores; median of "
          f"{args.repeat} runs [fastest, slowest]):")
    for key, label in LABELS.items():
        ratio = (f" ({median[key] / median['compare']:.1f}x compare-mt)"
                 if key == "first" else "")
        print(f"  {label:52} {median[key]:6.1f} s [{min(times[key]):.1f}, "
              f"{max(times[key]):.1f}]{ratio}")


#: What is timed, in the order printed.
LABELS = {"compare": f"compare-mt {COMPARE_MT.split('==')[1]} default analyses",
          "first": "phenomt evaluate --no-ldd, first run",
          "more": f"phenomt evaluate --no-ldd, one more system ({SYSTEMS[2]})",
          "ldd_first": "phenomt evaluate with the LDD sets, first run",
          "ldd_more": "phenomt evaluate with the LDD sets, one more system",
          "ldd_no_pos": "the LDD sets, --no-pos-buckets, first run",
          "ldd_cached": "the LDD sets, first run, parses and aligner cached"}


if __name__ == "__main__":
    main()
