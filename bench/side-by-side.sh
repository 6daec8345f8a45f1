#!/usr/bin/env bash
# clphmm and gpuPairHMM side by side on the same HaplotypeCaller-like input
# files: whole-process wall time of each program (file in, file out), the
# library / batch time, and whether their results agree. One table, written
# to bench/results/<device>-<date>-side-by-side-<commit>.txt.
#
#   bench/side-by-side.sh [OPTION]...
#     --scale F          multiply the synthetic workload sizes (default 1;
#                        e.g. 0.001 on a CPU OpenCL device)
#     --reps N           timed runs per measurement, after one untimed
#                        warm-up run (default 3; the table has medians)
#     --device SPEC      clphmm's device (default: clphmm's default device)
#     --workloads LIST   any of "hc region 10s long" (default: all four)
#     --gpupairhmm DIR   gpuPairHMM's source (default $GPUPAIRHMM_SRC, else
#                        ../shared/anchors/gpuPairHMM relative to the
#                        repository); it is copied and built in
#                        $BUILD/gpupairhmm with its own Makefile
#     --gpuarch N        GPUARCH and TUNINGARCH of that build (default 90)
#     --gpupairhmm-bin F use this gpuPairHMM executable, build none
#     --no-build         use the existing builds in $BUILD
#     --build-only       build clphmm and gpuPairHMM, then stop
#
# Workloads (written with `clphmm-bench --write`, sizes times --scale):
#   hc      mix=hc,cells=6e10: HaplotypeCaller-like regions
#   region  one region of 30 reads x 10 haplotypes (300 pairs), computed
#           round(1000 x scale) times (at least 5), one region per call:
#           clphmm --chunk-pairs 300 and gpuPairHMM --fileBatchsize 300 on
#           the file of the region repeated, and clphmm-bench --calls on the
#           region (library columns: microseconds per call)
#   10s     tests/data/10s.in as it is
#   long    mix=long,read=1100-2000,hap=2000-3000,cells=7e9
#
# clphmm runs with --raw-base-quals: gpuPairHMM does not raise base
# qualities below 6, so both compute the same file the same way.
#
# Environment: BUILD (default build-bench), LOGS (raw logs, JSON and build
# logs; default $BUILD/side-by-side), OUT (when set: the table and a
# tar.gz of LOGS are copied there at the end), WORK (input and output
# files; default $BUILD/side-by-side-data), STEP_TIMEOUT (seconds per
# program run, default 180), BUILD_TIMEOUT (seconds per build, default
# 480), TOL (results differ when |a - b| > TOL, default 1e-5), COMMIT (when
# git is absent).
# Without nvcc, or without gpuPairHMM's source, gpuPairHMM's columns are
# n/a and the script says why. NVIDIA's OpenCL driver must be registered
# with the ICD loader first (see bench/README.md).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

SCALE=1 REPS=3 DEVICE="" ARCH=90 BUILD_IT=1 BUILD_ONLY=0
WORKLOADS="hc region 10s long" GPU_BIN=""
GPU_SRC=${GPUPAIRHMM_SRC:-../shared/anchors/gpuPairHMM}
while [ $# -gt 0 ]; do
  case $1 in
    --scale) SCALE=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --device) DEVICE=$2; shift 2 ;;
    --workloads) WORKLOADS=$2; shift 2 ;;
    --gpupairhmm) GPU_SRC=$2; shift 2 ;;
    --gpuarch) ARCH=$2; shift 2 ;;
    --gpupairhmm-bin) GPU_BIN=$2; shift 2 ;;
    --no-build) BUILD_IT=0; shift ;;
    --build-only) BUILD_ONLY=1; shift ;;
    *) echo "bench/side-by-side.sh: unknown option '$1' (see the header of $0)" >&2
       exit 2 ;;
  esac
