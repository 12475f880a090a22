#!/usr/bin/env bash
# Create the project's virtualenv and install everything, printing each step.
# Called by `make setup`; safe to re-run (pip skips what is already installed).
set -euo pipefail
VENV=${1:-.venv}
PYTHON=${PYTHON:-python3}
C="-c envs/constraints.txt"

step() { printf '\n[setup] %s\n' "$*"; }

if [ ! -x "$VENV/bin/python" ]; then
  step "creating virtualenv $VENV with $($PYTHON --version)"
  "$PYTHON" -m venv "$VENV"
fi
PIP="$VENV/bin/python -m pip --disable-pip-version-check"
step "installing torch (CPU wheel), numpy and cython"
$PIP install -q $C torch==2.13.0 numpy cython setuptools wheel
step "installing fairseq's dependencies (envs/fairseq-deps.txt)"
$PIP install -q $C -r envs/fairseq-deps.txt
if ! "$VENV/bin/python" -c "import fairseq" >/dev/null 2>&1; then
  step "building fairseq-fixed 0.12.3.1 against torch (takes a few minutes)"
  $PIP install -q $C --no-deps --no-build-isolation fairseq-fixed==0.12.3.1
else
  step "fairseq already installed"
fi
step "installing phenomt and its dependencies (pip's note that fairseq-fixed wants torchaudio is expected: see README)"
$PIP install -q $C -e '.[dev,comet,slurm]'
# pip compiles what it installs, but not an editable package: where PYTHONDONTWRITEBYTECODE
# is set (as in many containers) every job of a run would compile phenomt's modules again
# (0.2 to 0.4 s of CPU per process, on hundreds of short jobs).
step "compiling phenomt's modules"
"$VENV/bin/python" -m compileall -q src/phenomt
step "done: $("$VENV/bin/phenomt" --version), torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)')"
