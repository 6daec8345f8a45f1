#!/usr/bin/env bash
# Register use and loop instruction counts of NVIDIA OpenCL kernels: builds
# the variants that clphmm-bench selects for each length in LENGTHS with the
# verbose NVIDIA compiler, keeps the PTX, assembles it with ptxas (sm_90),
# prints one line per kernel (options | registers, spills | SASS size) and,
# with LOOPS=1, the instruction counts of each kernel's loops; then the same
# for the machine code the driver itself compiled (registers as it runs:
# cubins from its compute cache, bench/jit_cubins.py).
#
#   BUILD=build-bench OUT=dir LENGTHS="512 1024" bench/nv-sass.sh [tag]
#   BUILD=build-bench WORKLOAD="-p double --synthetic ..." bench/nv-sass.sh
# (WORKLOAD: clphmm-bench arguments of one workload instead of LENGTHS,
# e.g. long reads, whose rescue builds the double programs)
#
# Extra environment (CLPHMM_BUILD_OPTIONS, CLPHMM_VARIANTS, ...) passes
# through; the kernels are kept in OUT/sass[-tag].tgz.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-bench}
OUT=${OUT:-bench/out}
TAG=${1:+-$1}
PATH=$PATH:/usr/local/cuda/bin
command -v ptxas >/dev/null || { echo "nv-sass: no ptxas"; exit 0; }
W=$(mktemp -d "${TMPDIR:-/tmp}/clphmm-sass.XXXXXX")
trap 'rm -rf "$W"' EXIT
# The driver compiles each kernel's PTX when it is first used and keeps the
# machine code in its compute cache, read back below.
export CUDA_CACHE_PATH="$W/jit-cache" CUDA_CACHE_DISABLE=0
run_one() {
  CLPHMM_CACHE_DIR= CLPHMM_BUILD_OPTIONS="${CLPHMM_BUILD_OPTIONS:-} -cl-nv-verbose" \
    CLPHMM_BUILD_LOG="$W/build.log" "$BUILD/tools/clphmm-bench" \
    --device gpu -n 1 --no-startup "$@" >/dev/null 2>&1
}
if [ -n "${WORKLOAD:-}" ]; then
  # shellcheck disable=SC2086 # the workload's arguments split on spaces
  run_one $WORKLOAD
else
  for L in ${LENGTHS:-64 128 256 512}; do
    run_one --synthetic read=$L,hap=$L,pairs=64
  done
fi
# The binary is PTX text followed by a metadata section and a NUL.
tr -d '\000' <"$W/build.log" | awk -v out="$W" '
  /^== / { n++; ptx = 0; print > (out "/k" n ".opts"); next }
  /^-- binary/ { ptx = 1; next }
  /^\.metadata_section/ { ptx = 0 }
  ptx { print > (out "/k" n ".ptx") }'
for p in "$W"/k*.ptx; do
  b=${p%.ptx}
  ptxas -arch=sm_90 -v "$p" -o "$b.cubin" >"$b.ptxas" 2>&1
  cuobjdump -sass "$b.cubin" >"$b.sass" 2>/dev/null
  echo "$(cut -c1-110 "$b.opts") | $(grep -o 'Used [0-9]* registers' "$b.ptxas") $(grep -o '[0-9]* bytes spill stores' "$b.ptxas") | sass $(grep -c '^ */\*[0-9a-f]*\*/' "$b.sass")"
  [ -n "${LOOPS:-}" ] && python3 bench/sass_loops.py "$b.sass" | awk '$4 > 100'
  rm -f "$b.cubin"
done
# What runs: the driver's own compile of that PTX, which can allocate
# registers differently from the toolkit's ptxas above.
for c in $(python3 bench/jit_cubins.py "$CUDA_CACHE_PATH" "$W"); do
  res=$(cuobjdump -res-usage "$c" 2>/dev/null | grep -A1 'Function pairhmm' |
    grep -o 'REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*')
  [ -n "$res" ] || continue
  cuobjdump -sass "$c" >"${c%.cubin}.sass" 2>/dev/null
  echo "driver JIT $(basename "$c"): $res"
  [ -n "${LOOPS:-}" ] &&
    python3 bench/sass_loops.py "${c%.cubin}.sass" | awk '$4 > 100'
done
mkdir -p "$OUT"
tar -C "$W" -czf "$OUT/sass$TAG.tgz" $(cd "$W" && ls k[0-9]*.* jit*.sass 2>/dev/null)
