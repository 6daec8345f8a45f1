#!/usr/bin/env bash
# End-to-end tests of `clphmm-bench` on small workloads (PoCL in CI).
#
#   test_bench.sh BENCH_BINARY JSON_CHECK_BINARY DATA_DIR [CLPHMM_BINARY]
#
# With CLPHMM_BINARY, files written by `--write` are also computed by the
# `clphmm` command and compared with clphmm-bench's own results.
#
# Prints one line per check and "N passed, M failed" at the end; exits
# non-zero on any failure. Device checks are skipped when no OpenCL device
# exists (a failure when CLPHMM_TEST_REQUIRE_DEVICE is set).
set -u

if [ $# -lt 3 ]; then
  echo "usage: $0 BENCH_BINARY JSON_CHECK_BINARY DATA_DIR [CLPHMM_BINARY]" >&2
  exit 2
fi
BENCH=$1
JCHECK=$2
DATA=$3
CLI=${4:-}

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

bad --synthetic mix=hc,hap=200-300,pairs=1 "a haplotype range needs mix=long"
bad --synthetic read=64,hap=64-80,pairs=1 "needs read=L,hap=L"
bad --synthetic read=64,hap=64,pairs=1 --write x.in --calls 3 "--write computes nothing"
bad --synthetic read=64,hap=64,pairs=1 --calls 0 "bad value for --calls"
bad --synthetic read=64,hap=64,pairs=1 --call-batches none "bad value for --call-batches"

# ---- --write: workloads as batch files (no device needed) -----------------

# strict_batch_file FILE: the strict form that gpuPairHMM's parser needs
# (header "NR NH" with one space; read lines of five single-space-separated
# tokens of equal length, bases ACGTN, qualities '!'..'~'; haplotype lines
# of bases only; no comments, blank lines or CR). Prints the reason and the
# line on failure; on success prints "PAIRS MIN_READ MAX_READ MIN_HAP
# MAX_HAP".
strict_batch_file() {
  LC_ALL=C awk '
    function bad(why) { printf "line %d: %s\n", NR, why; err = 1; exit 1 }
    BEGIN { want = "header"; minr = minh = 1e18 }
    /\r/ { bad("CR") }
    want == "header" {
      if ($0 !~ /^[1-9][0-9]* [1-9][0-9]*$/) bad("bad header: " $0)
      nr = $1; nh = $2; pairs += nr * nh; want = "read"; next
    }
    want == "read" {
      n = split($0, t, " ")
      if (n != 5 || $0 ~ /  / || $0 ~ /^ | $/) bad("read line without five single-spaced tokens")
      if (t[1] !~ /^[ACGTN]+$/) bad("read bases")
      for (k = 2; k <= 5; k++)
        if (length(t[k]) != length(t[1]) || t[k] !~ /^[!-~]+$/) bad("qualities")
      l = length(t[1]); if (l < minr) minr = l; if (l > maxr) maxr = l
      if (--nr == 0) want = "hap"; next
    }
    want == "hap" {
      if ($0 !~ /^[ACGTN]+$/) bad("haplotype line")
      l = length($0); if (l < minh) minh = l; if (l > maxh) maxh = l
      if (--nh == 0) want = "header"; next
    }
    END {
      if (err) exit 1
      if (want != "header") { print "truncated record"; exit 1 }
      print pairs, minr, maxr, minh, maxh
    }' "$1"
}

W=$TMP/write
mkdir -p "$W"
run --synthetic mix=hc,pairs=400 --write "$W/hc.in"
FORMAT=$(strict_batch_file "$W/hc.in")
check "--write mix=hc: the strict batch format gpuPairHMM parses" \
  eval '[ $RC -eq 0 ] && [ ! -s "$TMP/out" ] && [ "${FORMAT%% *}" -ge 400 ]'
run --synthetic mix=hc,pairs=400 --write -
check "--write is deterministic ('-': stdout)" \
  eval '[ $RC -eq 0 ] && cmp -s "$TMP/out" "$W/hc.in"'
run --synthetic mix=hc,pairs=400 --seed 9 --write "$W/hc9.in"
check "--write: another seed, another file" \
  eval '[ $RC -eq 0 ] && ! cmp -s "$W/hc9.in" "$W/hc.in"'
run --input "$W/hc.in" --raw-base-quals --write "$W/hc2.in"
check "--write: the file read back and written again is byte-identical" \
  eval '[ $RC -eq 0 ] && cmp -s "$W/hc.in" "$W/hc2.in"'
run --input "$W/hc.in" --write "$W/hc6.in"
check "--input without --raw-base-quals raises base qualities below 6" \
  eval '[ $RC -eq 0 ] && ! cmp -s "$W/hc.in" "$W/hc6.in" && strict_batch_file "$W/hc6.in" >/dev/null'
run --suite realistic --scale 1e-9 --write "$W/suite.in"
SUITE_PAIRS=$(strict_batch_file "$W/suite.in" | cut -d" " -f1)
"$BENCH" --suite realistic --scale 1e-9 --device reference -n 1 --no-startup \
  --json "$TMP/suite.json" >/dev/null 2>&1
json "$TMP/suite.json"
check "--write --suite: every workload of the suite, one after the other" \
  eval '[ -n "$SUITE_PAIRS" ] && [ "$SUITE_PAIRS" -eq $(($(jget runs.0.pairs) + $(jget runs.1.pairs) + $(jget runs.2.pairs))) ]'
run --synthetic mix=long,read=1100-2000,hap=2000-3000,cells=2e7 --write "$W/long.in"
read -r LP LMINR LMAXR LMINH LMAXH <<<"$(strict_batch_file "$W/long.in")"
# The second haplotype of a region is a variant of the first (small indels).
check "--write mix=long with read and haplotype ranges" \
  eval '[ $RC -eq 0 ] && [ "${LP:-0}" -ge 2 ] && [ "$LMINR" -ge 1100 ] && [ "$LMAXR" -le 2000 ] && [ "$LMINH" -ge 1950 ] && [ "$LMAXH" -le 3050 ]'
run --synthetic read=64,hap=64,pairs=8 --write "$TMP/no-such-dir/x.in"
check "--write to an impossible path: exit 1 naming it" \
  eval '[ $RC -eq 1 ] && grep -q "no-such-dir/x.in: cannot create" "$TMP/err"'

# The file computed by clphmm gives clphmm-bench's results for the same
# synthetic workload, bit for bit (CPU reference on both sides).
if [ -n "$CLI" ]; then
  run --synthetic mix=hc,pairs=400 --device reference -n 1 --results "$W/hc.bench.txt"
  "$CLI" --reference --raw-base-quals "$W/hc.in" >"$W/hc.cli.txt" 2>"$TMP/err"
  check "round trip: clphmm on the written file = clphmm-bench --results" \
    eval '[ -s "$W/hc.bench.txt" ] && cmp -s "$W/hc.bench.txt" "$W/hc.cli.txt"'
  "$CLI" --reference "$W/hc.in" >"$W/hc.cli6.txt" 2>"$TMP/err"
  check "round trip: without --raw-base-quals clphmm computes other qualities" \
    eval '! cmp -s "$W/hc.bench.txt" "$W/hc.cli6.txt"'
else
  skip "round trip through clphmm (no CLPHMM_BINARY given)"
fi

# ---- Per-call mode on the CPU reference (no device needed) -----------------

# 16 batches of 4 reads x 4 haplotypes.
SMALL=(--synthetic read=30,hap=40,reads=4,haps=4,pairs=256 --device reference --no-startup)
run "${SMALL[@]}" --calls 10 --json "$TMP/pc1.json"
json "$TMP/pc1.json"
check "--calls: one batch per call by default" \
  eval '[ $RC -eq 0 ] && [ "$(jget runs.0.mode)" = per-call ] && [ "$(jget runs.0.calls)" = 10 ] && [ "$(jget runs.0.call_batches)" = 1 ] && awk_true "$(jget runs.0.call_pairs_mean) == 16" && [ "$(jget runs.0.pairs)" = 256 ]'
check "--calls: min <= median <= max per call, in microseconds" \
  eval 'awk_true "$(jget runs.0.call_wall_us_min) <= $(jget runs.0.call_wall_us) && $(jget runs.0.call_wall_us) <= $(jget runs.0.call_wall_us_max) && ($(jget runs.0.call_wall_us) - $(jget runs.0.wall_seconds) * 1e6)^2 < 1e-6"'
check "--calls: the table reports microseconds per call" \
  eval 'grep -q "wall us/call" "$TMP/out" && grep -q "^reference .* 10 *16.0 " "$TMP/out"'
run "${SMALL[@]}" --calls 5 --call-batches 3 --json "$TMP/pc3.json"
json "$TMP/pc3.json"
check "--call-batches 3: three batches per call" \
  eval '[ $RC -eq 0 ] && [ "$(jget runs.0.call_batches)" = 3 ] && awk_true "$(jget runs.0.call_pairs_mean) == 48"'
run "${SMALL[@]}" --calls 4 --call-batches all --json "$TMP/pca.json"
json "$TMP/pca.json"
check "--call-batches all: the whole workload per call" \
  eval '[ $RC -eq 0 ] && awk_true "$(jget runs.0.call_pairs_mean) == 256"'
run "${SMALL[@]}" -n 2 --json "$TMP/whole.json"
json "$TMP/whole.json"
check "without --calls: whole-workload runs, per-call fields null" \
  eval '[ $RC -eq 0 ] && [ "$(jget runs.0.mode)" = whole ] && [ "$(jget runs.0.call_wall_us)" = null ]'

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

# Stages of the median run: -v prints them, the JSON holds them.
run1 --synthetic mix=hc,pairs=300 --device 0 "${FAST[@]}" -n 3 -v --json "$TMP/st.json"
json "$TMP/st.json"
STAGE_RE='stages \(median run, ms\): prepare [0-9.]+ upload [0-9.]+ kernel [0-9.]+ \(rows [0-9.]+\) download [0-9.]+ rescue [0-9.]+ finish [0-9.]+ wall [0-9.]+ chunks [0-9]+ early-exits [0-9]+ cpu-pairs [0-9]+ exact-pairs [0-9]+ underflow-stops [0-9]+ split-pairs [0-9]+ exact-direct [0-9]+ double-first [0-9]+ \(checked [0-9]+\)$'
check "-v: the stages of the median run" \
  eval '[ $RC -eq 0 ] && grep -Eq "$STAGE_RE" "$TMP/out"'
check "--json: stages within the measured wall time" \
  eval 'awk_true "$(jget runs.0.stages.kernel_seconds) > 0 && $(jget runs.0.stages.wall_seconds) <= $(jget runs.0.wall_seconds_max) && $(jget runs.0.stages.kernel_seconds) <= $(jget runs.0.wall_seconds_max) && $(jget runs.0.stages.prepare_seconds) >= 0 && $(jget runs.0.stages.chunks) >= 0"'
check "--json: split pairs counted (none on a CPU device)" \
  eval '[ "$(jget runs.0.split_pairs)" = 0 ]'
check "--json: pairs sent straight to the exact pass counted (none: no early exits)" \
  eval '[ "$(jget runs.0.exact_direct)" = 0 ]'
check "--json: double-first pairs counted (none: no reads of 1 kb)" \
  eval '[ "$(jget runs.0.double_first)" = 0 ] && [ "$(jget runs.0.double_first_checked)" = 0 ]'

# Per-call mode on the device: the results of many small calls are those
# of one call of the whole workload.
run1 --synthetic read=50,hap=70,reads=4,haps=4,pairs=160 --device 0 "${FAST[@]}" --results "$TMP/whole.txt"
run1 --synthetic read=50,hap=70,reads=4,haps=4,pairs=160 --device 0 --no-startup --calls 25 --check --results "$TMP/calls.txt" -v --json "$TMP/pcd.json"
json "$TMP/pcd.json"
check "--calls on the device: same results as one call, exact, stages of the median call" \
  eval '[ $RC -eq 0 ] && [ "$(wc -l <"$TMP/calls.txt")" -eq 160 ] && cmp -s "$TMP/whole.txt" "$TMP/calls.txt" && awk_true "$(jget runs.0.max_abs_error) <= 1e-5 && $(jget runs.0.call_kernel_us) > 0" && grep -q "stages (median call, ms)" "$TMP/out"'

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
run1 --synthetic read=64,hap=64,pairs=64 --device each "${FAST[@]}" --json "$TMP/each.json"
json "$TMP/each.json"
check "--device each: one run per device" \
  eval '[ $RC -eq 0 ] && [ "$(jcount "^runs\.[0-9]+\.device=")" -eq "$N_DEV" ]'
run1 --synthetic read=64,hap=64,pairs=64 --device all "${FAST[@]}" --json "$TMP/all.json"
json "$TMP/all.json"
check "--device all: one run, one context" \
  eval '[ $RC -eq 0 ] && [ "$(jcount "^runs\.[0-9]+\.device=")" -eq 1 ]'
# A context of the first device twice, in small chunks that the two share:
# -v prints a line per device, the JSON lists them, their pairs add up.
CLPHMM_CHUNK_CELLS=100000 run1 --synthetic mix=hc,pairs=400 --device 0,0 "${FAST[@]}" --check -v --json "$TMP/two.json"
json "$TMP/two.json"
check "--device 0,0: per-device lines and JSON entries that add up" \
  eval '[ $RC -eq 0 ] && [ "$(grep -Ec "^ +device [01] \(0 .*\): pairs [0-9]+ cells .* busy [0-9.]+ ms" "$TMP/out")" -eq 2 ] && [ "$(jget runs.0.devices.0.pairs)" -ge 0 ] && [ $(($(jget runs.0.devices.0.pairs) + $(jget runs.0.devices.1.pairs))) -eq "$(jget runs.0.pairs)" ] && grep -q "^0 2 x " "$TMP/out" && awk_true "$(jget runs.0.max_abs_error) <= 1e-5"'
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
  eval '[ $RC -eq 0 ] && grep -q "^1-8 " "$TMP/out" && grep -q "^9-16 " "$TMP/out" && grep -Eq "new variant list: (4x[24]/[36][24]|v[0-9]+x[0-9]+/1),(4x4/[36][24]|v[0-9]+x[0-9]+/1)$" "$TMP/out" && [ "$(grep -c "^name=" "$TF")" -eq 1 ]'
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
