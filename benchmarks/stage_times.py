"""Print the time and peak memory of every pipeline stage from Snakemake's benchmark files.

Usage: python benchmarks/stage_times.py [results/benchmarks]
Each rule with a ``benchmark:`` directive writes one TSV per job under
``<outdir>/benchmarks/<stage>/``; this sums them per stage.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd


def stage_times(root: Path) -> pd.DataFrame:
    rows = []
    for tsv in sorted(root.glob("*/*.tsv")):
        frame = pd.read_csv(tsv, sep="\t")
        rows.append({"stage": tsv.parent.name, "job": tsv.stem, "seconds": frame["s"].mean(),
                     "max_rss_mb": frame["max_rss"].max()})
    if not rows:
        raise SystemExit(f"no benchmark files under {root}: run the pipeline first")
    jobs = pd.DataFrame(rows)
    summary = jobs.groupby("stage").agg(jobs=("job", "count"), seconds=("seconds", "sum"),
                                        slowest_job_s=("seconds", "max"),
                                        max_rss_mb=("max_rss_mb", "max"))
    return summary.sort_values("seconds", ascending=False)


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "results/benchmarks")
    summary = stage_times(root)
    print(summary.round(1).to_string())
    print(f"\ntotal job time: {summary['seconds'].sum():.1f} s "
          "(wall time is lower when jobs run in parallel)")


if __name__ == "__main__":
    main()
