#!/usr/bin/env bash
# The CPU reference's speed: `clphmm-bench --device reference` (median of 5
# runs after a warm-up) on the HaplotypeCaller-like mix and on long reads,
# in both precision modes, on one thread and on every core, for each
# reference kernel (CLPHMM_REFERENCE_KERNEL) and each extra clphmm-bench
# binary given (e.g. one built from an older commit: its own reference,
# whatever the variable says).
#
#   bench/reference.sh [LABEL=CLPHMM-BENCH ...]
#
# Environment: KERNELS (default "auto wave-avx2 wave scalar"; unavailable
# ones report FAILED), CELLS (per workload, default 3e8), THREADS (default
# "1 $(nproc)"), BUILD (default build-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-bench}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCLPHMM_BUILD_TESTS=OFF \
  >/dev/null
cmake --build "$BUILD" -j "$(nproc)" >/dev/null
CELLS=${CELLS:-3e8}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/clphmm-ref.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
. bench/json-field.sh

echo "# clphmm CPU reference: commit=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)} date=$(date -u +%Y-%m-%dT%H:%MZ) cells=$CELLS"
echo "# cpu: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1), $(nproc) cores"
printf "%-22s %-7s %-5s %-6s %10s %10s %10s\n" code threads mix prec "GCUPS" \
  "min s" "median s"
# Codes take turns on each workload, so that a busy machine slows them alike.
codes=()
for k in ${KERNELS:-auto wave-avx2 wave scalar}; do
  codes+=("$k=$BUILD/tools/clphmm-bench=$k")
done
for spec in "$@"; do
  codes+=("$spec=")
done
for t in ${THREADS:-1 $(nproc)}; do
  for mix in hc long; do
    for prec in float double; do
      for code in "${codes[@]}"; do
        label=${code%%=*} rest=${code#*=}
        bin=${rest%=*} kernel=${rest##*=}
        if ! CLPHMM_REFERENCE_KERNEL=$kernel "$bin" --device reference \
          --threads "$t" --precision "$prec" \
          --synthetic "mix=$mix,cells=$CELLS" -n 5 --no-startup \
          --json "$TMP/run.json" >"$TMP/out.txt" 2>&1; then
          echo "$label $t $mix $prec FAILED: $(tail -n 3 "$TMP/out.txt")"
          continue
        fi
        printf "%-22s %-7s %-5s %-6s %10.3f %10.4f %10.4f\n" "$label" "$t" \
          "$mix" "$prec" "$(json_field "$TMP/run.json" gcups_kernel)" \
          "$(json_field "$TMP/run.json" kernel_seconds_min)" \
          "$(json_field "$TMP/run.json" kernel_seconds)"
      done
    done
  done
done
