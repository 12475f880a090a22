"""CPU time of the Snakemake process itself (and of any scheduler solver it spawns) during a
real run, per job: the overhead the jobs do not get.

    python benchmarks/bench_scheduler.py [--configfile .test/config/tiny.yaml] [--cores 2]
        [--directory DIR] [-- extra snakemake arguments, e.g. --scheduler ilp]

Prints the figures; the run's results stay in DIR (a temporary folder by default).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
SOLVERS = ("cbc", "glpsol", "highs")


def _cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def run(args: argparse.Namespace) -> dict[str, float]:
    workdir = Path(args.directory or tempfile.mkdtemp(prefix="phenomt-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if not (workdir / "tests").exists():  # the tiny config reads tests/data/...
        (workdir / "tests").symlink_to(ROOT / "tests")
    bindir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",
               OMP_NUM_THREADS="1", TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1")
    cmd = [str(bindir / "snakemake"), "--snakefile", str(ROOT / "workflow" / "Snakefile"),
           "--cores", str(args.cores), "--configfile", str(Path(args.configfile).resolve()),
           "--directory", str(workdir), *args.extra]
    log_path = workdir / "bench_scheduler.log"
    start = time.monotonic()
    with open(log_path, "w", encoding="utf-8") as log:
        proc = psutil.Popen(cmd, stdout=log, stderr=log, env=env)
        own, solver_seen = 0.0, {}
        while proc.poll() is None:
            try:
                own = _cpu(proc)
                for child in proc.children(recursive=True):
                    if child.name().lower() in SOLVERS:
                        solver_seen[child.pid] = _cpu(child)
            except psutil.Error:
                pass
            time.sleep(args.interval)
    wall = time.monotonic() - start
    text = log_path.read_text(encoding="utf-8")
    if proc.returncode != 0:
        sys.exit(f"snakemake failed ({proc.returncode}); see {log_path}")
    done = re.findall(r"(\d+) of (\d+) steps \(100%\) done", text)
    jobs = int(done[-1][1]) if done else 0
    solver = sum(solver_seen.values())
    return {"jobs": jobs, "wall_s": wall, "snakemake_cpu_s": own, "solver_cpu_s": solver,
            "per_job_s": (own + solver) / jobs if jobs else float("nan"),
            "workdir": str(workdir)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configfile", default=str(ROOT / ".test" / "config" / "tiny.yaml"))
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--directory")
    parser.add_argument("--interval", type=float, default=0.2, help="sampling period (s)")
    parser.add_argument("extra", nargs="*", help="after --: more snakemake arguments")
    result = run(parser.parse_args())
    print(f"jobs                 {result['jobs']}")
    print(f"wall time            {result['wall_s']:.0f} s")
    print(f"snakemake CPU        {result['snakemake_cpu_s']:.1f} s")
    print(f"solver CPU           {result['solver_cpu_s']:.1f} s")
    print(f"overhead per job     {result['per_job_s']:.3f} CPU-s")
    print(f"results in           {result['workdir']}")


if __name__ == "__main__":
    main()
