#!/usr/bin/env bash
# The host path's measurements in one call on a GPU machine: build, the
# GPU correctness tests (bench/gpu-check.sh without the peak suite), small
# calls under host-path settings taking turns (bench/calls-ab.sh: by
# default the defaults, without the packs, without early flushes, without
# both; or the SETTINGs given), then, with clphmm-bench -v (per-stage
# times), the HaplotypeCaller-like mix, the long reads of issue 16 (1.1-2
# kb x 2-3 kb at 7e9 cells), the long suite, and the long suite scaled to
# 1e9 cells with every pair checked against the CPU reference. Writes
# everything to $OUT (default bench/out).
#
#   OUT=dir [ROUNDS=3] bench/host-path.sh [SETTING...]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
BUILD=${BUILD:-build-bench}
export BUILD
mkdir -p "$OUT"
echo "# commit=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" \
  "date=$(date -u +%Y-%m-%dT%H:%MZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
SKIP_PEAK=1 SKIP_SASS=1 CPU_BACKENDS= OUT=$OUT bench/gpu-check.sh |
  tee "$OUT/gpu-check.txt" || exit 1
settings=("$@")
[ ${#settings[@]} -gt 0 ] || settings=(- CLPHMM_PACK_BYTES=0 CLPHMM_EARLY_FLUSH=0
  "CLPHMM_PACK_BYTES=0 CLPHMM_EARLY_FLUSH=0")
echo "## small calls: bench/calls-ab.sh"
ROUNDS=${ROUNDS:-3} bench/calls-ab.sh "${settings[@]}" | tee "$OUT/calls-ab.txt"
bench=$BUILD/tools/clphmm-bench
run() {
  echo "## clphmm-bench --device gpu $* -v"
  "$bench" --device gpu "$@" -v | grep -E '^1 |stages'
}
run --synthetic mix=hc,cells=6e10 -n 3
run --synthetic mix=long,read=1100-2000,hap=2000-3000,cells=7e9 -n 3
run --suite long -n 3
run --suite long --scale 0.01 --check -n 1