done
BUILD=${BUILD:-build-bench}
LOGS=${LOGS:-$BUILD/side-by-side}
WORK=${WORK:-$BUILD/side-by-side-data}
STEP_TIMEOUT=${STEP_TIMEOUT:-180}
BUILD_TIMEOUT=${BUILD_TIMEOUT:-480}
TOL=${TOL:-1e-5}
GPU_BUILD=$BUILD/gpupairhmm
CLI=$BUILD/tools/clphmm
BENCH=$BUILD/tools/clphmm-bench
GPU=${GPU_BIN:-$GPU_BUILD/gpuPairHMM}
mkdir -p "$LOGS" "$WORK" bench/results
rm -f "$LOGS"/*.log "$LOGS"/*.json # this run's logs only
# shellcheck source=bench/json-field.sh
. bench/json-field.sh

say() { echo "side-by-side: $*" >&2; }
DEV_ARGS=()
[ -n "$DEVICE" ] && DEV_ARGS=(--device "$DEVICE")

# ---- builds -----------------------------------------------------------------

build_clphmm() {
  say "building clphmm (Release) in $BUILD"
  timeout "$BUILD_TIMEOUT" cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCLPHMM_BUILD_TESTS=OFF >"$LOGS/build-clphmm.log" 2>&1 &&
    timeout "$BUILD_TIMEOUT" cmake --build "$BUILD" -j "$(nproc)" \
      >>"$LOGS/build-clphmm.log" 2>&1
}

# A copy of the source (which may be read-only) with its timestamps, so that
# make rebuilds only what changed; then its own Makefile.
build_gpupairhmm() {
  if ! command -v nvcc >/dev/null; then
    GPU_WHY="nvcc not found"
    return 1
  fi
  if [ ! -f "$GPU_SRC/main.cu" ] || [ ! -f "$GPU_SRC/Makefile" ]; then
    GPU_WHY="no gpuPairHMM source in $GPU_SRC (set GPUPAIRHMM_SRC or --gpupairhmm)"
    return 1
  fi
  say "building gpuPairHMM (GPUARCH=$ARCH TUNINGARCH=$ARCH) in $GPU_BUILD"
  mkdir -p "$GPU_BUILD"
  cp -pf "$GPU_SRC"/Makefile "$GPU_SRC"/*.cu "$GPU_SRC"/*.cuh "$GPU_SRC"/*.hpp \
    "$GPU_BUILD"/ && chmod -R u+w "$GPU_BUILD" || {
    GPU_WHY="cannot copy $GPU_SRC"
    return 1
  }
  if ! timeout "$BUILD_TIMEOUT" make -C "$GPU_BUILD" -j 4 GPUARCH="$ARCH" \
      TUNINGARCH="$ARCH" gpuPairHMM >"$LOGS/build-gpupairhmm.log" 2>&1; then
    GPU_WHY="gpuPairHMM build failed (see $LOGS/build-gpupairhmm.log)"
    return 1
  fi
}

GPU_WHY="" # why gpuPairHMM is skipped ("": it is not)
if [ "$BUILD_IT" = 1 ]; then
  build_clphmm || { say "clphmm build failed:"; tail -20 "$LOGS/build-clphmm.log" >&2; exit 1; }
fi
if [ -n "$GPU_BIN" ]; then
  [ -x "$GPU_BIN" ] || GPU_WHY="$GPU_BIN is not an executable"
elif [ "$BUILD_IT" = 1 ]; then
  build_gpupairhmm || true
elif ! command -v nvcc >/dev/null; then
  GPU_WHY="nvcc not found"
elif [ ! -x "$GPU" ]; then
  GPU_WHY="--no-build and no $GPU"
fi
[ -n "$GPU_WHY" ] && say "gpuPairHMM is skipped: $GPU_WHY"
[ "$BUILD_ONLY" = 1 ] && exit 0
if [ ! -x "$CLI" ] || [ ! -x "$BENCH" ]; then say "no clphmm build in $BUILD"; exit 1; fi

# ---- helpers ----------------------------------------------------------------

# elapsed LOG CMD...: runs CMD under the step timeout, output into LOG;
# prints its wall seconds, or "fail".
elapsed() {
  local log=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  if timeout "$STEP_TIMEOUT" "$@" >"$log" 2>&1; then
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
  else
    echo fail
  fi
}

# median: of the numbers on stdin; "fail" when any is not a number.
median() {
  sort -g | awk '$1 !~ /^[0-9.eE+-]+$/ { bad = 1 } { v[NR] = $1 }
    END {
      if (bad || NR == 0) { print "fail"; exit }
      print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    }'
}

# repeat_runs NAME CMD...: one warm-up, then REPS timed runs; each run's
# output in $LOGS/NAME.N.log; prints the median wall seconds.
repeat_runs() {
  local name=$1 k
  shift
  for k in $(seq 0 "$REPS"); do
    t=$(elapsed "$LOGS/$name.$k.log" "$@")
    [ "$k" -gt 0 ] && echo "$t"
    [ "$t" = fail ] && { say "$name failed: $(tail -c 300 "$LOGS/$name.$k.log")"; break; }
  done | median
}

# gpu_batch_median NAME: median "Batch processing time" of the timed runs.
gpu_batch_median() {
  local k
  for k in $(seq 1 "$REPS"); do
    sed -n 's/^Batch processing time: \([0-9.eE+-]*\)s.*/\1/p' \
      "$LOGS/$1.$k.log" 2>/dev/null | head -n 1 | grep . || echo fail
  done | median
}

