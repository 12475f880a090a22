"""Print how long `snakemake -n` takes to build the DAG for each config (wall and CPU time).

Usage: python benchmarks/dag_times.py [config ...]   (default: config/config.yaml and
config/papers/*.yaml)
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def dag_time(config: Path) -> tuple[float, float, int]:
    snakemake = Path(sys.executable).with_name("snakemake")
    with tempfile.TemporaryDirectory() as workdir:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        snakefile = ROOT / "workflow" / "Snakefile"
        result = subprocess.run([str(snakemake), "-n", "--snakefile", str(snakefile),
                                 "--configfile", str(config), "--directory", workdir],
                                capture_output=True, text=True, check=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    jobs = next((int(line.split()[-1]) for line in result.stdout.splitlines()
                 if line.startswith("total")), -1)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, jobs


def main() -> None:
    configs = [Path(a) for a in sys.argv[1:]] or [
        ROOT / "config" / "config.yaml", *sorted((ROOT / "config" / "papers").glob("*.yaml"))]
    print(f"{'config':32} {'jobs':>6} {'wall s':>8} {'cpu s':>8}")
    for config in configs:
        wall, cpu, jobs = dag_time(config)
        print(f"{config.name:32} {jobs:>6} {wall:>8.2f} {cpu:>8.2f}")


if __name__ == "__main__":
    main()
