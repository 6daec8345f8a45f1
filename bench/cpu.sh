#!/usr/bin/env bash
# The CPU device (PoCL) benchmark of the CPU-kernel issue: kernel and wall
# GCUPS of clphmm-bench on the default CPU device for the bundled 10s input
# (repeated) and a HaplotypeCaller-like synthetic mix, float and double
# mode, for one or more clphmm-bench binaries that take turns (so that a
# busy machine slows them alike), ROUNDS rounds of `-n N` runs each; prints
# every round and the median over rounds of each run's median.
#
#   bench/cpu.sh [LABEL=CLPHMM-BENCH ...]
#   bench/cpu.sh "before(5ec7939)=build-base/tools/clphmm-bench" after=build/tools/clphmm-bench
#
# Environment: ROUNDS (default 3), N (default 5), REPEAT (10s.in
# repetitions, default 20), CELLS (mix=hc size, default 2e9), PRECISIONS
# (default "float double"), DEVICE (default cpu), VARIANTS (passed as
# CLPHMM_VARIANTS, e.g. to compare variants with one binary). The kernel
# cache is a fresh directory per binary (builds are not timed: the
# measured runs follow a warm-up run). Cold starts: bench/cache.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
N=${N:-5}
REPEAT=${REPEAT:-20}
CELLS=${CELLS:-2e9}
PRECISIONS=${PRECISIONS:-float double}
DEVICE=${DEVICE:-cpu}
if [ $# -eq 0 ]; then
  set -- "clphmm=build/tools/clphmm-bench"
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/clphmm-cpu-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo "${COMMIT:-unknown}")," \
  "$(date -u +%F), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "PoCL: $(dpkg-query -W -f '${Version}' pocl-opencl-icd 2>/dev/null || echo unknown)"
echo "rounds $ROUNDS, -n $N per round, 10s.in x$REPEAT, mix=hc cells=$CELLS${VARIANTS:+, CLPHMM_VARIANTS=$VARIANTS}"

workloads=("--input tests/data/10s.in --repeat $REPEAT" "--synthetic mix=hc,cells=$CELLS")
names=("10s.in x$REPEAT" "mix=hc $CELLS")
declare -A kernel wall
for ((r = 1; r <= ROUNDS; r++)); do
  for p in $PRECISIONS; do
    for w in "${!workloads[@]}"; do
      for spec in "$@"; do
        label=${spec%%=*}
        bin=${spec#*=}
        # shellcheck disable=SC2086
        line=$(CLPHMM_CACHE_DIR="$TMP/cache-$label" ${VARIANTS:+CLPHMM_VARIANTS=$VARIANTS} \
          "$bin" --device "$DEVICE" ${workloads[$w]} -p "$p" -n "$N" \
          --no-startup 2>&1 | grep -E '^0 ' || true)
        # Columns: kernel GCUPS and wall GCUPS follow the wall seconds.
        k=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /\]$/) { print $(i + 2); exit } }' <<<"$line")
        wl=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /\]$/) { print $(i + 3); exit } }' <<<"$line")
        key="$label|$p|${names[$w]}"
        kernel[$key]+="${k:-nan} "
        wall[$key]+="${wl:-nan} "
        printf "round %d  %-22s %-6s %-16s kernel %6s  wall %6s GCUPS  (load %s)\n" \
          "$r" "$label" "$p" "${names[$w]}" "${k:-?}" "${wl:-?}" \
          "$(cut -d' ' -f1 /proc/loadavg)"
      done
    done
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo
printf "%-22s %-6s %-16s %14s %12s\n" binary mode workload "kernel GCUPS" "wall GCUPS"
for p in $PRECISIONS; do
  for w in "${!workloads[@]}"; do
    for spec in "$@"; do
      key="${spec%%=*}|$p|${names[$w]}"
      printf "%-22s %-6s %-16s %14s %12s\n" "${spec%%=*}" "$p" "${names[$w]}" \
        "$(median <<<"${kernel[$key]}")" "$(median <<<"${wall[$key]}")"
    done
  done
done
echo "(medians over $ROUNDS rounds of the median of $N runs; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
