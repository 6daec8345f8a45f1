#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan and UBSan in
# build-fuzz/, and runs each for a bounded time on a copy of its seed corpus
# (tests/fuzz/corpus/TARGET). Fails on any crash, sanitizer report or broken
# invariant; the input that caused it is kept as build-fuzz/artifacts/*.
#
#   scripts/fuzz.sh [TARGET...]      (default: all three)
#
# Environment: FUZZ_SECONDS (per target, default 60), FUZZ_JOBS (parallel
# runs per target, default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh fuzz
seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(reader stream api)

CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCLPHMM_FUZZ=ON -DCLPHMM_BUILD_TESTS=OFF -DCLPHMM_WERROR=ON >/dev/null
cmake --build build-fuzz -j "$(nproc)" \
  --target "${targets[@]/#/fuzz_}" >/dev/null

mkdir -p build-fuzz/artifacts
status=0
for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t
  rm -rf "$corpus"
  mkdir -p "$corpus"
  cp tests/fuzz/corpus/"$t"/* "$corpus"/
  dict=()
  if [ "$t" != api ]; then dict=(-dict=tests/fuzz/reader.dict); fi
  log=build-fuzz/fuzz_$t.log
  echo "fuzz_$t: ${seconds}s on $(ls "$corpus" | wc -l) seeds"
  rc=0
  # -max_len 4096: long enough for many batches, short enough for speed;
  # -rss_limit_mb: a leak or an unbounded allocation fails the run.
  build-fuzz/tests/fuzz/fuzz_"$t" "${dict[@]}" -max_total_time="$seconds" \
    -max_len=4096 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/artifacts/"$t"- "$corpus" >"$log" 2>&1 ||
    rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 |
    sed -E 's/.*(cov: [0-9]+ ft: [0-9]+ corp: [^ ]+).*/\1/')
  echo "fuzz_$t: exit $rc, ${execs:-?} executions, ${cov:-no coverage line}," \
    "corpus $(ls "$corpus" | wc -l) inputs"
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "fuzz_$t FAILED; the end of its log ($log):"
    tail -n 40 "$log"
    ls build-fuzz/artifacts/"$t"-* 2>/dev/null || true
  fi
done
exit $status
