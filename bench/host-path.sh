#!/usr/bin/env bash
# The host path's measurements in one call on a GPU machine: build, the
# GPU correctness tests (bench/gpu-check.sh without the peak suite), small
# calls under the host-path settings taking turns (bench/calls-ab.sh: the
# default, without the packs, without early flushes, without both, and
# any SETTING given), then the HaplotypeCaller-like mix and the long
# suite in one call each (clphmm-bench -v: per-stage times), the mix also
# without early flushes. Writes everything to $OUT (default bench/out).
#
#   OUT=dir bench/host-path.sh [SETTING...]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
BUILD=${BUILD:-build-bench}
export BUILD
mkdir -p "$OUT"
echo "# commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  "date=$(date -u +%Y-%m-%dT%H:%MZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
SKIP_PEAK=1 SKIP_SASS=1 CPU_BACKENDS= OUT=$OUT bench/gpu-check.sh |
  tee "$OUT/gpu-check.txt" || exit 1
echo "## small calls: bench/calls-ab.sh"
ROUNDS=${ROUNDS:-3} bench/calls-ab.sh - CLPHMM_PACK_BYTES=0 \
  CLPHMM_EARLY_FLUSH=0 "CLPHMM_PACK_BYTES=0 CLPHMM_EARLY_FLUSH=0" "$@" |
  tee "$OUT/calls-ab.txt"
bench=$BUILD/tools/clphmm-bench
for s in - CLPHMM_EARLY_FLUSH=0; do
  echo "## mix=hc,cells=6e10 -n 3 -v ($s)"
  a=()
  [ "$s" = - ] || a=("$s")
  env ${a[@]+"${a[@]}"} "$bench" --device gpu --synthetic mix=hc,cells=6e10 \
    -n 3 -v | grep -E '^1 |stages'
done
echo "## --suite long -n 3 -v"
"$bench" --device gpu --suite long -n 3 -v | grep -E '^1 |stages'
