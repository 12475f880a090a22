#!/usr/bin/env bash
# Run one config at two commits on this machine and compare what they produce:
#   scripts/compare_runs.sh OLD_COMMIT NEW_COMMIT [CONFIG] [WORKDIR]
# CONFIG defaults to .test/config/tiny.yaml of the current checkout (used for both commits).
# Each commit runs from its own worktree and package sources (PYTHONPATH), with the venv's
# tools. Compares results/tables/ (timing tables aside: nat_speed, training) and the challenge
# sets; exits non-zero when they differ.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OLD=${1:?usage: compare_runs.sh OLD_COMMIT NEW_COMMIT [CONFIG] [WORKDIR]}
NEW=${2:?usage: compare_runs.sh OLD_COMMIT NEW_COMMIT [CONFIG] [WORKDIR]}
CONFIG=$(realpath "${3:-$ROOT/.test/config/tiny.yaml}")
WORK=${4:-$(mktemp -d -t phenomt-compare-XXXXXX)}
VENV_BIN=${VENV_BIN:-$ROOT/.venv/bin}
export PHENOMT_MIRROR=${PHENOMT_MIRROR:-$(realpath "$ROOT/../shared/data")}
export OMP_NUM_THREADS=1 TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1

cleanup() {
  for name in old new; do
    git -C "$ROOT" worktree remove --force "$WORK/$name/$name-tree" 2>/dev/null || true
  done
}
trap cleanup EXIT

run_at() {  # run_at COMMIT NAME
  local tree="$WORK/$2/$2-tree" run="$WORK/$2/run"
  git -C "$ROOT" worktree add --force --detach "$tree" "$1" >/dev/null
  mkdir -p "$run" && ln -sfn "$tree/tests" "$run/tests"
  local snakefile="$tree/workflow/Snakefile"
  [ -f "$snakefile" ] || snakefile="$tree/Snakefile"
  echo "[compare] $2 = $1: running $CONFIG in $run"
  PYTHONPATH="$tree/src" PATH="$VENV_BIN:$PATH" "$VENV_BIN/snakemake" -s "$snakefile" \
    --configfile "$CONFIG" --cores 2 --directory "$run" > "$WORK/$2.log" 2>&1 \
    || { echo "[compare] $2 failed: see $WORK/$2.log"; exit 1; }
}

run_at "$OLD" old
run_at "$NEW" new
status=0
diff -r --exclude 'nat_speed.*' --exclude 'training.*' "$WORK/old/run/results/tables" "$WORK/new/run/results/tables" \
  || status=1
diff -r "$WORK/old/run/results/ldd/sets" "$WORK/new/run/results/ldd/sets" || status=1
if [ "$status" -eq 0 ]; then
  echo "[compare] identical: tables (nat_speed aside) and challenge sets ($WORK)"
else
  echo "[compare] DIFFERENT ($WORK)"
fi
exit "$status"
