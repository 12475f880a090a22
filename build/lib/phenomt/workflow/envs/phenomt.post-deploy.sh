#!/usr/bin/env bash
# Run by `snakemake --sdm conda` inside the new environment, after workflow/envs/phenomt.yaml.
# Snakemake runs a copy of this file (under .snakemake/conda/) in the run's working directory,
# so nothing here is found relative to the file: phenomt comes from $PHENOMT_SOURCE (anything
# pip installs: a checkout, a wheel, a git URL), else from the working directory when it is a
# checkout (then with its pins, envs/constraints.txt).
set -euo pipefail
pip install --no-deps --no-build-isolation fairseq-fixed==0.12.3.1
if [ -n "${PHENOMT_SOURCE:-}" ]; then
  pip install "$PHENOMT_SOURCE"
elif [ -f pyproject.toml ] && [ -f envs/constraints.txt ]; then
  pip install -c envs/constraints.txt .
else
  echo "phenomt.post-deploy.sh: not run from a phenomt checkout: set PHENOMT_SOURCE to what" \
       "pip should install phenomt from" >&2
  exit 1
fi
