#!/usr/bin/env bash
# The thread-related tests under ThreadSanitizer, on PoCL: builds with
# -DCLPHMM_SANITIZE_THREAD=ON in build-tsan/ (only the programs these tests
# run) and runs them with ctest. Arguments are passed to ctest (e.g.
# scripts/tsan.sh -R test_pool, or --repeat until-fail:5).
#
# What runs, for include/clphmm.h's thread-safety promises and the threads
# inside the library and the command:
# - test_threads: clphmm_compute from several threads on one context and on
#   a context each, and failing calls on one context read back whole with
#   clphmm_last_error(context);
# - test_first_use: threads making the process's first OpenCL calls at once
#   (the device listing under pthread_once);
# - test_pool, test_stage, test_schedule: the host stages' thread pool and
#   its users;
# - test_multi: a context of several devices (a thread per device);
# - test_determinism_threads: calls with PoCL's default thread count;
# - test_cli: the command's reader thread and results formatted on several
#   threads.
#
# Any report fails the run: halt_on_error=1 ends the process that reported
# (exit 66), and every report also goes to a file under
# build-tsan/tsan-reports/, checked after ctest, so that a report in a
# process whose exit status a test does not look at (the command run for
# an expected failure) fails the run as well. tests/sanitize/tsan.supp may
# only suppress reports inside the OpenCL runtime; it says why for each.
#
# ThreadSanitizer comes with GCC (libtsan2, a dependency of build-essential's
# gcc on amd64). It needs the kernel's default mmap randomization (28 bits
# on Debian 12); with more it stops with "unexpected memory mapping".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
tests=(test_threads test_first_use test_pool test_stage test_schedule
       test_multi test_determinism_threads test_cli)
# The programs behind the tests (test_determinism_threads runs
# test_determinism, test_cli runs clphmm_cli).
targets=(test_threads test_first_use test_pool test_stage test_schedule
         test_multi test_determinism clphmm_cli)
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCLPHMM_SANITIZE_THREAD=ON -DCLPHMM_WERROR=ON >/dev/null
cmake --build build-tsan -j "$(nproc)" --target "${targets[@]}" >/dev/null
reports=$PWD/build-tsan/tsan-reports
rm -rf "$reports"
mkdir -p "$reports"
supp=$PWD/tests/sanitize/tsan.supp
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp:print_suppressions=0:log_path=$reports/report"
# Tests must find a device (the kernel caches: tests/CMakeLists.txt).
export CLPHMM_TEST_REQUIRE_DEVICE=1
regex="^($(IFS='|'; echo "${tests[*]}"))\$"
rc=0
ctest --test-dir build-tsan --output-on-failure -j 2 -R "$regex" "$@" || rc=$?
shopt -s nullglob
found=("$reports"/report.*)
if [ ${#found[@]} -gt 0 ]; then
  for f in "${found[@]}"; do
    echo "--- $f"
    cat "$f"
  done
  echo "tsan: ThreadSanitizer reported in ${#found[@]} process(es), above"
  exit 1
fi
exit "$rc"