# flatten_gpu FILE: gpuPairHMM's output ("NR NH", then NR lines of NH
# scores per block) as one score per line, clphmm's order.
flatten_gpu() {
  awk 'left == 0 { left = $1; next } { for (i = 1; i <= NF; i++) print $i; left-- }' "$1"
}

# compare A B: "N_DIFFERING MAX_DIFF" over pairs (-inf equals only -inf),
# or "count-mismatch" when the numbers of results differ.
compare() {
  if [ "$(wc -l <"$1")" -ne "$(wc -l <"$2")" ]; then
    echo "count-mismatch $(wc -l <"$1")/$(wc -l <"$2")"
    return
  fi
  paste "$1" "$2" | awk -v tol="$TOL" '
    { a = $1; b = $2
      if (a == "-inf" || b == "-inf" || a == "nan" || b == "nan" ||
          a == "inf" || b == "inf") { if (a != b) n++; next }
      d = a - b; if (d < 0) d = -d
      if (d > tol) n++
      if (d > max) max = d }
    END { printf "%d %.2e\n", n, max }'
}

# ratio A B: B / A with two decimals (n/a unless both are numbers).
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    if (a ~ /^[0-9.eE+-]+$/ && b ~ /^[0-9.eE+-]+$/ && a > 0)
      printf "%.2f", b / a; else printf "n/a" }'
}

# num X: X with 4 significant digits (as it is when not a number).
num() {
  awk -v x="$1" 'BEGIN { if (x ~ /^[0-9.eE+-]+$/) printf "%.4g", x; else printf "%s", x }'
}

# ---- workloads --------------------------------------------------------------

CALLS=$(awk -v s="$SCALE" 'BEGIN { n = int(1000 * s + 0.5); print n < 5 ? 5 : n }')

# make_input NAME: writes $WORK/NAME.in (and the region's repeated file).
make_input() {
  local w=(timeout "$STEP_TIMEOUT" "$BENCH")
  case $1 in
    hc) "${w[@]}" --synthetic mix=hc,cells=6e10 --scale "$SCALE" --write "$WORK/hc.in" ;;
    region)
      "${w[@]}" --synthetic mix=hc,reads=30,haps=10,pairs=300 --write "$WORK/region1.in" &&
        "${w[@]}" --input "$WORK/region1.in" --raw-base-quals --repeat "$CALLS" \
          --write "$WORK/region.in" ;;
    10s) cp tests/data/10s.in "$WORK/10s.in" ;;
    long)
      "${w[@]}" --synthetic mix=long,read=1100-2000,hap=2000-3000,cells=7e9 \
        --scale "$SCALE" --write "$WORK/long.in" ;;
    *) say "unknown workload '$1'"; return 1 ;;
  esac
}

