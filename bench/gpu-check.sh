#!/usr/bin/env bash
# One call on a GPU machine: build, check every variant against the CPU
# reference on the GPU (and each shuffle backend where it builds), time the
# peak suite, and keep the kernels' PTX, ptxas register report and SASS for
# instruction counting (bench/nv-sass.sh).
#
#   OUT=dir COMMIT=abc123 bench/gpu-check.sh [peak-cells]
#
# Steps can be skipped: SKIP_TESTS=1, SKIP_PEAK=1, SKIP_SASS=1; SKIP_LONG=1
# leaves test_long (the 20,000 x 30,000 pair) out of every test run (the
# local-memory and CPU runs always leave it out). The local-memory run
# also gives every read 8 work-items in the row preparation
# (CLPHMM_PREP_LANES=8: long reads' bounds in blocks of 32 rows, checked
# by the early-exit tests). Backends to test on the CPU OpenCL device
# (PoCL): CPU_BACKENDS (default "khr-abs intel").
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
CELLS=${1:-1e10}
BUILD=${BUILD:-build-bench}
mkdir -p "$OUT"
export COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCLPHMM_BUILD_TESTS=ON >/dev/null &&
  cmake --build "$BUILD" -j "$(nproc)" >/dev/null || exit 1
echo "# commit=$COMMIT date=$(date -u +%Y-%m-%dT%H:%MZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null

run_test() { # label, env... (SKIP_LONG=1 among them: without test_long)
  local label=$1 skip=${SKIP_LONG:-0} a; shift
  for a in "$@"; do [ "$a" = SKIP_LONG=1 ] && skip=1; done
  local t0=$SECONDS
  if env "$@" CLPHMM_TEST_REQUIRE_DEVICE=1 CLPHMM_TEST_SKIP_LONG=$skip \
      "$BUILD/tests/test_device" >"$OUT/test-$label.txt" 2>&1; then
    echo "test $label: PASS ($((SECONDS - t0)) s) $(tail -1 "$OUT/test-$label.txt")"
  else
    echo "test $label: FAIL ($((SECONDS - t0)) s)"; tail -25 "$OUT/test-$label.txt"
  fi
}
if [ -z "${SKIP_TESTS:-}" ]; then
  run_test gpu-default CLPHMM_DEVICE=gpu
  run_test gpu-exact CLPHMM_DEVICE=gpu CLPHMM_FMA=0
  run_test gpu-local CLPHMM_DEVICE=gpu CLPHMM_SHUFFLE=local CLPHMM_PREP_LANES=8 \
    SKIP_LONG=1
  for b in ${CPU_BACKENDS-khr-abs intel}; do
    run_test "cpu-$b" CLPHMM_DEVICE=cpu CLPHMM_SHUFFLE=$b SKIP_LONG=1
  done
fi
if [ -z "${SKIP_PEAK:-}" ]; then
  BUILD=$BUILD bench/peak.sh gpu "$CELLS" | tee "$OUT/peak.txt"
fi
if [ -z "${SKIP_SASS:-}" ]; then
  BUILD=$BUILD OUT=$OUT LENGTHS=${SASS_LENGTHS:-64 128 256 512} LOOPS=1 \
    bench/nv-sass.sh
fi
