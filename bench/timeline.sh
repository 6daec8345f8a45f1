#!/usr/bin/env bash
# The timeline of single calls: runs clphmm-bench on a workload with
# CLPHMM_TRACE and prints the whole trace of call K (host phases with their
# start times, device commands queued/started/ended, all in microseconds
# from the call's start), so that the critical path of a call can be read
# off. Builds clphmm (Release) in build-bench/ unless --no-build.
#
#   bench/timeline.sh [--no-build] [--calls N] [--show K] [--count M] -- ARGS
# (ARGS go to clphmm-bench; calls K to K + M - 1 are printed)
# e.g. bench/timeline.sh -- --synthetic mix=hc,reads=30,haps=10,pairs=300
# The environment (CLPHMM_PROFILE, CLPHMM_VARIANTS, ...) passes through;
# without CLPHMM_PROFILE=1 device commands have no times.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
calls=20 show=10 count=1 build_it=1
while [ $# -gt 0 ]; do
  case $1 in
    --calls) calls=${2:?}; shift 2 ;;
    --show) show=${2:?}; shift 2 ;;
    --count) count=${2:?}; shift 2 ;;
    --no-build) build_it=0; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/timeline.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
BUILD=${BUILD:-build-bench}
[ "$build_it" = 1 ] && bench_build "$BUILD"
trace=$(mktemp)
trap 'rm -f "$trace"' EXIT
CLPHMM_TRACE=$trace "$BUILD/tools/clphmm-bench" --no-startup "$@" \
  --calls "$calls" | sed -n '/calls/,/^$/p'
# Call 1 is the untimed whole-workload call; the timed calls follow.
awk -v k="$((show + 1))" -v m="$count" '/^call /{c++} c>=k && c<k+m' "$trace"
