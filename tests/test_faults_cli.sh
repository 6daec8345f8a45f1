#!/usr/bin/env bash
# What the `clphmm` command says when OpenCL is missing or fails, forced
# with the OpenCL shim (tests/clshim.c):
#
#   test_faults_cli.sh CLPHMM_BINARY SHIM_LIBRARY DATA_DIR
#
# no runtime, no platform, no device: exit 1 and a hint to use --reference
# (which still works); a launch failing mid-run: the OpenCL call and error
# are named and no output file is written; a kernel variant that does not
# build: the fallback gives the reference's results.
set -u
CLI=$1
SHIM=$2
DATA=$3
PASSED=0
FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/clphmm-faults-cli.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

pass() { PASSED=$((PASSED + 1)); echo "ok   $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $1"; [ $# -gt 1 ] && echo "     $2"; }

# run RULES ARGS...: the CLI on the shim with failure RULES.
run() {
  local rules=$1
  shift
  CLPHMM_OPENCL_LIBRARY=$SHIM CPH_SHIM_FAIL=$rules \
    "$CLI" "$@" >"$TMP/out" 2>"$TMP/err"
  RC=$?
}
err() { tr '\n' '|' <"$TMP/err" | head -c 600; }

# expect_hint NAME: exit 1, nothing on stdout, stderr has the hint and $2.
expect_hint() {
  if [ "$RC" -eq 1 ] && [ ! -s "$TMP/out" ] &&
    grep -q -- "--reference" "$TMP/err" && grep -qi -- "$2" "$TMP/err"; then
    pass "$1"
  else
    fail "$1" "rc $RC, stderr: $(err)"
  fi
}

# same_numbers A B: equal within 1e-5, line by line.
same_numbers() {
  [ "$(wc -l <"$1")" -eq "$(wc -l <"$2")" ] && [ -s "$1" ] &&
    paste "$1" "$2" | awk '
      $1 == $2 { next }
      { d = $1 - $2; if (d < 0) d = -d; if (!(d <= 1e-5)) bad = 1 }
      END { exit bad }'
}

IN=$DATA/tiny.in
"$CLI" --reference "$IN" >"$TMP/ref" 2>/dev/null || fail "reference run"

run clGetPlatformIDs "$IN"
expect_hint "no OpenCL platform: hint to use --reference" "no OpenCL platform"
run clGetPlatformIDs --list-devices
expect_hint "--list-devices without a platform" "no OpenCL platform"
run clGetDeviceIDs "$IN"
expect_hint "no OpenCL device: hint to use --reference" "no device"
run clGetDeviceIDs --list-devices
expect_hint "--list-devices without a device" "no device"
CLPHMM_OPENCL_LIBRARY=$TMP/no-such-libOpenCL.so "$CLI" "$IN" \
  >"$TMP/out" 2>"$TMP/err"
RC=$?
expect_hint "no OpenCL runtime: hint to use --reference" "no OpenCL runtime"

run clGetPlatformIDs --reference "$IN"
if [ "$RC" -eq 0 ] && cmp -s "$TMP/out" "$TMP/ref"; then
  pass "--reference works without OpenCL"
else
  fail "--reference works without OpenCL" "rc $RC, stderr: $(err)"
fi

if ! "$CLI" --list-devices >/dev/null 2>&1; then
  echo "skip device checks: no OpenCL device"
  if [ -n "${CLPHMM_TEST_REQUIRE_DEVICE:-}" ]; then
    fail "an OpenCL device is required"
  fi
else
  run clEnqueueNDRangeKernel -o "$TMP/result.txt" "$IN"
  if [ "$RC" -eq 1 ] && grep -q "clEnqueueNDRangeKernel" "$TMP/err" &&
    grep -q "CL_OUT_OF_RESOURCES" "$TMP/err" && [ ! -e "$TMP/result.txt" ]; then
    pass "failed launch: call and error named, no output file"
  else
    fail "failed launch: call and error named, no output file" \
      "rc $RC, stderr: $(err)"
  fi
  run "clBuildProgram~-DCPH_G=16 " "$IN"
  if [ "$RC" -eq 0 ] && same_numbers "$TMP/out" "$TMP/ref"; then
    pass "16-lane variants fail to build: fallback results"
  else
    fail "16-lane variants fail to build: fallback results" \
      "rc $RC, stderr: $(err)"
  fi
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
