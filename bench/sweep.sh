#!/usr/bin/env bash
# Variant sweep: for each read length L (read = haplotype = L), time each
# candidate variant list on DEVICE (CLPHMM_VARIANTS) and print kernel TCUPS.
# Used to fill the built-in variant tables in src/plan.c.
#
#   bench/sweep.sh DEVICE CELLS "L:GxC/WG GxC/WG ...;L:..."
#   e.g. bench/sweep.sh gpu 3e9 "128:16x8/128 8x16/128;512:32x16/128"
# PRECISION=double sweeps the double kernels.
set -uo pipefail
cd "$(dirname "$0")/.."
DEV=$1 CELLS=$2 SPEC=$3
BUILD=${BUILD:-build-bench}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build "$BUILD" -j "$(nproc)" >/dev/null || exit 1
IFS=';' read -ra ITEMS <<<"$SPEC"
for item in "${ITEMS[@]}"; do
  L=${item%%:*}
  for v in ${item#*:}; do
    out=$(CLPHMM_VARIANTS=$v "$BUILD/tools/clphmm-bench" --device "$DEV" \
      --precision "${PRECISION:-float}" --synthetic "read=$L,hap=$L,cells=$CELLS" \
      -n 3 2>&1)
    t=$(echo "$out" | sed -n 's/.* \([0-9.]*\) TCUPS.*/\1/p')
    e=$(echo "$out" | sed -n 's/.*max|err| \([^ ]*\).*/\1/p')
    printf "L=%-5s %-12s %-7s TCUPS  max|err| %s\n" "$L" "$v" "${t:-FAIL}" "${e:-$out}"
  done
done
