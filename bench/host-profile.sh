#!/usr/bin/env bash
# Where the host's time of small calls goes: samples clphmm-bench on one
# 300-pair HaplotypeCaller-like region per call (unprofiled, CALLS calls,
# default 5000) with perf (frame-pointer call chains) and prints, per
# clphmm function, the samples whose innermost clphmm frame it is and
# microseconds per call (bench/perf_ours.py: the OpenCL driver's time
# counts for the clphmm function that called into it). Builds clphmm
# (Release, -g -fno-omit-frame-pointer) in build-prof/. Needs perf (PERF:
# its path, default perf) and permission to sample (perf_event_paranoid).
#
#   [CALLS=5000] [HZ=20000] [PERF=perf] [DEVICE=gpu] bench/host-profile.sh [CLPHMM-BENCH-ARGS...]
# (other arguments replace the workload, e.g. --input tests/data/10s.in
# --call-batches all)
set -euo pipefail
cd "$(dirname "$0")/.."
CALLS=${CALLS:-5000} HZ=${HZ:-20000} PERF=${PERF:-perf} DEVICE=${DEVICE:-gpu}
BUILD=build-prof
timeout 600 cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS="-g -fno-omit-frame-pointer" >/dev/null
timeout 600 cmake --build $BUILD -j "$(nproc)" >/dev/null
[ $# -gt 0 ] || set -- --synthetic mix=hc,reads=30,haps=10,pairs=300
data=$(mktemp)
trap 'rm -f "$data"' EXIT
timeout 600 "$PERF" record -q -F "$HZ" --call-graph fp -o "$data" \
  $BUILD/tools/clphmm-bench --no-startup --device "$DEVICE" "$@" --calls "$CALLS" |
  sed -n '/calls/,/^$/p'
"$PERF" script -i "$data" -F comm,tid,ip,sym 2>/dev/null |
  python3 bench/perf_ours.py "$CALLS" "$HZ"
