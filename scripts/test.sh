#!/usr/bin/env bash
# The test command: install dependencies, build in Release with warnings as
# errors, run the whole ctest suite with PoCL as the OpenCL device.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCLPHMM_WERROR=ON
cmake --build build -j "$(nproc)"
# PoCL's own kernel cache stays off; tests must find a device.
export POCL_KERNEL_CACHE=0 CLPHMM_TEST_REQUIRE_DEVICE=1
ctest --test-dir build --output-on-failure -j 2 "$@"