# The library runs of a workload: clphmm-bench on the file (the region: one
# region per call), profiled (-v: the kernel time and the stages) into
# NAME.json, then unprofiled into NAME.wall.json (the wall time: the events
# of profiling cost a region call tens of microseconds).
bench_lib() {
  local name=$1 args
  if [ "$name" = region ]; then
    args=(--input "$WORK/region1.in" --calls "$CALLS")
  else
    args=(--input "$WORK/$name.in" -n "$REPS")
  fi
  timeout "$STEP_TIMEOUT" "$BENCH" "${args[@]}" --raw-base-quals "${DEV_ARGS[@]}" \
    --no-startup -v --json "$LOGS/$name.json" >"$LOGS/$name.bench.log" 2>&1 &&
    CLPHMM_PROFILE=0 timeout "$STEP_TIMEOUT" "$BENCH" "${args[@]}" --raw-base-quals \
      "${DEV_ARGS[@]}" --no-startup --json "$LOGS/$name.wall.json" \
      >>"$LOGS/$name.bench.log" 2>&1
}

# One table row: NAME PAIRS CELLS | clphmm gpu ratio | lib wall, kernel,
# gpu batch, ratios | results.
measure() {
  local name=$1 in=$WORK/$1.in chunk=() gbatch=()
  if [ "$name" = region ]; then
    chunk=(--chunk-pairs 300)
    gbatch=(--fileBatchsize 300)
  fi
  say "$name: clphmm"
  local c_wall g_wall="n/a" g_batch="n/a" lw="fail" lk="fail" diff="n/a"
  c_wall=$(repeat_runs "$name.clphmm" "$CLI" --raw-base-quals "${DEV_ARGS[@]}" \
    "${chunk[@]}" -o "$WORK/$name.clphmm.txt" "$in")
  say "$name: clphmm-bench"
  if bench_lib "$name"; then
    if [ "$name" = region ]; then
      lw=$(json_field "$LOGS/$name.wall.json" call_wall_us)
      lk=$(json_field "$LOGS/$name.json" call_kernel_us)
    else
      lw=$(json_field "$LOGS/$name.wall.json" wall_seconds)
      lk=$(json_field "$LOGS/$name.json" kernel_seconds)
    fi
  else
    say "$name: clphmm-bench failed: $(tail -c 300 "$LOGS/$name.bench.log")"
  fi
  if [ -z "$GPU_WHY" ]; then
    say "$name: gpuPairHMM"
    g_wall=$(repeat_runs "$name.gpupairhmm" "$GPU" --inputfile "$in" \
      --outputfile "$WORK/$name.gpu.raw" "${gbatch[@]}")
    g_batch=$(gpu_batch_median "$name.gpupairhmm")
    if [ "$name" = region ] && [ "$g_batch" != fail ]; then
      g_batch=$(awk -v t="$g_batch" -v n="$CALLS" 'BEGIN { printf "%.1f", t / n * 1e6 }')
    fi
    if [ -s "$WORK/$name.clphmm.txt" ] && [ -s "$WORK/$name.gpu.raw" ]; then
      flatten_gpu "$WORK/$name.gpu.raw" >"$WORK/$name.gpu.txt"
      diff=$(compare "$WORK/$name.clphmm.txt" "$WORK/$name.gpu.txt")
    fi
  fi
  local pairs cells label=$name
  pairs=$(json_field "$LOGS/$name.json" pairs)
  cells=$(json_field "$LOGS/$name.json" cells)
  if [ "$name" = region ]; then
    label="region x$CALLS (us/call)"
    pairs=$((${pairs:-0} * CALLS))
    cells=$(awk -v c="${cells:-0}" -v n="$CALLS" 'BEGIN { print c * n }')
  fi
  printf "%-26s %9s %9.3g | %9s %9s %6s | %11s %11s %11s %6s %6s | %s\n" \
    "$label" "${pairs:-?}" "${cells:-0}" "$(num "$c_wall")" "$(num "$g_wall")" \
    "$(ratio "$c_wall" "$g_wall")" "$(num "$lw")" "$(num "$lk")" "$(num "$g_batch")" \
    "$(ratio "$lw" "$g_batch")" "$(ratio "$lk" "$g_batch")" "$diff"
}

# ---- the run ----------------------------------------------------------------

COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
if git rev-parse --git-dir >/dev/null 2>&1 && ! git diff --quiet HEAD 2>/dev/null; then
  COMMIT="$COMMIT-dirty"
