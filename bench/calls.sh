#!/usr/bin/env bash
# Small calls: the latency of one clphmm_compute per HaplotypeCaller region
# (300 pairs: 30 reads x 10 haplotypes, mix=hc) and per whole 10s.in (3,550
# pairs), N calls each in a loop (clphmm-bench --calls), and where each
# call's microseconds go: the calls run with CLPHMM_TRACE and
# bench/trace-summary.sh prints the medians of the host phases and device
# commands. Builds clphmm (Release) in build-bench/ unless --no-build.
#
#   bench/calls.sh [--calls N] [--no-build] [--device SEL] [--precision P]
# The environment (CLPHMM_VARIANTS, CLPHMM_DEVICE, ...) passes through.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
calls=1000 build_it=1 extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --calls) calls=${2:?}; shift 2 ;;
    --no-build) build_it=0; shift ;;
    --device|--precision) extra+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/calls.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
BUILD=${BUILD:-build-bench}
[ "$build_it" = 1 ] && bench_build "$BUILD"
bench=$BUILD/tools/clphmm-bench
trace=$(mktemp)
trap 'rm -f "$trace"' EXIT
run() {
  local label=$1
  shift
  : >"$trace"
  echo "## $label"
  CLPHMM_TRACE=$trace "$bench" ${extra[@]+"${extra[@]}"} "$@" --calls "$calls" |
    sed -n '/calls/,/^$/p'
  # The untimed whole-workload call first, then the timed calls.
  bench/trace-summary.sh "$trace" 1
  echo
}
run "one region of 300 pairs per call" \
  --synthetic mix=hc,reads=30,haps=10,pairs=300
run "tests/data/10s.in per call" --input tests/data/10s.in --call-batches all
