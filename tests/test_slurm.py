"""Part of the tiny config on a real one-node SLURM cluster, through config/profiles/slurm
unchanged: the BLEU table (data preparation, every AR training and decoding) and the decoding
speed of the AR teacher (a job that asks for a node of its own). About 80 submissions instead
of the whole run's 290: each costs about 6 s of SLURM and Snakemake start-up on 2 cores. The
rules left out take their partition and GPU from the same profile entries (``set-resources``
for the other GPU rules, ``default-resources`` for the rest) and their threads, memory and
time from the config, as those run here do.

The BLEU table must equal that of the local run byte for byte; training and decoding must
reach the ``gpu`` partition with a GPU, the other rules ``cpu``; every job must get the
threads, memory and time its rule declares. Without root or the Debian packages the
test is skipped, unless ``PHENOMT_REQUIRE_SLURM`` is set (CI sets it).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from phenomt.nat.recipes import AR_SYSTEM
from phenomt.plan import Plan, load_config
from tests.conftest import ROOT, TINY_CONFIG, require_long_runs, run_snakemake, tiny_workdir
from tests.runs import differing_tables
from tests.slurm_cluster import (
    SlurmCluster,
    parse_scontrol_record,
    start_cluster,
    unavailable_reason,
)

PROFILE = ROOT / "config" / "profiles" / "slurm"
#: More cores than any rule asks for, for the dry run that tells what each job asks for.
DRY_RUN_CORES = 1024


def skip_or_fail(message: str) -> None:
    """Skip the test, or fail it when $PHENOMT_REQUIRE_SLURM is set (CI sets it)."""
    if os.environ.get("PHENOMT_REQUIRE_SLURM"):
        pytest.fail(message + ", and PHENOMT_REQUIRE_SLURM is set")
    pytest.skip(message)


# Session scope, like tiny_run: pytest sets up wider-scoped fixtures first, and a test that
# skips should skip before the reference run is made for it.
@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory) -> Iterator[SlurmCluster]:
    require_long_runs("the tiny config on a SLURM cluster")
    reason = unavailable_reason()
    if reason is not None:
        skip_or_fail(f"no SLURM test cluster: {reason}")
    cluster = start_cluster(tmp_path_factory.mktemp("slurm"))
    try:
        yield cluster
    finally:
        cluster.stop()


# -- what each job should have asked for -----------------------------------------------------


def local_rules() -> set[str]:
    """The rules marked ``localrule: True`` in the workflow: never submitted."""
    found = set()
    for path in [ROOT / "workflow" / "Snakefile", *(ROOT / "workflow" / "rules").glob("*.smk")]:
        text = path.read_text(encoding="utf-8")
        found.update(re.findall(r"^rule (\w+):\n    localrule: True\n", text, re.M))
    assert found, "no local rules in the workflow"
    return found


def cluster_targets(plan: Plan) -> tuple[list[str], list[str]]:
    """What the cluster run makes: the BLEU table's files, and with them the AR teacher's
    decoding speed (every target)."""
    tables = list(plan.table_files("bleu").values())
    return tables, [*tables, plan.nat.speed_json(plan.nat.teachers[0], AR_SYSTEM)]


def planned_jobs(workdir: Path, targets: list[str]) -> dict[tuple[str, str], dict]:
    """Snakemake's own account of every job that makes ``targets``, from a dry run with the
    profile: (rule, wildcard values joined by "_" with "/" as "_", as the executor names its
    jobs) → ``threads``, the resources and ``local`` (a job Snakemake runs itself: ``all``,
    the local rules)."""
    # --cores: a dry run would cap every rule's threads at 1 without it
    result = run_snakemake("--dry-run", "--cores", str(DRY_RUN_CORES), "--profile", str(PROFILE),
                           "--configfile", str(TINY_CONFIG), "--directory", str(workdir), *targets)
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:\n)", result.stdout + result.stderr):
        header = re.match(r"(local)?rule (\w+):\n", block)
        if not header:
            continue
        fields = dict(re.findall(r"^    (\w+): (.*)$", block, re.M))
        wildcards = [item.split("=", 1)[1] for item in fields.get("wildcards", "").split(", ")
                     if "=" in item]
        resources = dict(item.split("=", 1) for item in fields["resources"].split(", "))
        local = bool(header.group(1)) or header.group(2) in local_rules()
        # the executor writes a "/" inside a wildcard value as "_" in the job's comment
        jobs[(header.group(2), "_".join(wildcards).replace("/", "_"))] = {
            "threads": fields.get("threads", "1"), "local": local, **resources}
    return jobs


def rule_of(record: dict[str, str]) -> tuple[str, str]:
    """(rule, wildcard values) of a SLURM job, from the comment the executor gives it:
    ``rule_<rule>`` or ``rule_<rule>_wildcards_<values joined by _>``."""
    rule, _, wildcards = record["Comment"].removeprefix("rule_").partition("_wildcards_")
    return rule, wildcards


def minutes(time_limit: str) -> int:
    """``[D-]HH:MM:SS`` (scontrol's TimeLimit) in minutes."""
    days, _, clock = time_limit.rpartition("-")
    hours, mins, _secs = (int(part) for part in clock.split(":"))
    return int(days or 0) * 1440 + hours * 60 + mins


def megabytes(memory: str) -> int:
    """``4000M`` / ``8G`` (scontrol's MinMemoryNode) in megabytes."""
    scale = {"M": 1, "G": 1024, "T": 1024**2}
    return int(float(memory[:-1]) * scale[memory[-1]])


def requested(record: dict[str, str]) -> dict[str, object]:
    """What SLURM granted a job, in the units the rules use."""
    return {"partition": record["Partition"],
            "gpu": "gpu:1" in record.get("TresPerJob", ""),
            "threads": int(record["NumCPUs"]),
            "mem_mb": megabytes(record["MinMemoryNode"]),
            "runtime": minutes(record["TimeLimit"])}


def expected(planned: dict, node_cpus: int) -> dict[str, object]:
    """What a job should get, from the dry run's account of it. A job that asks for a node
    of its own (``--exclusive``) gets all its CPUs, whatever its threads."""
    exclusive = "--exclusive" in planned.get("slurm_extra", "")
    return {"partition": planned["slurm_partition"], "gpu": int(planned["gpu"]) > 0,
            "threads": node_cpus if exclusive else int(planned["threads"]),
            "mem_mb": int(planned["mem_mb"]), "runtime": int(planned["runtime"])}


# -- the run ---------------------------------------------------------------------------------


@pytest.mark.integration
def test_tiny_config_on_slurm_gives_the_local_bleu_table(slurm_cluster, tiny_run, tmp_path,
                                                         monkeypatch):
    # Snakemake and the jobs it submits find the cluster through these
    for name in ("SLURM_CONF", "PATH"):
        monkeypatch.setenv(name, slurm_cluster.env[name])
    workdir = tiny_workdir(tmp_path / "run")
    config = load_config(TINY_CONFIG)
    plan = Plan(config, str(ROOT))
    tables, targets = cluster_targets(plan)
    planned = planned_jobs(workdir, targets)
    assert {"train", "generate", "nat_speed"} <= {rule for rule, _ in planned}
    start = time.monotonic()
    result = run_snakemake("--profile", str(PROFILE), "--configfile", str(TINY_CONFIG),
                           "--directory", str(workdir), *targets, timeout=2400)
    seconds = time.monotonic() - start
    assert result.returncode == 0, result.stderr[-5000:] + "\n" + slurm_cluster.log_tail()
    assert differing_tables(tiny_run, workdir, lambda name: name.split(".", 1)[0] == "bleu") == []
    made = (workdir / tables[0]).parent.iterdir()
    assert sorted(p.name for p in made) == sorted(Path(t).name for t in tables)

    records = [record for record in slurm_cluster.jobs() if record["JobState"] == "COMPLETED"]
    by_rule: dict[str, list[dict[str, str]]] = {}
    for record in records:
        rule, wildcards = rule_of(record)
        by_rule.setdefault(rule, []).append(record)
        assert requested(record) == expected(planned[(rule, wildcards)],
                                             slurm_cluster.cpus), (rule, wildcards)
    # every job of the run went through SLURM, except those of the local rules
    submitted = {rule_of(record) for record in records}
    assert {job for job, info in planned.items() if not info["local"]} <= submitted
    assert not {job for job, info in planned.items() if info["local"]} & submitted

    # training and decoding on the GPU partition with a GPU, as the profile asks; their
    # threads, memory and time are the model's resources from the config
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    gpu_rules = {rule for rule, res in profile["set-resources"].items() if res.get("gpu")}
    assert {"train", "generate"} <= gpu_rules & set(by_rule)
    for rule in ("train", "generate"):
        for record in by_rule[rule]:
            wildcards = rule_of(record)[1]  # model first: <model>[_<test set>]
            model = next(m for m in config["models"] if f"{wildcards}_".startswith(f"{m}_"))
            granted = requested(record)
            assert granted["partition"] == "gpu" and granted["gpu"], record
            for key in ("threads", "mem_mb", "runtime"):
                assert granted[key] == plan.models.resource(model, key), (rule, key)
    for rule, jobs in by_rule.items():
        on_gpu = rule in gpu_rules
        assert {requested(job)["partition"] for job in jobs} == {"gpu" if on_gpu else "cpu"}
        assert all(requested(job)["gpu"] == on_gpu for job in jobs), rule
    # the speed measurement asks for a node of its own and gets all its CPUs
    assert {requested(job)["threads"] for job in by_rule["nat_speed"]} == {slurm_cluster.cpus}
    partitions = {rule: sorted({job["Partition"] for job in jobs})
                  for rule, jobs in sorted(by_rule.items())}
    print(f"\nSLURM run: {seconds:.0f} s, {len(records)} jobs; partitions: {partitions}")


def test_scontrol_records_are_parsed():
    record = parse_scontrol_record(
        "JobId=7 JobName=abc Partition=gpu NumCPUs=1 TimeLimit=02:00:00 "
        "MinMemoryNode=4000M Comment=rule_train_wildcards_transformer.de-en "
        "TresPerJob=gres:gpu:1")
    assert rule_of(record) == ("train", "transformer.de-en")
    assert requested(record) == {"partition": "gpu", "gpu": True, "threads": 1,
                                 "mem_mb": 4000, "runtime": 120}
    assert minutes("1-00:30:00") == 1470 and megabytes("8G") == 8192


def test_local_rules_are_downloads_tables_and_figures():
    rules = local_rules()
    assert {"all", "fetch", "table_bleu", "nat_figure_speedup", "table_training",
            "nat_table_claims", "table_locality_claims"} <= rules
    assert not rules & {"train", "generate", "parse_shard", "ldd_score", "systems_score"}


def test_without_root_the_cluster_test_skips_unless_ci_requires_it(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    reason = unavailable_reason()
    assert reason is not None and "root" in reason
    monkeypatch.delenv("PHENOMT_REQUIRE_SLURM", raising=False)
    with pytest.raises(pytest.skip.Exception, match="root"):
        skip_or_fail(reason)
    monkeypatch.setenv("PHENOMT_REQUIRE_SLURM", "1")
    with pytest.raises(pytest.fail.Exception, match="PHENOMT_REQUIRE_SLURM"):
        skip_or_fail(reason)
