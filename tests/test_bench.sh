#!/usr/bin/env bash
# End-to-end tests of `clphmm-bench` on small workloads (PoCL in CI).
#
#   test_bench.sh BENCH_BINARY JSON_CHECK_BINARY DATA_DIR
#
# Prints one line per check and "N passed, M failed" at the end; exits
# non-zero on any failure. Device checks are skipped when no OpenCL device
# exists (a failure when CLPHMM_TEST_REQUIRE_DEVICE is set).
set -u

if [ $# -lt 3 ]; then
  echo "usage: $0 BENCH_BINARY JSON_CHECK_BINARY DATA_DIR" >&2
  exit 2
fi
BENCH=$1
JCHECK=$2
DATA=$3

PASSED=0
FAILED=0
SKIPPED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/clphmm-bench-test.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
# The user's tuning file must not change what is measured here.
export CLPHMM_TUNING_FILE="$TMP/no-tuning.txt"

pass() { PASSED=$((PASSED + 1)); echo "ok   $1"; }
fail() {
  FAILED=$((FAILED + 1))
  echo "FAIL $1"
  shift
  local line
  for line in "$@"; do echo "     $line"; done
}
skip() { SKIPPED=$((SKIPPED + 1)); echo "skip $1"; }

run() {
  "$BENCH" "$@" >"$TMP/out" 2>"$TMP/err"
  RC=$?
}
last_err() { head -c 600 "$TMP/err" | tr '\n' '|'; }
last_out() { head -c 600 "$TMP/out" | tr '\n' '|'; }

# check NAME CONDITION-COMMAND...: pass if the command succeeds.
check() {
  local name=$1
  shift
  if "$@"; then pass "$name"; else fail "$name" "rc=$RC" "stderr: $(last_err)" "stdout: $(last_out)"; fi
}

# jget KEY: a value from the last json_check listing ($TMP/flat).
jget() { sed -n "s/^$1=//p" "$TMP/flat" | head -n 1; }
# jcount REGEX: how many listed paths match.
jcount() { grep -c -E "$1" "$TMP/flat"; }
# json FILE: validate and flatten; returns json_check's status.
json() { "$JCHECK" "$1" >"$TMP/flat" 2>"$TMP/jerr"; }

# awk_true EXPR: evaluates a numeric condition.
awk_true() { awk "BEGIN { exit !($1) }"; }

# ---- Help, version and usage errors (no device needed) --------------------

run --help
check "--help exits 0 and documents the options" \
  eval '[ $RC -eq 0 ] && grep -q -- "--suite" "$TMP/out" && grep -q -- "--tune" "$TMP/out"'
run --version
check "--version prints the version" \
  eval '[ $RC -eq 0 ] && grep -q "^clphmm-bench [0-9]" "$TMP/out"'

# bad ARGS... -- MESSAGE: exit status 2 and MESSAGE on stderr.
bad() {
  local msg=${!#} args=("${@:1:$#-1}")
  run "${args[@]}"
  if [ "$RC" -eq 2 ] && grep -q -- "$msg" "$TMP/err"; then
    pass "usage error: ${args[*]}"
  else
    fail "usage error: ${args[*]}" "rc=$RC (want 2)" "stderr: $(last_err)" "want: $msg"
  fi
}
bad "no workload"
bad --bogus "unknown option '--bogus'"
bad --synthetic read=64,hap=64,pairs=1 --frobnicate 3 "unknown option '--frobnicate'"
bad --synthetic "needs a value"
bad --synthetic read=64,hap=64,pairs=1 -n 0 "bad value for -n"
bad --synthetic read=64,hap=64,pairs=1 -n x "bad value for -n"
bad --synthetic read=64,hap=64,pairs=1 --scale -1 "bad value for --scale"
bad --synthetic read=64,hap=64,pairs=1 --precision half "bad value for --precision"
bad --suite huge "bad value for --suite"
bad --synthetic read=64,hap=64 "needs pairs=N or cells=N"
bad --synthetic read=64,pairs=1 "needs read=L,hap=L"
bad --synthetic read=64,hap=64,pairs=1,colour=red "bad --synthetic field 'colour=red'"
bad --synthetic mix=weird,pairs=1 "bad --synthetic field 'mix=weird'"
bad --synthetic read=0,hap=64,pairs=1 "bad --synthetic field 'read=0'"
bad --repeat 2 --synthetic read=64,hap=64,pairs=1 "--repeat needs --input"
bad --tune --tune-bins 32,16 --device reference "needs an OpenCL device"

# ---- Without any OpenCL runtime --------------------------------------------

NOCL=(env CLPHMM_OPENCL_LIBRARY="$TMP/no-such-libOpenCL.so")
"${NOCL[@]}" "$BENCH" --list >"$TMP/out" 2>"$TMP/err"
RC=$?
check "--list without OpenCL: exit 1, clear message" \
  eval '[ $RC -eq 1 ] && grep -q "no OpenCL devices" "$TMP/err" && grep -q "reference" "$TMP/out"'
"${NOCL[@]}" "$BENCH" --device reference --synthetic read=40,hap=60,pairs=16 \
  -n 1 --json "$TMP/ref.json" >"$TMP/out" 2>"$TMP/err"
RC=$?
check "--device reference runs without OpenCL" \
  eval '[ $RC -eq 0 ] && json "$TMP/ref.json" && [ "$(jget runs.0.device_index)" = -1 ] && [ "$(jget runs.0.pairs)" = 16 ]'
"${NOCL[@]}" "$BENCH" --synthetic read=40,hap=60,pairs=16 -n 1 \
  >"$TMP/out" 2>"$TMP/err"
RC=$?
check "a device run without OpenCL fails cleanly" \
  eval '[ $RC -eq 1 ] && grep -q "clphmm-bench: device" "$TMP/err"'
run --input "$TMP/missing.in" --device reference
check "a missing --input file: exit 1 naming the file" \
  eval '[ $RC -eq 1 ] && grep -q "missing.in" "$TMP/err"'

# ---- Device checks ---------------------------------------------------------

if ! "$BENCH" --list >"$TMP/list" 2>&1; then
  if [ -n "${CLPHMM_TEST_REQUIRE_DEVICE:-}" ]; then
    fail "an OpenCL device is required" "$(head -c 300 "$TMP/list")"
  else
    skip "device checks (no OpenCL device)"
  fi
  echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
  [ "$FAILED" -eq 0 ]
  exit
fi
N_DEV=$(grep -c '^device [0-9]*:' "$TMP/list")

check "--list shows each device with its plan" \
  eval 'grep -q "^device 0:" "$TMP/list" && grep -q "variants: " "$TMP/list" && grep -q "chosen from: builtin" "$TMP/list" && grep -q "fp64:" "$TMP/list" && grep -q "subgroups:" "$TMP/list"'

FAST=(-n 1 --no-startup)
# Most runs use one variant (reads up to 256 rows, longer ones in tiles):
# every variant is a kernel compilation, which dominates small runs.
ONE=(env CLPHMM_VARIANTS=32x8/64)
run1() {
  "${ONE[@]}" "$BENCH" "$@" >"$TMP/out" 2>"$TMP/err"
  RC=$?
}
# Suites at tiny scales: the smallest workload of each (at least one batch).
for suite in peak realistic long; do
  run1 --suite $suite --scale 1e-9 --device 0 "${FAST[@]}" --json "$TMP/$suite.json"
  check "--suite $suite at a small scale" eval '[ $RC -eq 0 ] && json "$TMP/$suite.json"'
done
json "$TMP/peak.json"
check "peak suite: six lengths 64..2048, exact results" \
  eval '[ "$(jcount "^runs\.[0-9]+\.device=")" -eq 6 ] && [ "$(jget runs.0.read_length)" = 64 ] && [ "$(jget runs.5.read_length)" = 2048 ] && [ "$(jget runs.5.hap_length)" = 2048 ] && awk_true "$(jget runs.3.max_abs_error) <= 1e-5"'
check "peak suite: GCUPS = cells / seconds" \
  eval 'awk_true "$(jget runs.2.kernel_seconds) > 0 && ($(jget runs.2.gcups_kernel) * $(jget runs.2.kernel_seconds) * 1e9 - $(jget runs.2.cells))^2 < ($(jget runs.2.cells) * 1e-6)^2"'
json "$TMP/realistic.json"
check "realistic suite: three HaplotypeCaller-like runs" \
  eval '[ "$(jcount "^runs\.[0-9]+\.kind=hc$")" -eq 3 ] && awk_true "$(jget runs.0.mean_read_length) > 50 && $(jget runs.0.mean_read_length) < 250 && $(jget runs.0.mean_hap_length) > 200" && awk_true "$(jget runs.0.pairs) > 20"'
json "$TMP/long.json"
check "long suite: reads of at least 1 kb" \
  eval '[ "$(jget runs.0.kind)" = long ] && awk_true "$(jget runs.0.mean_read_length) >= 1000 && $(jget runs.0.max_abs_error) <= 1e-5"'

# JSON schema details and the startup measurement.
run1 --synthetic read=100,hap=120,pairs=64 --device 0 -n 2 --json "$TMP/s.json" --commit abc123
check "--json: schema, commit, repetitions, startup times" \
  eval '[ $RC -eq 0 ] && json "$TMP/s.json" && [ "$(jget commit)" = abc123 ] && [ "$(jget runs.0.reps)" = 2 ] && awk_true "$(jget runs.0.create_cold_seconds) > 0 && $(jget runs.0.create_warm_seconds) > 0" && grep -q "^runs.0.bins.0.variant=" "$TMP/flat"'
check "--json: min <= median <= max" \
  eval 'awk_true "$(jget runs.0.kernel_seconds_min) <= $(jget runs.0.kernel_seconds) && $(jget runs.0.kernel_seconds) <= $(jget runs.0.kernel_seconds_max)"'
check "the table: context creation cold and warm" \
  eval 'grep -q "context creation" "$TMP/out"'
echo '{"runs": [1, 2,]}' >"$TMP/broken.json"
check "json_check rejects invalid JSON" eval '! json "$TMP/broken.json"'
echo '{"clphmm_version": "0", "commit": "x", "date": "d", "host": "h", "runs": [{"device": "d"}]}' >"$TMP/partial.json"
check "json_check rejects a run without the required keys" eval '! json "$TMP/partial.json"'

# Accuracy: a sample by default, every pair with --check.
run1 --synthetic mix=hc,pairs=300 --device 0 "${FAST[@]}" --sample 100 --json "$TMP/a.json"
json "$TMP/a.json"
SAMPLED=$(jget runs.0.checked_pairs) PAIRS=$(jget runs.0.pairs)
check "accuracy on a sample by default" \
  eval '[ $RC -eq 0 ] && [ "$SAMPLED" -gt 0 ] && [ "$SAMPLED" -lt "$PAIRS" ]'
run1 --synthetic mix=hc,pairs=300 --device 0 "${FAST[@]}" --check --json "$TMP/c.json"
json "$TMP/c.json"
check "--check compares every pair" \
  eval '[ $RC -eq 0 ] && [ "$(jget runs.0.checked_pairs)" = "$PAIRS" ] && awk_true "$(jget runs.0.max_abs_error) <= 1e-5 && $(jget runs.0.mean_abs_error) <= $(jget runs.0.max_abs_error)"'
run1 --synthetic mix=hc,pairs=200 --device 0 "${FAST[@]}" --precision double --check --json "$TMP/d.json"
json "$TMP/d.json"
check "double precision within 1e-7" \
  eval '[ $RC -eq 0 ] && [ "$(jget runs.0.precision)" = double ] && awk_true "$(jget runs.0.max_abs_error) <= 1e-7"'

# Workloads are reproducible from the seed.
run --synthetic mix=hc,pairs=500 --device reference -n 1 --json "$TMP/r1.json"
json "$TMP/r1.json"; C1=$(jget runs.0.cells)
run --synthetic mix=hc,pairs=500 --device reference -n 1 --json "$TMP/r2.json"
json "$TMP/r2.json"; C2=$(jget runs.0.cells)
run --synthetic mix=hc,pairs=500 --device reference -n 1 --seed 7 --json "$TMP/r3.json"
json "$TMP/r3.json"; C3=$(jget runs.0.cells)
check "same seed, same workload; another seed, another" eval '[ "$C1" = "$C2" ] && [ "$C1" != "$C3" ]'

# Input files, repeated.
# tiny.in is in the batch format: pairs = sum over "NR NH" headers.
P1=$(awk 'NF == 2 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { p += $1 * $2 } END { print p }' "$DATA/tiny.in")
run1 --input "$DATA/tiny.in" --repeat 3 --device 0 "${FAST[@]}" --check --json "$TMP/f3.json"
json "$TMP/f3.json"
check "--input with --repeat 3: three times the file's pairs, exact" \
  eval '[ $RC -eq 0 ] && [ "$P1" -gt 0 ] && [ "$(jget runs.0.pairs)" = $((P1 * 3)) ] && [ "$(jget runs.0.checked_pairs)" = $((P1 * 3)) ] && [ $(($(jget runs.0.cells) % 3)) -eq 0 ] && awk_true "$(jget runs.0.max_abs_error) <= 1e-5"'

# Several devices: one table, ratios to the first.
run1 --synthetic read=64,hap=64,pairs=128 --device 0 --device reference "${FAST[@]}" --json "$TMP/m.json"
json "$TMP/m.json"
check "two devices: one comparison table with ratios to the first" \
  eval '[ $RC -eq 0 ] && [ "$(jget runs.1.device)" = "CPU reference" ] && grep -q "^reference .*[0-9]\.[0-9][0-9]/[0-9]" "$TMP/out" && grep -q "vs first" "$TMP/out"'
run1 --synthetic read=64,hap=64,pairs=64 --device all "${FAST[@]}" --json "$TMP/all.json"
json "$TMP/all.json"
check "--device all: one run per device" \
  eval '[ $RC -eq 0 ] && [ "$(jcount "^runs\.[0-9]+\.device=")" -eq "$N_DEV" ]'
run --synthetic read=20,hap=40,pairs=64 --synthetic read=200,hap=300,pairs=16 --device 0 "${FAST[@]}" -v
check "--verbose: per-bin breakdown" \
  eval '[ $RC -eq 0 ] && [ "$(grep -c "^ *bin " "$TMP/out")" -ge 2 ]'
run --synthetic read=64,hap=64,pairs=8 --device no-such-device-name "${FAST[@]}"
check "an unknown device: exit 1 listing the devices" \
  eval '[ $RC -eq 1 ] && grep -q "no OpenCL device matches" "$TMP/err"'

# Tuning files as the library reads them.
printf 'type=cpu variants=8x8/64\ntype=gpu variants=8x8/64\nvariants=8x8/64\n' >"$TMP/t.txt"
CLPHMM_TUNING_FILE="$TMP/t.txt" "$BENCH" --list >"$TMP/out" 2>&1
check "--list: a tuning file entry wins over the built-in table" \
  eval 'grep -q "chosen from: file" "$TMP/out" && grep -q "variants:    8x8/64$" "$TMP/out"'
printf '# ok\nvariants=8x8/64 shuffle=warp\n' >"$TMP/t.txt"
CLPHMM_TUNING_FILE="$TMP/t.txt" "$BENCH" --synthetic read=64,hap=64,pairs=8 "${FAST[@]}" >"$TMP/out" 2>"$TMP/err"
RC=$?
check "a malformed tuning file: exit 1 naming file and line" \
  eval '[ $RC -eq 1 ] && grep -q "t.txt:2: shuffle must be" "$TMP/err"'

# --tune on a tiny bin set writes the file; --list then uses it.
TF="$TMP/conf/clphmm/tuning.txt"
run --tune --device 0 --tune-bins 8,16 --tune-lanes 4 --tune-wg 32 --tune-cells 2e4 -n 1 --tuning-file "$TF"
check "--tune: old and new choice per bin, file written" \
  eval '[ $RC -eq 0 ] && grep -q "^1-8 " "$TMP/out" && grep -q "^9-16 " "$TMP/out" && grep -q "new variant list: 4x[24]/[36][24],4x4/[36][24]$" "$TMP/out" && [ "$(grep -c "^name=" "$TF")" -eq 1 ]'
LIST=$(sed -n 's/^new variant list: //p' "$TMP/out")
CLPHMM_TUNING_FILE="$TF" "$BENCH" --list >"$TMP/out" 2>&1
check "--list after --tune: the tuned variants, from the file" \
  eval 'grep -q "variants:    $LIST\$" "$TMP/out" && grep -q "chosen from: file, name" "$TMP/out"'
CLPHMM_TUNING_FILE="$TF" "$BENCH" --synthetic read=12,hap=20,pairs=64 --device 0 "${FAST[@]}" --check --json "$TMP/t.json" >"$TMP/out" 2>&1
json "$TMP/t.json"
check "a run with the tuned table is exact" \
  eval '[ "$(jget runs.0.variants)" = "$LIST" ] && awk_true "$(jget runs.0.max_abs_error) <= 1e-5"'
run --tune --device 0 --tune-bins 16 --tune-lanes 4 --tune-wg 64 --tune-cells 2e4 -n 1 --tuning-file "$TF"
LIST2=$(sed -n 's/^new variant list: //p' "$TMP/out")
check "--tune again replaces the device's entry" \
  eval '[ $RC -eq 0 ] && [ "$(grep -c "^name=" "$TF")" -eq 1 ] && grep -q "variants=$LIST2\$" "$TF" && grep -q "^1-16 .*(old)\|4x4/64" "$TMP/out"'

echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" -eq 0 ]
