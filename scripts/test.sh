#!/usr/bin/env bash
# The test command: install dependencies, build in Release with warnings as
# errors, run the whole ctest suite with PoCL as the OpenCL device.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCLPHMM_WERROR=ON
cmake --build build -j "$(nproc)"
# Tests must find a device (the kernel caches: tests/CMakeLists.txt). The Java
# binding must be built (the JDK is installed above), and where the CPU has
# AVX, which Intel GKL's PairHMM needs, the comparison with GKL must run.
export CLPHMM_TEST_REQUIRE_DEVICE=1 CLPHMM_TEST_REQUIRE_JAVA=1
if grep -qw avx /proc/cpuinfo 2>/dev/null; then
  export CLPHMM_TEST_REQUIRE_GKL=1
fi
ctest --test-dir build --output-on-failure -j 2 "$@"
