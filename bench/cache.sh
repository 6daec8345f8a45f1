#!/usr/bin/env bash
# Cold versus warm start: wall time of one `clphmm` run (context creation,
# kernel builds or cache loads, first compute) with an empty kernel cache,
# with the cache that run filled, and with the cache off.
#
#   bench/cache.sh [BUILD_DIR] [INPUT] [DEVICE] [REPS]
#
# Defaults: build, tests/data/10s.in, the default device, 3 repetitions
# (median reported). PoCL's own kernel cache starts empty for every run
# (a new POCL_CACHE_DIR), so that "cold" means compiled from source. (It
# must stay on: with POCL_KERNEL_CACHE=0 clphmm does not cache on PoCL.)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
INPUT=${2:-tests/data/10s.in}
DEVICE=${3:-}
REPS=${4:-3}
CLI=$BUILD/tools/clphmm
export POCL_KERNEL_CACHE=1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/clphmm-cache-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# seconds CACHE_DIR PRECISION: wall seconds of one run.
seconds() {
  local t0 t1
  local pocl
  pocl=$(mktemp -d "$TMP/pocl.XXXXXX")
  t0=$(date +%s.%N)
  POCL_CACHE_DIR=$pocl CLPHMM_CACHE_DIR=$1 "$CLI" ${DEVICE:+--device "$DEVICE"} --precision "$2" \
    "$INPUT" >/dev/null
  t1=$(date +%s.%N)
  rm -rf "$pocl"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] }'; }

"$CLI" --list-devices
echo "input $INPUT, $REPS repetitions, median wall seconds"
printf "%-9s %8s %8s %8s %9s\n" precision "no cache" cold warm entries
for precision in float double; do
  off=() cold=() warm=()
  for ((r = 0; r < REPS; r++)); do
    dir=$TMP/$precision-$r
    off+=("$(seconds "" "$precision")")
    cold+=("$(seconds "$dir" "$precision")")
    warm+=("$(seconds "$dir" "$precision")")
  done
  printf "%-9s %8s %8s %8s %9s\n" "$precision" \
    "$(printf '%s\n' "${off[@]}" | median)" \
    "$(printf '%s\n' "${cold[@]}" | median)" \
    "$(printf '%s\n' "${warm[@]}" | median)" \
    "$(ls "$TMP/$precision-0" | wc -l)"
done
