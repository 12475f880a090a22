#!/usr/bin/env bash
# Run by `snakemake --sdm conda` inside the new environment, after envs/phenomt.yaml.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pip install --no-deps --no-build-isolation fairseq-fixed==0.12.3.1
pip install -c "$ROOT/envs/constraints.txt" "$ROOT"
