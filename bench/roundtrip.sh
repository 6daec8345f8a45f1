#!/usr/bin/env bash
# The OpenCL round trip under a small call, without clphmm: builds
# bench/roundtrip.c into $BUILD (default build-bench) and runs it with a
# HaplotypeCaller region's copy sizes (40,000 bytes in, 8,192 out), with
# an idle kernel and with one that spins 30 us (about a region's float
# kernel), so that what the driver adds to each call can be read off.
#
#   bench/roundtrip.sh [N]    (round trips per case, default 2000)
# ROUNDTRIP_DEVICE picks a device by index (default: the first GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-bench}
mkdir -p "$BUILD"
cc -O2 -std=c11 -Wall -Wextra -pthread -o "$BUILD/roundtrip" bench/roundtrip.c \
  -l:libOpenCL.so.1
n=${1:-2000}
"$BUILD/roundtrip" "$n" 40000 8192 0
"$BUILD/roundtrip" "$n" 40000 8192 30000 | grep -v '^empty'
