#!/usr/bin/env bash
# Several GPUs in one context (the multi-device issue's measurement) in one
# call: build clphmm (Release), then, for each workload, clphmm-bench on the
# first GPU (--device gpu) and on every GPU (--device all), taking turns for
# ROUNDS rounds so drift hits both alike. Workloads: the HaplotypeCaller-like
# mix (6e10 cells) and --suite long. Prints each run's table and per-device
# breakdown and a summary of wall-time medians and ratios; one text file goes
# to bench/results/<device>x<n>-<date>-devices-<commit>.txt (and to $OUT).
#
#   bench/devices.sh
#
# Environment: BUILD (default build-bench), ROUNDS (default 3), REPS (timed
# runs per clphmm-bench run, default 3), STEP_TIMEOUT (seconds per run,
# default 200), COMMIT (when git is absent), WORKLOADS (default "mix long").
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. bench/lib.sh

BUILD=${BUILD:-build-bench}
ROUNDS=${ROUNDS:-3} REPS=${REPS:-3} STEP_TIMEOUT=${STEP_TIMEOUT:-200}
WORKLOADS=${WORKLOADS:-mix long}
bench_begin

bench_build "$BUILD" || { echo "bench/devices.sh: build failed" >&2; exit 1; }

NGPU=$("$BENCH" --list 2>/dev/null | grep -c '^  type: *gpu')
NAME=$(bench_device_name "$BENCH" gpu)
say "# clphmm on several GPUs: commit=$COMMIT date=$(date -u +%Y-%m-%dT%H:%MZ)"
say "# devices: $NGPU x $NAME"
command -v nvidia-smi >/dev/null &&
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee -a "$LOG"
say "# command: bench/devices.sh (ROUNDS=$ROUNDS REPS=$REPS WORKLOADS=\"$WORKLOADS\")"

args_of() {
  case $1 in
    mix) echo "--synthetic mix=hc,cells=6e10" ;;
    long) echo "--suite long" ;;
    *) echo "bench/devices.sh: unknown workload '$1'" >&2; return 1 ;;
  esac
}

# one WORKLOAD SPEC ROUND: one clphmm-bench run; its median wall (the
# table's end-to-end seconds column) goes to WALLS.
one() {
  local out
  say ""
  say "## $1, --device $2, round $3"
  # shellcheck disable=SC2046
  out=$(timeout "$STEP_TIMEOUT" "$BENCH" --device "$2" --no-startup -v -n "$REPS" \
    $(args_of "$1") 2>&1)
  say "$out"
  local wall
  wall=$(echo "$out" | bench_wall)
  [ -n "$wall" ] && echo "$1 $2 $wall" >>"$WALLS"
}

for w in $WORKLOADS; do
  for r in $(seq 1 "$ROUNDS"); do
    one "$w" gpu "$r"
    one "$w" all "$r"
  done
done

say ""
say "## summary: median wall seconds over rounds, one GPU / every GPU"
for w in $WORKLOADS; do
  g=$(awk -v w="$w" '$1 == w && $2 == "gpu" { print $3 }' "$WALLS" | bench_median)
  a=$(awk -v w="$w" '$1 == w && $2 == "all" { print $3 }' "$WALLS" | bench_median)
  say "$(awk -v w="$w" -v g="${g:-0}" -v a="${a:-0}" 'BEGIN {
    printf "%-6s one GPU %.4f s  all GPUs %.4f s  speedup %.2fx\n", w, g, a, (a > 0 ? g / a : 0) }')"
done

DEV=$(bench_slug "$NAME")
bench_save "$LOG" "${DEV:-device}x$NGPU" devices bench/devices.sh
exit 0
