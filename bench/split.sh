#!/usr/bin/env bash
# Split pairs (cl/pairhmm.cl, SPLIT_Q) on a GPU in one call: build clphmm
# (Release), then time --suite long and the 7e9-cell long-read file with
# CLPHMM_SPLIT = each of PARTS (1: never split), float and double, taking
# turns for ROUNDS rounds, and check the long suite at 1e9 cells against the
# CPU reference with the default. Prints each run's table and stages, and a
# summary of wall-time medians; one text file goes to
# bench/results/<device>-<date>-split-<commit>.txt (and to $OUT).
#
#   bench/split.sh [--device SPEC]
#
# Environment: BUILD (default build-bench), PARTS (default "1 2 4 8"),
# ROUNDS (default 2), REPS (default 3), STEP_TIMEOUT (default 120), COMMIT.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. bench/lib.sh
DEVICE=gpu
[ "${1:-}" = --device ] && DEVICE=$2
BUILD=${BUILD:-build-bench}
PARTS=${PARTS:-1 2 4 8} ROUNDS=${ROUNDS:-2} REPS=${REPS:-3}
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
bench_begin

bench_build "$BUILD" || { echo "bench/split.sh: build failed" >&2; exit 1; }
NAME=$(bench_device_name "$BENCH" "$DEVICE")
say "# clphmm split pairs: commit=$COMMIT date=$(date -u +%Y-%m-%dT%H:%MZ) device=$NAME ($DEVICE)"
say "# command: bench/split.sh (PARTS=\"$PARTS\" ROUNDS=$ROUNDS REPS=$REPS)"

# one TITLE PARTS ARGS...: a clphmm-bench run; its median wall to WALLS.
one() {
  local title=$1 parts=$2 out
  shift 2
  say ""
  say "## $title, CLPHMM_SPLIT=$parts"
  local env=(env CLPHMM_SPLIT="$parts")
  [ "$parts" = default ] && env=(env -u CLPHMM_SPLIT)
  out=$("${env[@]}" timeout "$STEP_TIMEOUT" "$BENCH" --device "$DEVICE" \
    --no-startup -v "$@" 2>&1 | grep -v '^      bin')
  say "$out"
  local wall
  wall=$(echo "$out" | bench_wall)
  [ -n "$wall" ] && echo "$title|$parts|$wall" >>"$WALLS"
}

for r in $(seq 1 "$ROUNDS"); do
  for p in $PARTS; do
    one "long float" "$p" --suite long -n "$REPS"
    one "long double" "$p" --suite long -p double -n "$REPS"
    one "7e9 float" "$p" --synthetic mix=long,read=1100-2000,hap=2000-3000,cells=7e9 -n "$REPS"
  done
done
one "long 1e9 checked, float" default --suite long --scale 0.01 --check -n 1
one "long 1e9 checked, double" default --suite long --scale 0.01 --check -p double -n 1

say ""
say "## summary: median wall seconds over rounds"
for w in "long float" "long double" "7e9 float"; do
  line=$(printf "%-12s" "$w")
  for p in $PARTS; do
    m=$(awk -F'|' -v w="$w" -v p="$p" '$1 == w && $2 == p { print $3 }' "$WALLS" |
      bench_median)
    line="$line  split=$p ${m:-?}"
  done
  say "$line"
done

DEV=$(bench_slug "$NAME")
bench_save "$LOG" "${DEV:-device}" split bench/split.sh
exit 0
