"""Adding one system to a finished run: which jobs Snakemake plans, and how long they take.

    python benchmarks/bench_add_system.py --directory RUN_DIR [--configfile CONFIG]
        [--testset T ...] [--cores 2]

For every chosen test set (default: all of `systems.testsets`) the baseline's output is copied
and added as one more system (`--name`, default `added`), through the same path as
`phenomt systems evaluate`.
Prints the dry run's job counts per rule (only the new system's scoring jobs and the tables
should appear) and the wall time of running them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

from phenomt.evaluate import load_config_dict, with_systems
from phenomt.plan import PROJECT_ROOT, Plan, load_config


def overlay_with_added_system(configfile: Path, testsets: list[str] | None, scratch: Path,
                              directory: Path, name: str = "added"
                              ) -> tuple[Path, list[str], list[str]]:
    """A config with ``name`` (a copy of each baseline's output) on every chosen test set,
    the test sets, and the system tables (the targets: the rest of the run is not asked for)."""
    config = load_config(configfile, validate=False)
    plan = Plan(load_config_dict(config))
    chosen = testsets or plan.systems.testsets
    for testset in chosen:
        baseline = plan.systems.baseline(testset) or plan.systems.systems(testset)[0]
        copy = scratch / f"{testset}.{name}"
        shutil.copy(directory / plan.systems.hyp(testset, baseline), copy)
        config = with_systems(config, testset, [(name, copy.resolve())])
    path = scratch / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path, chosen, plan.systems.tables()


def snakemake(directory: Path, configfile: Path, cores: int, *extra: str
              ) -> subprocess.CompletedProcess:
    cmd = [str(Path(sys.executable).with_name("snakemake")), "--snakefile",
           str(PROJECT_ROOT / "workflow" / "Snakefile"), "--configfile", str(configfile),
           "--directory", str(directory), "--cores", str(cores), *extra]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)


def planned_jobs(result: subprocess.CompletedProcess) -> Counter:
    """Jobs per rule from a dry run's "Job stats" table."""
    text = result.stdout + result.stderr
    if "Nothing to be done" in text:
        return Counter()
    table = text.split("Job stats:", 1)[1].split("Reasons:", 1)[0]
    return Counter({m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M)
                    if m[1] != "total"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--directory", required=True, help="a finished run's working folder")
    parser.add_argument("--configfile", default=str(PROJECT_ROOT / "config" / "config.yaml"))
    parser.add_argument("--testset", action="append")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--name", default="added", help="the added system's name")
    args = parser.parse_args()
    directory = Path(args.directory).resolve()
    with tempfile.TemporaryDirectory(prefix="phenomt-add-") as scratch:
        overlay, testsets, targets = overlay_with_added_system(Path(args.configfile), args.testset,
                                                      Path(scratch), directory, args.name)
        dry = snakemake(directory, overlay, args.cores, "-n", *targets)
        if dry.returncode != 0:
            sys.exit(dry.stderr[-3000:])
        jobs = planned_jobs(dry)
        print(f"test sets: {', '.join(testsets)}")
        for rule, count in sorted(jobs.items()):
            print(f"  planned {rule:28s} {count}")
        start = time.monotonic()
        run = snakemake(directory, overlay, args.cores, *targets)
        if run.returncode != 0:
            sys.exit(run.stderr[-3000:])
        print(f"wall time of the added system's jobs: {time.monotonic() - start:.1f} s")


if __name__ == "__main__":
    main()
