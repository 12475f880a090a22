# phenomt: phenomenon-level MT evaluation, from raw corpora to finished tables.
# Stages live in workflow/rules/*.smk; their logic lives in the phenomt package.
import json
import os
import shlex

from snakemake.utils import min_version, validate

from phenomt.core.fetch import find_mirror
from phenomt.plan.base import Plan, load_config
from phenomt.plan.ldd import bin_arguments

min_version("9.0")

# The default config is read only when no --configfile is given: Snakemake would otherwise
# deep-merge a paper config into it, mixing both configs' corpora and models.
if not config:
    config.update(load_config(f"{workflow.basedir}/config/config.yaml"))

validate(config, "workflow/schemas/config.schema.yaml")

PLAN = Plan(config)
PLAN.check()
OUT = PLAN.out
RES = PLAN.res
MIRROR = find_mirror(config.get("mirror"), workflow.basedir)
ENV = "../../envs/phenomt.yaml"  # relative to workflow/rules/*.smk


wildcard_constraints:
    lang="[a-z]{2,3}",
    corpus="[^/]+",
    model="[^/]+",
    download="[^/]+",
    part="[^/]+",
    side="src|tgt",
    lcorpus="[^/.]+",
    direction="[a-z]{2,3}-[a-z]{2,3}",
    phen="particle|reflexive|preposition-stranding",
    lbin="all|ge[0-9]+|eq[0-9]+",
    dist="[0-9]+",
    shard="[0-9]+",
    setting="regular|permuted|reversed|perposemb",
    run="[a-z]+\\.[a-z]+\\.[a-z]+\\.s[0-9]+",
    setname="[a-z-]+\\.[a-z]+[0-9]*",


include: "workflow/rules/data.smk"
include: "workflow/rules/text.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/decode.smk"
include: "workflow/rules/align.smk"
include: "workflow/rules/parse.smk"
include: "workflow/rules/challenge.smk"
include: "workflow/rules/score.smk"
include: "workflow/rules/locality.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/nat.smk"


rule all:
    input:
        PLAN.targets(),
    default_target: True
