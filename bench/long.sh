#!/usr/bin/env bash
# Long reads (issue 16's measurements) in one call: build clphmm (Release),
# then, each checked against the CPU reference in the same run,
#   1. reads 1,100-2,000 x haplotypes 2,000-3,000 (7e9 cells), float;
#   2. --suite long (1e11 cells of 1-20 kb reads), float and double;
#   3. the long peak: L = 2048, 4096, 8192 (1e10 cells each), float;
#   4. --suite long scaled to 1e9 cells with --check (every pair), both
#      precisions;
# and, when gpuPairHMM's source and nvcc are there, gpuPairHMM on the
# 7e9-cell file (bench/side-by-side.sh --workloads long). One text file of
# everything goes to bench/results/<device>-<date>-long-<commit>.txt (and to
# $OUT when set).
#
#   bench/long.sh [--quick] [--device SPEC]
#     --quick   one timed run per workload instead of REPS (default 3)
#
# Environment: BUILD (default build-bench), REPS (default 3), STEP_TIMEOUT
# (seconds per clphmm-bench run, default 240), COMMIT (when git is absent),
# GPUPAIRHMM_SRC (see side-by-side.sh), SKIP (any of "file suite peak check
# gpu" to leave out), OUT.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. bench/lib.sh

REPS=${REPS:-3} DEVICE=gpu
while [ $# -gt 0 ]; do
  case $1 in
    --quick) REPS=1; shift ;;
    --device) DEVICE=$2; shift 2 ;;
    *) echo "bench/long.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
BUILD=${BUILD:-build-bench}
STEP_TIMEOUT=${STEP_TIMEOUT:-240}
SKIP=${SKIP:-}
bench_begin
skip() { case " $SKIP " in *" $1 "*) return 0 ;; esac; return 1; }

bench_build "$BUILD" || { echo "bench/long.sh: build failed" >&2; exit 1; }

# run TITLE ARGS...: one clphmm-bench run, its table and breakdown logged.
run() {
  local title=$1
  shift
  say ""
  say "## $title"
  say "\$ clphmm-bench --device $DEVICE $*"
  timeout "$STEP_TIMEOUT" "$BENCH" --device "$DEVICE" --no-startup -v "$@" \
    2>&1 | tee -a "$LOG"
  say "(exit ${PIPESTATUS[0]})"
}

say "# clphmm long reads: commit=$COMMIT date=$(date -u +%Y-%m-%dT%H:%MZ)"
# The device's name: the first listed device of type DEVICE (gpu, cpu),
# else the first device.
NAME=$(bench_device_name "$BENCH" "$DEVICE")
DRIVER=$("$BENCH" --list 2>/dev/null | awk -v n="$NAME" '
  /^device [0-9]+:/ { on = index($0, n) > 0 }
  on && /^  version:/ { sub(/^  version: */, ""); print; exit }')
say "# device: $NAME ($DRIVER)"
say "# command: bench/long.sh (REPS=$REPS${SKIP:+ SKIP=\"$SKIP\"})"
say "# env: CLPHMM_VARIANTS=${CLPHMM_VARIANTS:-} CLPHMM_EARLY_EXIT=${CLPHMM_EARLY_EXIT:-}"
FILE=mix=long,read=1100-2000,hap=2000-3000,cells=7e9
skip file || run "reads 1100-2000 x haplotypes 2000-3000, float" \
  --synthetic "$FILE" -n "$REPS"
skip suite || run "--suite long, float" --suite long -n "$REPS"
skip suite || run "--suite long, double" --suite long -p double -n "$REPS"
if ! skip peak; then
  for L in 2048 4096 8192; do
    run "peak L=$L, float" --synthetic "read=$L,hap=$L,cells=1e10" -n "$REPS"
  done
fi
if ! skip check; then
  run "--suite long at 1e9 cells, every pair checked, float" \
    --suite long --scale 0.01 --check -n 1
  run "--suite long at 1e9 cells, every pair checked, double" \
    --suite long --scale 0.01 --check -p double -n 1
fi
if ! skip gpu; then
  say ""
  say "## gpuPairHMM on the 7e9-cell file (bench/side-by-side.sh)"
  SBS_LOG=$(mktemp)
  BUILD=$BUILD COMMIT=$COMMIT timeout 900 bench/side-by-side.sh --workloads long \
    --reps "$REPS" >"$SBS_LOG" 2>&1
  SBS=$(grep -o "bench/results/[^ ]*side-by-side[^ ]*\.txt" "$SBS_LOG" | tail -1)
  if [ -n "$SBS" ] && [ -f "$SBS" ]; then cat "$SBS" >>"$LOG"; else tail -n 20 "$SBS_LOG" >>"$LOG"; fi
  rm -f "$SBS_LOG"
fi

DEV=$(bench_slug "$NAME")
bench_save "$LOG" "${DEV:-device}" long bench/long.sh
exit 0
