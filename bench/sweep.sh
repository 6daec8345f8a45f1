#!/usr/bin/env bash
# Variant sweep: for each read length L (read = haplotype = L), time each
# candidate variant list on DEVICE (CLPHMM_VARIANTS) and print kernel TCUPS.
# Used to fill the built-in variant tables in src/tuning/plan.c.
#
#   bench/sweep.sh DEVICE CELLS "L:GxC/WG GxC/WG ...;L:..."
#   e.g. bench/sweep.sh gpu 3e9 "128:16x8/128 8x16/128;512:32x16/128"
# PRECISION=double sweeps the double kernels (CLPHMM_DOUBLE_VARIANTS).
set -uo pipefail
cd "$(dirname "$0")/.."
DEV=$1 CELLS=$2 SPEC=$3
BUILD=${BUILD:-build-bench}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build "$BUILD" -j "$(nproc)" >/dev/null || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/clphmm-sweep.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
. bench/json-field.sh
field() { json_field "$TMP/run.json" "$1"; } # NAME: a scalar of the run
IFS=';' read -ra ITEMS <<<"$SPEC"
for item in "${ITEMS[@]}"; do
  L=${item%%:*}
  for v in ${item#*:}; do
    if [ "${PRECISION:-float}" = double ]; then var=CLPHMM_DOUBLE_VARIANTS; else var=CLPHMM_VARIANTS; fi
    if ! out=$(env "$var=$v" "$BUILD/tools/clphmm-bench" --device "$DEV" \
      --precision "${PRECISION:-float}" --synthetic "read=$L,hap=$L,cells=$CELLS" \
      -n 3 --no-startup --json "$TMP/run.json" 2>&1); then
      printf "L=%-5s %-12s FAILED %s\n" "$L" "$v" "$(echo "$out" | tail -3)"
      continue
    fi
    t=$(awk -v g="$(field gcups_kernel)" 'BEGIN { printf "%.3f", g / 1000 }')
    printf "L=%-5s %-12s %-7s TCUPS  rescued %s  max|err| %s\n" "$L" "$v" "$t" \
      "$(field rescued_pairs)" "$(field max_abs_error)"
  done
done
