#!/usr/bin/env bash
# The whole test suite under AddressSanitizer (with LeakSanitizer) and UBSan,
# on PoCL: builds with -DCLPHMM_SANITIZE=ON in build-asan/ and runs ctest.
# Arguments are passed to ctest (e.g. scripts/sanitize.sh -R test_io).
#
# Any sanitizer report fails the test that triggered it: UBSan does not
# recover (-fno-sanitize-recover=all) and ASan/LSan exit with an error.
# Leaks inside the OpenCL runtime are suppressed narrowly, see
# tests/sanitize/lsan.supp for each entry and why.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCLPHMM_SANITIZE=ON -DCLPHMM_WERROR=ON >/dev/null
cmake --build build-asan -j "$(nproc)" >/dev/null
supp=$PWD/tests/sanitize/lsan.supp
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
export LSAN_OPTIONS=suppressions=$supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Tests must find a device (the kernel caches: tests/CMakeLists.txt). The
# 20,000 x 30,000 pair takes too long under ASan's slowdown on 2 cores (it
# runs in the Release suite of scripts/test.sh).
export CLPHMM_TEST_REQUIRE_DEVICE=1 CLPHMM_TEST_SKIP_LONG=1
# A failing test runs once more: LeakSanitizer's exit-time scan sometimes
# crashes on its own ("Tracer caught signal 11 ... LeakSanitizer has
# encountered a fatal error") when PoCL's worker threads are still winding
# down. That is a crash of the tool, not a report; a real sanitizer report
# repeats and still fails the run.
no_scan='^(test_cli|test_determinism|test_determinism_threads)$'
ctest --test-dir build-asan --output-on-failure -j 2 --repeat until-pass:2 \
  -E "$no_scan" "$@"
# Two tests run with ASan and UBSan but without the exit-time leak scan,
# because the scan's tracer crashes there:
# - test_cli starts `clphmm` on PoCL dozens of times, and the scan crashed
#   every time on one input (pairhmm-testdata.txt on the device);
# - test_determinism and test_determinism_threads (many contexts, PoCL's
#   default thread count) crashed in the tracer twice in a row in CI runs;
#   running the same check earlier, with PoCL's threads parked
#   (__lsan_do_leak_check at the end of main), crashed the same way.
# Leaks of their code paths are covered with the scan on by test_reader,
# test_io, test_api, test_faults and test_device_fma, which run the same
# library code.
ASAN_OPTIONS=${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0} \
  ctest --test-dir build-asan --output-on-failure -j 2 -R "$no_scan" "$@"
