#!/usr/bin/env bash
# Settings of the environment against each other on one device in one
# call: build clphmm (Release), then time the long-read workloads (the
# long suite in float and double, the 7e9-cell file of 1.1-2 kb reads;
# or hc, 20,000 HaplotypeCaller-like pairs; mix, such pairs of 6e10 cells
# (the HaplotypeCaller-sized call); peak512 and peak2048, reads and
# haplotypes of 512 or 2048 bases, 1e10 cells; or small calls: region, one
# 300-pair HaplotypeCaller-like region per call; regions, the 225 regions
# of 30,000 such pairs in turn (2250 calls); 10s, tests/data/10s.in per
# call (1000 calls); median us per call) once per setting, taking turns
# for ROUNDS rounds; with TIMELINE=1 also the device commands of one
# profiled long-suite float call per setting (each launch's run time:
# which pass waits for its largest pairs), and (with a long workload) the
# long suite at 1e9 cells checked against the CPU reference per setting. Prints each run's
# table and stages and a summary of wall-time medians; one text file goes
# to bench/results/<device>-<date>-env-<commit>.txt (and to $OUT).
#
#   bench/env-ab.sh [--device SPEC] SETTING...
#   e.g. bench/env-ab.sh "CLPHMM_EXACT_DIRECT=0" default
# (a SETTING is space-separated VAR=VALUE words, or "default": none)
#
# Environment: BUILD (default build-bench), ROUNDS (default 2), REPS
# (default 3), WORKLOADS (default "long-float long-double 7e9"),
# TIMELINE (0/1), STEP_TIMEOUT (default 120), COMMIT, KIND (the results
# file's kind, default env).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. bench/lib.sh
DEVICE=gpu
if [ "${1:-}" = --device ]; then
  DEVICE=$2
  shift 2
fi
[ $# -ge 1 ] || { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
BUILD=${BUILD:-build-bench}
ROUNDS=${ROUNDS:-2} REPS=${REPS:-3} TIMELINE=${TIMELINE:-0}
WORKLOADS=${WORKLOADS:-long-float long-double 7e9}
STEP_TIMEOUT=${STEP_TIMEOUT:-120}
bench_begin

bench_build "$BUILD" || { echo "bench/env-ab.sh: build failed" >&2; exit 1; }
NAME=$(bench_device_name "$BENCH" "$DEVICE")
say "# clphmm settings A/B: commit=$COMMIT date=$(date -u +%Y-%m-%dT%H:%MZ) device=$NAME ($DEVICE)"
say "# command: bench/env-ab.sh$(printf ' "%s"' "$@") (ROUNDS=$ROUNDS REPS=$REPS WORKLOADS=\"$WORKLOADS\" TIMELINE=$TIMELINE)"

# with SETTING CMD...: CMD with SETTING's variables set.
with() {
  local setting=$1
  shift
  [ "$setting" = default ] && setting=
  # shellcheck disable=SC2086 # the setting's words are assignments
  env $setting "$@"
}

# one WORKLOAD SETTING: a run; its median wall to WALLS.
one() {
  local out a
  a=$(bench_workload_args "$1") || return 1
  say ""
  say "## $1, $2"
  # shellcheck disable=SC2086 # the workload's words are arguments
  # (Small calls unprofiled, unless a setting says otherwise: the events
  # cost a region call tens of us.)
  local v=-v
  case $1 in region | regions | 10s) v= && local -x CLPHMM_PROFILE=${CLPHMM_PROFILE:-0} ;; esac
  out=$(with "$2" timeout "$STEP_TIMEOUT" "$BENCH" --device "$DEVICE" \
    --no-startup $v $a -n "$REPS" 2>&1 | grep -v '^      bin')
  say "$out"
  local wall
  case $1 in
    # (per call: the median us before the first bracket)
    region | regions | 10s) wall=$(echo "$out" | awk '$1 ~ /^[0-9]+$/ && NF >= 8 {
      for (i = 1; i <= NF; i++) if ($i ~ /^\[/) { print $(i - 1); exit } }') ;;
    *) wall=$(echo "$out" | bench_wall) ;;
  esac
  [ -n "$wall" ] && echo "$1|$2|$wall" >>"$WALLS"
}

for r in $(seq 1 "$ROUNDS"); do
  for w in $WORKLOADS; do
    for s in "$@"; do
      one "$w" "$s"
    done
  done
done

for s in "$@"; do
  case " $WORKLOADS " in *" long-"*) ;; *) continue ;; esac
  say ""
  say "## long 1e9 checked, float, $s"
  say "$(with "$s" timeout "$STEP_TIMEOUT" "$BENCH" --device "$DEVICE" \
    --no-startup -v --suite long --scale 0.01 --check -n 1 2>&1 |
    grep -v '^      bin')"
  if [ "$TIMELINE" = 1 ]; then
    say ""
    say "## timeline of one long float call (profiled), $s"
    say "$(with "$s" CLPHMM_PROFILE=1 timeout "$STEP_TIMEOUT" \
      env BUILD="$BUILD" bench/timeline.sh --no-build --calls 1 --show 0 -- \
      --device "$DEVICE" --suite long 2>&1 | grep -E 'dev  kernel|host call')"
  fi
done

say ""
say "## summary: median wall seconds over rounds (region, regions, 10s: us per call)"
for w in $WORKLOADS; do
  for s in "$@"; do
    m=$(awk -F'|' -v w="$w" -v s="$s" '$1 == w && $2 == s { print $3 }' \
      "$WALLS" | bench_median)
    say "$(printf '%-12s %-40s %s' "$w" "$s" "${m:--}")"
  done
done
bench_save "$LOG" "$(bench_slug "$NAME")" "${KIND:-env}" bench/env-ab.sh
