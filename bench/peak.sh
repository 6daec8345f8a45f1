#!/usr/bin/env bash
# Peak suite: builds clphmm, then for each L in 64..2048 (read length =
# haplotype length = L) times the kernel on DEVICE (median of 5 runs after a
# warm-up, at least CELLS cells, OpenCL profiling events), checks a sample
# of pairs against the CPU reference in the same run, and prints the ratio
# to gpuPairHMM's published H200 numbers (the fast-kernels issue's anchors).
#
#   bench/peak.sh [DEVICE] [CELLS]        e.g. bench/peak.sh gpu 1e10
#
# Extra environment (CLPHMM_SHUFFLE, CLPHMM_VARIANTS, ...) passes through.
set -euo pipefail
cd "$(dirname "$0")/.."
DEV=${1:-gpu}
CELLS=${2:-1e10}
BUILD=${BUILD:-build-bench}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j "$(nproc)" >/dev/null
declare -A ANCHOR=([64]=2.12 [128]=2.35 [256]=2.48 [512]=2.58 [1024]=2.59
                   [2048]=1.47)
declare -A TARGET=([64]=2.43 [128]=2.70 [256]=2.85 [512]=2.96 [1024]=2.98
                   [2048]=2.20)
echo "# clphmm peak suite: device=$DEV cells>=$CELLS commit=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)} date=$(date -u +%Y-%m-%dT%H:%MZ)"
echo "# env: CLPHMM_SHUFFLE=${CLPHMM_SHUFFLE:-} CLPHMM_VARIANTS=${CLPHMM_VARIANTS:-}"
printf "%-6s %-10s %-10s %-10s %-8s %s\n" L TCUPS gpuPairHMM target ratio detail
for L in ${LENGTHS:-64 128 256 512 1024 2048}; do
  for prec in ${PRECISIONS:-float}; do
    out=$("$BUILD/tools/clphmm-bench" --device "$DEV" --precision "$prec" \
          --synthetic "read=$L,hap=$L,cells=$CELLS" -n 5 2>&1) || {
      echo "$L FAILED: $out"; continue; }
    t=$(echo "$out" | sed -n 's/.* \([0-9.]*\) TCUPS.*/\1/p')
    ratio=$(awk -v t="$t" -v a="${ANCHOR[$L]}" 'BEGIN{printf "%.2f", t/a}')
    printf "%-6s %-10s %-10s %-10s %-8s %s\n" "$L" "$t" "${ANCHOR[$L]}" \
      "${TARGET[$L]}" "$ratio" "$out"
  done
done
