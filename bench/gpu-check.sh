#!/usr/bin/env bash
# One call on a GPU machine: build, check every variant against the CPU
# reference on the GPU (and each shuffle backend where it builds), time the
# peak suite, and keep the kernels' PTX, ptxas register report and SASS for
# instruction counting.
#
#   OUT=dir COMMIT=abc123 bench/gpu-check.sh [peak-cells]
#
# Steps can be skipped: SKIP_TESTS=1, SKIP_PEAK=1, SKIP_SASS=1. Backends to
# test on the CPU OpenCL device (PoCL): CPU_BACKENDS (default "khr-abs
# intel").
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
CELLS=${1:-1e10}
BUILD=${BUILD:-build-bench}
mkdir -p "$OUT"
export COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build "$BUILD" -j "$(nproc)" >/dev/null || exit 1
echo "# commit=$COMMIT date=$(date -u +%Y-%m-%dT%H:%MZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null

run_test() { # label, env...
  local label=$1; shift
  local t0=$SECONDS
  if env "$@" CLPHMM_TEST_REQUIRE_DEVICE=1 CLPHMM_TEST_SKIP_LONG=${SKIP_LONG:-0} \
      "$BUILD/tests/test_device" >"$OUT/test-$label.txt" 2>&1; then
    echo "test $label: PASS ($((SECONDS - t0)) s) $(tail -1 "$OUT/test-$label.txt")"
  else
    echo "test $label: FAIL ($((SECONDS - t0)) s)"; tail -25 "$OUT/test-$label.txt"
  fi
}
if [ -z "${SKIP_TESTS:-}" ]; then
  run_test gpu-default CLPHMM_DEVICE=gpu
  run_test gpu-exact CLPHMM_DEVICE=gpu CLPHMM_FMA=0
  run_test gpu-local CLPHMM_DEVICE=gpu CLPHMM_SHUFFLE=local SKIP_LONG=1
  for b in ${CPU_BACKENDS-khr-abs intel}; do
    run_test "cpu-$b" CLPHMM_DEVICE=cpu CLPHMM_SHUFFLE=$b SKIP_LONG=1
  done
fi
if [ -z "${SKIP_PEAK:-}" ]; then
  BUILD=$BUILD bench/peak.sh gpu "$CELLS" | tee "$OUT/peak.txt"
fi
PATH=$PATH:/usr/local/cuda/bin
if [ -z "${SKIP_SASS:-}" ] && command -v ptxas >/dev/null; then
  # Build each variant with the verbose NVIDIA compiler and keep the PTX.
  rm -f "$OUT/build.log"
  for L in ${SASS_LENGTHS:-64 128 256 512}; do
    CLPHMM_CACHE_DIR= CLPHMM_BUILD_OPTIONS=-cl-nv-verbose \
      CLPHMM_BUILD_LOG="$OUT/build.log" "$BUILD/tools/clphmm-bench" \
      --device gpu --synthetic read=$L,hap=$L,pairs=64 -n 1 --no-startup \
      >/dev/null 2>&1
  done
  # The binary is PTX text followed by a metadata section and a NUL.
  tr -d '\000' <"$OUT/build.log" | awk -v out="$OUT" '
    /^== / { n++; ptx = 0; print > (out "/k" n ".opts"); next }
    /^-- binary/ { ptx = 1; next }
    /^\.metadata_section/ { ptx = 0 }
    ptx { print > (out "/k" n ".ptx") }'
  rm -f "$OUT/build.log"
  for p in "$OUT"/k*.ptx; do
    b=${p%.ptx}
    ptxas -arch=sm_90 -v "$p" -o "$b.cubin" >"$b.ptxas" 2>&1
    cuobjdump -sass "$b.cubin" >"$b.sass" 2>/dev/null
    echo "$(cat "$b.opts" | cut -c1-110) | $(grep -o 'Used [0-9]* registers' "$b.ptxas") $(grep -o '[0-9]* bytes spill stores' "$b.ptxas") | sass $(grep -c '^ */\*[0-9a-f]*\*/' "$b.sass")"
  done
  rm -f "$OUT"/*.cubin
  # Few files come back from some machines: bundle the kernels.
  tar -C "$OUT" -czf "$OUT/sass.tgz" $(cd "$OUT" && ls k[0-9]*.*) && rm -f "$OUT"/k[0-9]*.*
fi
