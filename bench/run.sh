#!/usr/bin/env bash
# Standard benchmark run: builds clphmm (Release) in build-bench/, then runs
# the standard suites (clphmm-bench --suite) on each OpenCL device of this
# machine, one device at a time, and stores per device
#   bench/results/<device>-<YYYY-MM-DD>.json   (clphmm-bench --json)
#   bench/results/<device>-<YYYY-MM-DD>.txt    (the printed table)
# then regenerates the plot (bench/plot.sh) when gnuplot is installed.
#
#   bench/run.sh [OPTION]... [-- CLPHMM-BENCH OPTION...]
#     --suite NAME     peak, realistic, long or all (default all)
#     --devices LIST   device indices, e.g. "0 2" (default: every device)
#     --scale F        workload scale for GPUs (default 1)
#     --cpu-scale F    workload scale for CPU devices (default 0.01: the
#                      full suites take hours on a CPU)
#     --reference      also run the CPU reference (all cores), at --cpu-scale
#     --no-build       use an existing build-bench/
# The environment (CLPHMM_VARIANTS, CLPHMM_SHUFFLE, ...) passes through.
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE=all DEVICES="" SCALE=1 CPU_SCALE=0.01 REFERENCE=0 BUILD_IT=1
while [ $# -gt 0 ]; do
  case $1 in
    --suite) SUITE=$2; shift 2 ;;
    --devices) DEVICES=$2; shift 2 ;;
    --scale) SCALE=$2; shift 2 ;;
    --cpu-scale) CPU_SCALE=$2; shift 2 ;;
    --reference) REFERENCE=1; shift ;;
    --no-build) BUILD_IT=0; shift ;;
    --) shift; break ;;
    *) echo "bench/run.sh: unknown option '$1' (see the header of $0)" >&2
       exit 2 ;;
  esac
done
BUILD=${BUILD:-build-bench}
if [ "$BUILD_IT" = 1 ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCLPHMM_BUILD_TESTS=OFF \
    >/dev/null
  cmake --build "$BUILD" -j "$(nproc)" >/dev/null
fi
BENCH="$BUILD/tools/clphmm-bench"
COMMIT=${CLPHMM_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
if git rev-parse --git-dir >/dev/null 2>&1 && ! git diff --quiet HEAD 2>/dev/null; then
  COMMIT="$COMMIT-dirty"
fi
DATE=$(date -u +%Y-%m-%d)
mkdir -p bench/results

"$BENCH" --list >"$BUILD/devices.txt" 2>&1 || {
  cat "$BUILD/devices.txt" >&2
  [ "$REFERENCE" = 1 ] || exit 1
}
cat "$BUILD/devices.txt"

# slug NAME: lowercase, runs of other characters as one '-'.
slug() {
  echo "$1" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//'
}

# out_name BASE: BASE, or BASE-2, BASE-3... when a file of that name exists.
out_name() {
  local base=$1 n=2 name=$1
  while [ -e "bench/results/$name.json" ]; do name="$base-$n"; n=$((n + 1)); done
  echo "$name"
}

# run_one SPEC LABEL SCALE [CLPHMM-BENCH OPTION...]
run_one() {
  local spec=$1 label=$2 scale=$3 name
  shift 3
  name=$(out_name "$(slug "$label")-$DATE")
  echo "== $label (--device $spec, scale $scale) -> bench/results/$name.json"
  if ! "$BENCH" --device "$spec" --suite "$SUITE" --scale "$scale" \
      --commit "$COMMIT" --json "bench/results/$name.json" "$@" |
      tee "bench/results/$name.txt"; then
    echo "bench/run.sh: clphmm-bench failed on $label" >&2
    return 1
  fi
}

STATUS=0
while read -r idx name; do
  [ -n "$idx" ] || continue
  if [ -n "$DEVICES" ] && ! [[ " $DEVICES " == *" $idx "* ]]; then continue; fi
  type=$(awk -v d="device $idx:" 'index($0, d) == 1 { f = 1; next }
    f && /type:/ { print $2; exit }' "$BUILD/devices.txt" | tr -d ,)
  s=$SCALE
  [ "$type" = cpu ] && s=$CPU_SCALE
  run_one "$idx" "$name" "$s" "$@" || STATUS=1
done < <(sed -n 's/^device \([0-9]*\): \(.*\)$/\1 \2/p' "$BUILD/devices.txt")
if [ "$REFERENCE" = 1 ]; then
  run_one reference "cpu-reference-$(hostname)" "$CPU_SCALE" "$@" || STATUS=1
fi

if command -v gnuplot >/dev/null; then
  bench/plot.sh
else
  echo "bench/run.sh: gnuplot not installed (apt-get install gnuplot-nox):" \
       "no plot; run bench/plot.sh later" >&2
fi
exit $STATUS