fi
"$BENCH" --list >"$LOGS/devices.txt" 2>&1 || say "no OpenCL device: $(head -c 300 "$LOGS/devices.txt")"
DEVICE_NAME=$(timeout "$STEP_TIMEOUT" "$BENCH" "${DEV_ARGS[@]}" --no-startup -n 1 \
  --synthetic read=16,hap=16,pairs=1 --json "$LOGS/device.json" >/dev/null 2>&1 &&
  json_field "$LOGS/device.json" device)
DRIVER=$(json_field "$LOGS/device.json" driver 2>/dev/null)
[ -n "$DEVICE_NAME" ] || { say "clphmm cannot open its device (see $LOGS/devices.txt)"; exit 1; }
SLUG=$(echo "$DEVICE_NAME" | tr '[:upper:]' '[:lower:]' |
  sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
DATE=$(date -u +%Y-%m-%d)
TABLE=bench/results/$SLUG-$DATE-side-by-side-$COMMIT.txt

{
  echo "# clphmm vs gpuPairHMM, $(date -u +%Y-%m-%dT%H:%MZ), commit $COMMIT"
  echo "# clphmm device: $DEVICE_NAME (driver $DRIVER)"
  # (The host's stages pace large calls: hosts of one GPU kind differ.)
  echo "# host CPU: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1), $(nproc) cores"
  if [ -n "$GPU_BIN" ] && [ -z "$GPU_WHY" ]; then
    echo "# gpuPairHMM: $GPU_BIN (sha256 $(sha256sum <"$GPU_BIN" | cut -c1-12))"
  elif [ -z "$GPU_WHY" ]; then
    echo "# gpuPairHMM: $GPU_SRC (sources sha256 $(cat "$GPU_BUILD"/*.cu "$GPU_BUILD"/*.cuh | sha256sum | cut -c1-12)), GPUARCH=TUNINGARCH=$ARCH, $(nvcc --version | tail -n 1)"
    command -v nvidia-smi >/dev/null &&
      echo "# GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
  else
    echo "# gpuPairHMM: skipped ($GPU_WHY)"
  fi
  echo "# scale $SCALE, medians of $REPS runs after one warm-up; clphmm with --raw-base-quals"
  echo "# process: whole-process wall s (clphmm FILE -o OUT; gpuPairHMM --inputfile FILE --outputfile OUT)"
  echo "# library: clphmm-bench --input FILE wall and kernel s per clphmm_compute of the file; gpuPairHMM's"
  echo "#   'Batch processing time' (its batches' host wall time); region rows: microseconds per call"
  echo "# ratios: gpuPairHMM time / clphmm time (> 1: clphmm is faster); results: pairs differing by > $TOL, max |diff|"
  echo "#   (gpuPairHMM prints 5 decimals: rounding alone moves its values by up to 5e-6)"
  printf "%-26s %9s %9s | %9s %9s %6s | %11s %11s %11s %6s %6s | %s\n" \
    workload pairs cells "clphmm" "gpuPHMM" ratio "lib wall" "lib kernel" \
    "gpuPHMM" "r(w)" "r(k)" "results"
  for wl in $WORKLOADS; do
    say "$wl: writing the input"
    if ! make_input "$wl" >"$LOGS/$wl.write.log" 2>&1; then
      say "$wl: writing the input failed: $(tail -c 300 "$LOGS/$wl.write.log")"
      printf "%-26s input could not be written\n" "$wl"
      continue
    fi
    measure "$wl"
  done
  echo "# clphmm-bench -v: where the library's time went (clphmm_stats of the median run or call)"
  for wl in $WORKLOADS; do
    [ -f "$LOGS/$wl.bench.log" ] &&
      printf "%-8s %s\n" "$wl" "$(grep -m 1 -o 'stages (.*' "$LOGS/$wl.bench.log")"
  done
} | tee "$TABLE"
say "table: $TABLE; logs: $LOGS"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT" && cp "$TABLE" "$OUT"/ &&
    tar czf "$OUT/side-by-side-logs.tar.gz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")" &&
    say "copied the table and side-by-side-logs.tar.gz to $OUT"
fi
