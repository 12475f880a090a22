"""``phenomt systems evaluate``: score your own outputs on a configured test set without
writing YAML.

    phenomt systems evaluate --testset newstest2017.en-de --hyp my.de [--hyp other.de]

adds each file as a system of that test set (named after the file unless given as
``NAME=FILE``), runs the workflow's system-scoring rules on it beside the configured systems,
and prints where the tables are. It sits beside the CLI, above the plan: it reads the config
as the workflow does and starts Snakemake.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import yaml

from phenomt.core.io import InputError, atomic_write
from phenomt.plan import PROJECT_ROOT, Plan, load_config


def parse_hyp(text: str) -> tuple[str, Path]:
    """``NAME=FILE`` or ``FILE`` (named after the file's stem)."""
    name, sep, path = text.partition("=")
    if not sep:
        name, path = Path(text).stem, text
    if not name or "/" in name or "." in name:
        raise argparse.ArgumentTypeError(f"a system name has no '/' or '.': {name!r}")
    return name, Path(path).resolve()


def with_systems(config: dict, testset: str, hyps: list[tuple[str, Path]]) -> dict:
    """``config`` with the files added as outputs of ``testset``; refuses unknown test sets,
    missing files and names that clash with configured systems."""
    testsets = config.get("systems", {}).get("testsets", {})
    if testset not in testsets:
        known = ", ".join(sorted(testsets)) or "none"
        raise InputError("--testset", f"not a configured test set {testset!r} (known: {known})")
    outputs = testsets[testset]["outputs"]
    for name, path in hyps:
        if not path.is_file():
            raise InputError(path, "no such file")
        if name in outputs:
            raise InputError(path, f"system name {name!r} is already configured for {testset}")
        outputs[name] = {"path": str(path), "origin": f"your file {path}"}
    return config


def _run(args: argparse.Namespace) -> int:
    config = load_config(args.configfile, validate=False)
    config = with_systems(config, args.testset, args.hyp)
    plan = Plan(load_config_dict(config))
    workdir = Path(args.directory).resolve()
    overlay = workdir / plan.out / "evaluate" / "config.yaml"
    with atomic_write(overlay) as handle:
        yaml.safe_dump(config, handle, sort_keys=False)
    targets = plan.systems.tables()
    cmd = [str(Path(sys.executable).with_name("snakemake")), "--snakefile",
           str(PROJECT_ROOT / "workflow" / "Snakefile"), "--configfile", str(overlay),
           "--directory", str(workdir), "--cores", str(args.cores), *targets]
    print("running:", " ".join(cmd), file=sys.stderr)
    result = subprocess.run(cmd, env=dict(os.environ), check=False)
    if result.returncode == 0:
        print("tables:")
        for target in targets:
            print(f"  {workdir / target}")
    return result.returncode


def load_config_dict(config: dict) -> dict:
    """A validated copy of ``config`` (the schema's defaults filled in)."""
    from copy import deepcopy

    from phenomt.plan import validate_config

    return validate_config(deepcopy(config))


def register_cli(tree) -> None:
    p = tree.add("systems evaluate", "Score your own system outputs on a configured test set",
                 _run)
    p.add_argument("--testset", required=True, help="a test set under systems.testsets")
    p.add_argument("--hyp", required=True, action="append", type=parse_hyp,
                   metavar="[NAME=]FILE", help="one hypothesis a line (repeatable)")
    p.add_argument("--configfile", default=str(PROJECT_ROOT / "config" / "config.yaml"))
    p.add_argument("--directory", default=".", help="where results/ is (default: here)")
    p.add_argument("--cores", type=int, default=2)
