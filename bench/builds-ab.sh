#!/usr/bin/env bash
# Builds of clphmm taking turns on one device: one 300-pair region per
# call (1000 calls, median microseconds per call), tests/data/10s.in per
# call (both unprofiled), and the HaplotypeCaller-like mix (6e10 cells,
# -n 3: wall and kernel ms of clphmm_compute), ROUNDS rounds (default 3);
# prints every round, then the median over rounds per build and workload.
# EXTRA adds workloads of bench/lib.sh's bench_workload_args (median
# kernel and wall ms of 3 runs, profiled; per-call workloads such as
# regions: microseconds per call, unprofiled as the region's unless
# CLPHMM_PROFILE says otherwise; e.g. long-double, peak512). Each
# SOURCE_DIR (a source tree: this repository, or an export of a commit)
# is built (Release, no tests) in SOURCE_DIR/build-ab first.
#
#   [ROUNDS=3] [DEVICE=gpu] [EXTRA="long-double peak2048"] \
#     bench/builds-ab.sh LABEL=SOURCE_DIR ...
#   bench/builds-ab.sh "before=old-tree" "after=."
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
ROUNDS=${ROUNDS:-3}
DEVICE=${DEVICE:-gpu}
# Small calls unprofiled unless CLPHMM_PROFILE says otherwise (events cost
# a region call tens of microseconds); the mix keeps its kernel column.
PROF=${CLPHMM_PROFILE:-0}
for spec in "$@"; do
  dir=${spec#*=}
  cmake -S "$dir" -B "$dir/build-ab" -DCMAKE_BUILD_TYPE=Release \
    -DCLPHMM_BUILD_TESTS=OFF >/dev/null
  cmake --build "$dir/build-ab" -j "$(nproc)" >/dev/null
done
echo "$(date -u +%FT%H:%MZ), device $DEVICE, $ROUNDS rounds"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
# The value before the [min..max] bracket of clphmm-bench's table row: the
# median per call (us) with --calls, the median kernel seconds otherwise;
# with -n the wall seconds follow the bracket.
field() { awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\[/) { print $(i - 1), $(i + 1); exit } }'; }
EXTRA=${EXTRA:-}
# Units of a workload's times: microseconds per call, else milliseconds.
unit() { if [[ " $1 " == *" --calls "* ]]; then echo "us/call"; else echo ms; fi; }
. bench/lib.sh
declare -A res
for ((r = 1; r <= ROUNDS; r++)); do
  for spec in "$@"; do
    label=${spec%%=*}
    bench=${spec#*=}/build-ab/tools/clphmm-bench
    region=$(CLPHMM_PROFILE=$PROF "$bench" --device "$DEVICE" --synthetic mix=hc,reads=30,haps=10,pairs=300 \
      --calls 1000 | grep -E '^[0-9]+ .* (float|double) ' | head -1 | field | cut -d' ' -f1)
    s10=$(CLPHMM_PROFILE=$PROF "$bench" --device "$DEVICE" --input tests/data/10s.in --call-batches all \
      --calls 1000 | grep -E '^[0-9]+ .* (float|double) ' | head -1 | field | cut -d' ' -f1)
    mix=$("$bench" --device "$DEVICE" --synthetic mix=hc,cells=6e10 -n 3 |
      grep -E '^[0-9]+ .* (float|double) ' | head -1 | field)
    kernel_ms=$(awk '{ printf "%.2f", 1000 * $1 }' <<<"$mix")
    wall_ms=$(awk '{ printf "%.2f", 1000 * $2 }' <<<"$mix")
    res[$label|region]+="$region "
    res[$label|10s]+="$s10 "
    res[$label|mixw]+="$wall_ms "
    res[$label|mixk]+="$kernel_ms "
    printf "round %d  %-12s region %8s us  10s.in %8s us  mix=hc wall %8s ms (kernel %s)\n" \
      "$r" "$label" "$region" "$s10" "$wall_ms" "$kernel_ms"
    for w in $EXTRA; do
      a=$(bench_workload_args "$w") || exit 2
      # shellcheck disable=SC2086 # the workload's words are arguments
      # (Per-call workloads print wall then kernel microseconds per call;
      # the others kernel then wall seconds.)
      kw=$(if [[ " $a " == *" --calls "* ]]; then export CLPHMM_PROFILE=$PROF; fi
        "$bench" --device "$DEVICE" --no-startup $a -n 3 |
        grep -E '^[0-9]+ .* (float|double) ' | head -1 | field |
        if [[ " $a " == *" --calls "* ]]; then awk '{ print $2, $1 }'; else
          awk '{ printf "%.2f %.2f", 1000 * $1, 1000 * $2 }'; fi)
      res[$label|$w|k]+="${kw% *} "
      res[$label|$w|w]+="${kw#* } "
      printf "round %d  %-12s %-12s kernel %8s %s  wall %8s %s\n" "$r" "$label" "$w" \
        "${kw% *}" "$(unit "$a")" "${kw#* }" "$(unit "$a")"
    done
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo
printf "%-12s %14s %14s %16s %16s\n" build "region us" "10s.in us" "mix=hc wall ms" "mix kernel ms"
for spec in "$@"; do
  label=${spec%%=*}
  printf "%-12s %14s %14s %16s %16s\n" "$label" "$(median <<<"${res[$label|region]}")" \
    "$(median <<<"${res[$label|10s]}")" "$(median <<<"${res[$label|mixw]}")" \
    "$(median <<<"${res[$label|mixk]}")"
done
echo "(medians over the rounds; per-call medians of 1000 calls; mix: median of 3 runs)"
for w in $EXTRA; do
  for spec in "$@"; do
    label=${spec%%=*}
    a=$(bench_workload_args "$w")
    printf "%-12s %-12s kernel %8s %s  wall %8s %s\n" "$label" "$w" \
      "$(median <<<"${res[$label|$w|k]}")" "$(unit "$a")" \
      "$(median <<<"${res[$label|$w|w]}")" "$(unit "$a")"
  done
done
