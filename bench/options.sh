#!/usr/bin/env bash
# Compare kernel build options on an NVIDIA GPU in one call: for each
# argument (a set of extra OpenCL build options, "" for none), print the
# register use and loop sizes of the kernels selected for SASS_LENGTHS
# (bench/nv-sass.sh) and the peak suite for LENGTHS (bench/peak.sh). Used
# to try kernel changes behind -D switches before making one the default.
#
#   OUT=dir LENGTHS="512 1024" bench/options.sh "" "-DFOO=1"
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-bench}
OUT=${OUT:-bench/out}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build "$BUILD" -j "$(nproc)" >/dev/null || exit 1
n=0
for opts in "$@"; do
  n=$((n + 1))
  echo "=== options $n: '$opts'"
  CLPHMM_BUILD_OPTIONS=$opts BUILD=$BUILD OUT=$OUT \
    LENGTHS=${SASS_LENGTHS:-512} LOOPS=1 bench/nv-sass.sh "$n"
  [ -n "${SKIP_PEAK:-}" ] ||
    CLPHMM_BUILD_OPTIONS=$opts BUILD=$BUILD LENGTHS=${LENGTHS:-512 1024} \
      bench/peak.sh gpu "${CELLS:-1e10}" | tail -n +4
done
