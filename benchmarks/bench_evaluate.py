"""Cost of `phenomt evaluate` on a WMT test set of the mirror (newstest2017 En->De, 3,004
lines, real WMT17 outputs):

1. per system, in this process: sacreBLEU's BLEU with its bootstrap interval (1,000 samples)
   against the CRR/DRR record with its interval (the test set's tokens written once, as the
   workflow does), best of ``--repeats``;
2. end to end, `phenomt evaluate` in a fresh output folder: the first run with two systems
   (parse, aligner, challenge sets, every metric, tables, figures, report) and a run that adds
   a third system (only its jobs), wall time each.

    PYTHONPATH=src python benchmarks/bench_evaluate.py [--cores 2] [--skip-end-to-end]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_redundancy import best_of  # this folder is on sys.path when run as a script

from phenomt.core.fetch import find_mirror
from phenomt.systems import scores
from phenomt.systems.outputs import read_text

ROOT = Path(__file__).resolve().parents[1]
PAIR = "newstest2017.en-de"
SYSTEMS = ("uedin-nmt", "KIT", "online-B")


def per_system(mirror: Path, repeats: int, work: Path) -> None:
    src, ref = mirror / "wmt/en-de/newstest2017.en", mirror / "wmt/en-de/newstest2017.de"
    hyp = mirror / "sysout" / PAIR / f"{SYSTEMS[0]}.de"
    hyps, refs = read_text(hyp), read_text(ref)
    tokens = [str(work / "tokens.src"), str(work / "tokens.ref")]
    scores.write_tokens(read_text(src), "en", tokens[0])
    scores.write_tokens(refs, "de", tokens[1])
    bleu = best_of(repeats, lambda: scores.significance(hyps, refs, metrics=("bleu",),
                                                        samples=1000))
    redundancy = best_of(repeats, lambda: scores.redundancy_record(
        testset=PAIR, system="s", hyp=hyp, src=src, ref=ref, source_lang="en",
        target_lang="de", samples=1000, tokens=tokens))
    print(f"per system on {len(refs)} lines (best of {repeats}):")
    print(f"  sacreBLEU BLEU + interval:      {bleu:6.2f} s")
    print(f"  CRR/DRR record + interval:      {redundancy:6.2f} s  "
          f"({redundancy / bleu:.2f}x BLEU's)")


def end_to_end(mirror: Path, cores: int, work: Path) -> None:
    phenomt = Path(sys.executable).with_name("phenomt")
    src, ref = mirror / "wmt/en-de/newstest2017.en", mirror / "wmt/en-de/newstest2017.de"

    def run(*systems: str) -> float:
        hyps = [a for s in systems for a in ("--hyp", f"{s}={mirror / 'sysout' / PAIR}/{s}.de")]
        start = time.perf_counter()
        subprocess.run([str(phenomt), "evaluate", "--src", str(src), "--ref", str(ref),
                        "--langs", "en-de", *hyps, "--outdir", str(work / "eval"),
                        "--cores", str(cores)], check=True, capture_output=True)
        return time.perf_counter() - start

    first = run(*SYSTEMS[:2])
    added = run(SYSTEMS[2])
    print(f"phenomt evaluate, {cores} cores:")
    print(f"  first run, 2 systems (parse, aligner, every metric, report): {first:6.1f} s")
    print(f"  one more system (its jobs, the tables and the report):     {added:6.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-end-to-end", action="store_true")
    args = parser.parse_args()
    mirror = find_mirror(None, ROOT)
    if mirror is None:
        raise SystemExit("no data mirror: set PHENOMT_MIRROR")
    with tempfile.TemporaryDirectory(prefix="bench-evaluate-") as folder:
        per_system(mirror, args.repeats, Path(folder))
        if not args.skip_end_to_end:
            end_to_end(mirror, args.cores, Path(folder))


if __name__ == "__main__":
    main()
