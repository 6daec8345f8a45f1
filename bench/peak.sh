#!/usr/bin/env bash
# Peak suite as one table against the fast-kernels issue's anchors: builds
# clphmm, then for each L in 64..8192 (read length = haplotype length = L)
# times the kernel on DEVICE (median of 5 runs after a warm-up, at least
# CELLS cells, OpenCL profiling events) with clphmm-bench, which checks a
# sample of pairs against the CPU reference in the same run, and prints the
# ratio to gpuPairHMM's published H200 numbers. (bench/run.sh runs the same
# lengths as `--suite peak` and stores JSON; this is the quick look.)
#
#   bench/peak.sh [DEVICE] [CELLS]        e.g. bench/peak.sh gpu 1e10
#
# Extra environment (CLPHMM_SHUFFLE, CLPHMM_VARIANTS, LENGTHS, PRECISIONS)
# passes through.
set -euo pipefail
cd "$(dirname "$0")/.."
DEV=${1:-gpu}
CELLS=${2:-1e10}
BUILD=${BUILD:-build-bench}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCLPHMM_BUILD_TESTS=OFF \
  >/dev/null
cmake --build "$BUILD" -j "$(nproc)" >/dev/null
declare -A ANCHOR=([64]=2.12 [128]=2.35 [256]=2.48 [512]=2.58 [1024]=2.59
                   [2048]=1.47)
declare -A TARGET=([64]=2.43 [128]=2.70 [256]=2.85 [512]=2.96 [1024]=2.98
                   [2048]=2.20)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/clphmm-peak.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
. bench/json-field.sh
field() { json_field "$TMP/run.json" "$1"; } # NAME: a scalar of the run
echo "# clphmm peak suite: device=$DEV cells>=$CELLS commit=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)} date=$(date -u +%Y-%m-%dT%H:%MZ)"
echo "# env: CLPHMM_SHUFFLE=${CLPHMM_SHUFFLE:-} CLPHMM_VARIANTS=${CLPHMM_VARIANTS:-}"
printf "%-6s %-10s %-10s %-10s %-8s %s\n" L TCUPS gpuPairHMM target ratio detail
for L in ${LENGTHS:-64 128 256 512 1024 2048 4096 8192}; do
  for prec in ${PRECISIONS:-float}; do
    if ! out=$("$BUILD/tools/clphmm-bench" --device "$DEV" --precision "$prec" \
          --synthetic "read=$L,hap=$L,cells=$CELLS" -n 5 --no-startup \
          --json "$TMP/run.json" 2>&1); then
      echo "$L FAILED: $out"; continue
    fi
    t=$(awk -v g="$(field gcups_kernel)" 'BEGIN { printf "%.3f", g / 1000 }')
    ratio=$(awk -v t="$t" -v a="${ANCHOR[$L]:-0}" \
      'BEGIN { if (a > 0) printf "%.2f", t / a; else printf "-" }')
    printf "%-6s %-10s %-10s %-10s %-8s %s\n" "$L" "$t" "${ANCHOR[$L]:--}" \
      "${TARGET[$L]:--}" "$ratio" \
      "$(field device) $prec pairs=$(field pairs) cells=$(field cells) kernel $(field kernel_seconds)s [$(field kernel_seconds_min)..$(field kernel_seconds_max)] wall $(field wall_seconds)s rescued $(field rescued_pairs) max|err| $(field max_abs_error)"
  done
done
