#!/usr/bin/env bash
# End-to-end tests of the `clphmm` command.
#
#   test_cli.sh CLPHMM_BINARY DATA_DIR [EXPECTED_VERSION]
#
# Prints one line per check and "N passed, M failed" at the end (plus the
# number of skipped checks, e.g. device checks when no OpenCL device exists);
# exits non-zero on any failure.
set -u

if [ $# -lt 2 ]; then
  echo "usage: $0 CLPHMM_BINARY DATA_DIR [EXPECTED_VERSION]" >&2
  exit 2
fi
CLI=$1
DATA=$2
WANT_VERSION=${3:-}

PASSED=0
FAILED=0
SKIPPED=0

TMP=$(mktemp -d "${TMPDIR:-/tmp}/clphmm-cli-test.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

pass() { PASSED=$((PASSED + 1)); echo "ok   $1"; }
fail() {
  FAILED=$((FAILED + 1))
  echo "FAIL $1"
  shift
  local line
  for line in "$@"; do echo "     $line"; done
}
skip() { SKIPPED=$((SKIPPED + 1)); echo "skip $1"; }

# run ARGS...: runs the CLI; sets RC, stdout in $TMP/out, stderr in $TMP/err.
run() {
  "$CLI" "$@" >"$TMP/out" 2>"$TMP/err"
  RC=$?
}

# Shows what the last run printed on stderr (for failure messages).
last_err() { head -c 600 "$TMP/err" | tr '\n' '|'; }

# compare_numbers GOT WANT TOL: one number per line in both files (WANT may be
# a column extracted elsewhere); "-inf" must match "-inf". Prints a reason and
# returns 1 on a mismatch.
compare_numbers() {
  local got=$1 want=$2 tol=$3 ng nw
  ng=$(wc -l <"$got")
  nw=$(wc -l <"$want")
  if [ "$ng" -ne "$nw" ] || [ "$ng" -eq 0 ]; then
    echo "line counts differ: got $ng, want $nw"
    return 1
  fi
  paste "$got" "$want" | awk -v tol="$tol" '
    function isnum(s) {
      return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/
    }
    {
      g = $1; w = $2
      if (g == "-inf" || w == "-inf") {
        if (g != w) {
          printf "line %d: got %s, want %s\n", NR, g, w
          bad = 1; exit
        }
        next
      }
      if (!isnum(g) || !isnum(w)) {
        printf "line %d: not a number: got \"%s\", want \"%s\"\n", NR, g, w
        bad = 1; exit
      }
      d = g - w; if (d < 0) d = -d
      if (d > max) { max = d; at = NR }
    }
    END {
      if (bad) exit 1
      if (max > tol) {
        printf "max abs diff %g > %g (line %d)\n", max, tol, at
        exit 1
      }
    }'
}

# check_values NAME TOL WANT_FILE ARGS...: the CLI succeeds, prints nothing
# on stderr, and its stdout matches WANT_FILE within TOL.
check_values() {
  local name=$1 tol=$2 want=$3 why
  shift 3
  run "$@"
  if [ "$RC" -ne 0 ]; then
    fail "$name" "exit status $RC" "stderr: $(last_err)"
    return
  fi
  if [ -s "$TMP/err" ]; then
    fail "$name" "unexpected stderr: $(last_err)"
    return
  fi
  if why=$(compare_numbers "$TMP/out" "$want" "$tol"); then
    pass "$name"
  else
    fail "$name" "$why"
  fi
}

# expected_column FILE OUT: the EXPECTED column of a one-pair-per-line file.
expected_column() { awk '!/^#/ && NF == 7 { print $7 }' "$1" >"$2"; }

# check_error NAME LINE_REGEX FILE ARGS...: the CLI fails with exit status
# 1, prints nothing on stdout, and stderr's first line matches
# "^clphmm: .*FILE:LINE:" (or "^clphmm: .*FILE" when LINE_REGEX is empty).
check_error() {
  local name=$1 line=$2 file=$3 pattern first
  shift 3
  run "$@"
  if [ -n "$line" ]; then
    pattern="^clphmm: .*${file}:${line}:"
  else
    pattern="^clphmm: .*${file}"
  fi
  first=$(head -n 1 "$TMP/err")
  if [ "$RC" -ne 1 ]; then
    fail "$name" "exit status $RC, want 1" "stderr: $(last_err)"
  elif [ -s "$TMP/out" ]; then
    fail "$name" "stdout not empty: $(head -c 200 "$TMP/out" | tr '\n' '|')"
  elif ! printf '%s\n' "$first" | grep -Eq -- "$pattern"; then
    fail "$name" "stderr does not match /$pattern/" "stderr: $(last_err)"
  else
    pass "$name"
  fi
}

# check_usage NAME ARGS...: exit status 2, nothing on stdout, a "clphmm: "
# message and the --help hint on stderr.
check_usage() {
  local name=$1
  shift
  run "$@"
  if [ "$RC" -ne 2 ]; then
    fail "$name" "exit status $RC, want 2" "stderr: $(last_err)"
  elif [ -s "$TMP/out" ]; then
    fail "$name" "stdout not empty"
  elif ! grep -q '^clphmm: ' "$TMP/err"; then
    fail "$name" "no 'clphmm: ' message on stderr: $(last_err)"
  elif ! grep -q "Try 'clphmm --help'" "$TMP/err"; then
    fail "$name" "no --help hint on stderr: $(last_err)"
  else
    pass "$name"
  fi
}

# same_output NAME FILE_A FILE_B ARGS...: the CLI prints byte-identical
# results for both inputs (ARGS come before the input).
same_output() {
  local name=$1 a=$2 b=$3
  shift 3
  run "$@" "$a"
  if [ "$RC" -ne 0 ]; then
    fail "$name" "reference input failed: $(last_err)"
    return
  fi
  cp "$TMP/out" "$TMP/same.a"
  run "$@" "$b"
  if [ "$RC" -ne 0 ]; then
    fail "$name" "exit status $RC" "stderr: $(last_err)"
  elif [ ! -s "$TMP/same.a" ]; then
    fail "$name" "no output"
  elif ! cmp -s "$TMP/same.a" "$TMP/out"; then
    fail "$name" "output differs from the plain file's"
  else
    pass "$name"
  fi
}

TINY=$DATA/tiny.in
TINY_D=$DATA/tiny.expected-double.txt
TINY_F=$DATA/tiny.expected-float.txt

# ---- help, version, usage errors -------------------------------------------

run --help
if [ "$RC" -ne 0 ]; then
  fail "--help exits 0" "exit status $RC"
else
  pass "--help exits 0"
  missing=
  for word in --device --precision --reference --output --raw-base-quals \
    --chunk-pairs --progress --verbose --list-devices --help --version \
    CLPHMM_DEVICE float double gpu cpu; do
    grep -q -- "$word" "$TMP/out" || missing="$missing $word"
  done
  if [ -z "$missing" ]; then
    pass "--help documents every option"
  else
    fail "--help documents every option" "missing:$missing"
  fi
fi

run --version
if [ "$RC" -ne 0 ]; then
  fail "--version" "exit status $RC"
elif [ -n "$WANT_VERSION" ]; then
  if [ "$(cat "$TMP/out")" = "clphmm $WANT_VERSION" ]; then
    pass "--version prints 'clphmm $WANT_VERSION'"
  else
    fail "--version" "got '$(cat "$TMP/out")', want 'clphmm $WANT_VERSION'"
  fi
elif grep -Eq '^clphmm [0-9]+\.[0-9]+\.[0-9]+$' "$TMP/out"; then
  pass "--version prints 'clphmm X.Y.Z'"
else
  fail "--version" "got '$(cat "$TMP/out")'"
fi

check_usage "usage: unknown long option" --no-such-option "$TINY"
check_usage "usage: unknown short option" -Z "$TINY"
check_usage "usage: no INPUT"
check_usage "usage: no INPUT after options" --reference --precision double
check_usage "usage: --precision bogus" --reference --precision bogus "$TINY"
check_usage "usage: --precision without value" "$TINY" --precision
check_usage "usage: two INPUTs" --reference "$TINY" "$TINY"

# check_usage_says NAME TEXT ARGS...: a usage error whose message has TEXT.
check_usage_says() {
  local name=$1 text=$2
  shift 2
  run "$@"
  if [ "$RC" -eq 2 ] && grep -qF -- "$text" "$TMP/err"; then
    pass "$name"
  else
    fail "$name" "exit status $RC, want 2 and '$text': $(last_err)"
  fi
}
# A value given to a long option that takes none names that option (getopt
# reports it as the option's short letter, or for long-only ones as no
# character at all), also when abbreviated; short options stay short.
check_usage_says "usage: --reference=1 names --reference" \
  "option '--reference' takes no argument" --reference=1 "$TINY"
check_usage_says "usage: --ref=1 (abbreviated) names --reference" \
  "option '--reference' takes no argument" --ref=1 "$TINY"
check_usage_says "usage: --progress=1 (long-only) names --progress" \
  "option '--progress' takes no argument" --progress=1 "$TINY"
check_usage_says "usage: --list-devices=x names --list-devices" \
  "option '--list-devices' takes no argument" --list-devices=x
check_usage_says "usage: -Z after --chunk-pairs=5 is a short option" \
  "unknown option '-Z'" --chunk-pairs=5 -rZ "$TINY"

# ---- results on the CPU reference -------------------------------------------

check_values "reference double: tiny.in vs tiny.expected-double (1e-7)" \
  1e-7 "$TINY_D" --reference --precision double "$TINY"
check_values "reference float (default): tiny.in vs tiny.expected-float" \
  1e-5 "$TINY_F" --reference "$TINY"
check_values "reference --precision float: tiny.in vs tiny.expected-float" \
  1e-5 "$TINY_F" --reference --precision float "$TINY"

# Output keeps at least 10 significant digits: double and float results of
# tiny.in differ in the 7th-9th digit, so they must print differently.
run --reference --precision double "$TINY"
cp "$TMP/out" "$TMP/ref-double.txt"
run --reference --precision float "$TINY"
cp "$TMP/out" "$TMP/ref-float.txt"
if [ -s "$TMP/ref-double.txt" ] &&
  ! cmp -s "$TMP/ref-double.txt" "$TMP/ref-float.txt" &&
  why=$(compare_numbers "$TMP/ref-double.txt" "$TINY_D" 1e-9); then
  pass "output has >= 10 significant digits (double within 1e-9)"
else
  fail "output has >= 10 significant digits (double within 1e-9)" "${why:-}"
fi

# One-pair-per-line format: compare with the EXPECTED column (printed with
# 7 significant digits, so 1e-5 as in GATK's and GKL's tests).
expected_column "$DATA/pairhmm-testdata.txt" "$TMP/gkl.expected"
check_values "reference float: pairhmm-testdata.txt vs its expected column" \
  1e-5 "$TMP/gkl.expected" --reference "$DATA/pairhmm-testdata.txt"
expected_column "$DATA/expected.Java.hmmresults.txt" "$TMP/java.expected"
check_values "reference double: expected.Java.hmmresults.txt (1e-5)" \
  1e-5 "$TMP/java.expected" --reference --precision double \
  "$DATA/expected.Java.hmmresults.txt"

# ---- --output ---------------------------------------------------------------

OUTF=$TMP/outdir/result.txt
mkdir -p "$TMP/outdir"
run --reference --output "$OUTF" "$TINY"
if [ "$RC" -ne 0 ]; then
  fail "--output FILE succeeds" "exit status $RC: $(last_err)"
elif [ -s "$TMP/out" ]; then
  fail "--output FILE: stdout stays empty"
elif ! cmp -s "$OUTF" "$TMP/ref-float.txt"; then
  fail "--output FILE has the same content as stdout"
else
  pass "--output FILE has the same content as stdout"
fi
leftovers=$(find "$TMP/outdir" -type f ! -name result.txt | wc -l)
if [ "$leftovers" -eq 0 ]; then
  pass "--output leaves no temporary file"
else
  fail "--output leaves no temporary file" "$(find "$TMP/outdir" | tr '\n' ' ')"
fi

# The short spelling -o, and --output=FILE.
rm -f "$OUTF"
run --reference --output="$OUTF" "$TINY"
if [ "$RC" -eq 0 ] && cmp -s "$OUTF" "$TMP/ref-float.txt"; then
  pass "--output=FILE"
else
  fail "--output=FILE" "exit status $RC: $(last_err)"
fi

printf '1 1\nACXT IIII IIII IIII ++++\nACGT\n' >"$TMP/bad_base_for_output.in"
rm -f "$OUTF"
run --reference --output "$OUTF" "$TMP/bad_base_for_output.in"
if [ "$RC" -eq 1 ] && [ ! -e "$OUTF" ] && [ ! -s "$TMP/out" ] &&
  [ "$(find "$TMP/outdir" -type f | wc -l)" -eq 0 ]; then
  pass "error: --output FILE not created, stdout empty, no temp file"
else
  fail "error: --output FILE not created, stdout empty, no temp file" \
    "exit status $RC; exists: $([ -e "$OUTF" ] && echo yes || echo no)" \
    "dir: $(find "$TMP/outdir" | tr '\n' ' ')"
fi

# An existing FILE is left alone when the run fails.
echo "old content" >"$OUTF"
run --reference --output "$OUTF" "$TMP/bad_base_for_output.in"
if [ "$RC" -eq 1 ] && [ "$(cat "$OUTF")" = "old content" ]; then
  pass "error: existing --output FILE is left unchanged"
else
  fail "error: existing --output FILE is left unchanged" "exit status $RC"
fi
rm -f "$OUTF"

run --reference --output "$TMP/no-such-dir/result.txt" "$TINY"
if [ "$RC" -eq 1 ] && [ ! -s "$TMP/out" ] &&
  grep -q '^clphmm: .*no-such-dir/result.txt' "$TMP/err"; then
  pass "unwritable --output reports an error (exit 1)"
else
  fail "unwritable --output reports an error (exit 1)" \
    "exit status $RC: $(last_err)"
fi

if [ -w /dev/full ]; then
  "$CLI" --reference "$TINY" >/dev/full 2>"$TMP/err"
  RC=$?
  if [ "$RC" -eq 1 ] && grep -q '^clphmm: .*write error' "$TMP/err"; then
    pass "write error on stdout (/dev/full) is reported"
  else
    fail "write error on stdout (/dev/full) is reported" \
      "exit status $RC: $(last_err)"
  fi
else
  skip "write error on stdout (no /dev/full)"
fi

# expect_stdout_error NAME: the last command (its status in RC, its stderr
# in $TMP/err) failed with a write error on standard output.
expect_stdout_error() {
  if [ "$RC" -eq 1 ] && grep -q '^clphmm: write error on standard output' \
    "$TMP/err"; then
    pass "$1"
  else
    fail "$1" "exit status $RC: $(last_err)"
  fi
}

# --help and --version name a write error too.
if [ -w /dev/full ]; then
  for opt in --help --version; do
    "$CLI" $opt >/dev/full 2>"$TMP/err"
    RC=$?
    expect_stdout_error "$opt: write error on stdout is reported"
  done
fi

# Closed standard descriptors: the results' temporary file (several chunks
# are spooled) must not take descriptor 1, nor --progress's lines reach
# --output's file through descriptor 2.
"$CLI" --reference --chunk-pairs 100 "$TINY" <&- >&- 2>"$TMP/err"
RC=$?
expect_stdout_error "closed stdout: a write error, not results lost quietly"
"$CLI" --reference --progress --output "$TMP/closed-err.txt" "$TINY" <&- 2>&-
RC=$?
if [ "$RC" -eq 0 ] && cmp -s "$TMP/closed-err.txt" "$TMP/ref-float.txt"; then
  pass "closed stderr: --output holds the results alone"
else
  fail "closed stderr: --output holds the results alone" "exit status $RC"
fi

# A failed run does not wait for more input on a pipe: the reader thread,
# blocked in a read, is left behind (10s.in fills the reader's first
# buffer, so the first chunk computes while the pipe stays open).
if mkfifo "$TMP/slow.fifo" 2>/dev/null; then
  (cat "$DATA/10s.in" && exec sleep 30) >"$TMP/slow.fifo" &
  WRITER=$!
  START=$(date +%s)
  run --device no-such-device-name --chunk-pairs 1 "$TMP/slow.fifo"
  ELAPSED=$(($(date +%s) - START))
  kill "$WRITER" 2>/dev/null
  wait "$WRITER" 2>/dev/null
  if [ "$RC" -eq 1 ] && [ "$ELAPSED" -lt 20 ] && grep -q '^clphmm: ' "$TMP/err"
  then
    pass "device error with input still on a pipe: exits at once"
  else
    fail "device error with input still on a pipe: exits at once" \
      "exit status $RC, ${ELAPSED} s: $(last_err)"
  fi
else
  skip "device error with input still on a pipe (mkfifo failed)"
fi

# ---- --output destinations ----------------------------------------------------

D=$TMP/dest
mkdir -p "$D"
# A directory is refused before anything is computed.
mkdir -p "$D/adir"
run --reference --output "$D/adir" "$TINY"
if [ "$RC" -eq 1 ] && grep -q "^clphmm: .*adir: is a directory" "$TMP/err" &&
  [ "$(find "$D" -name 'adir.tmp-*' | wc -l)" -eq 0 ]; then
  pass "--output DIRECTORY: refused, nothing left"
else
  fail "--output DIRECTORY: refused, nothing left" "exit status $RC: $(last_err)"
fi

# An existing file keeps its permissions.
echo old >"$D/m600.txt"
chmod 600 "$D/m600.txt"
run --reference --output "$D/m600.txt" "$TINY"
if [ "$RC" -eq 0 ] && [ "$(stat -c %a "$D/m600.txt")" = 600 ] &&
  cmp -s "$D/m600.txt" "$TMP/ref-float.txt"; then
  pass "--output FILE keeps the file's permissions (600)"
else
  fail "--output FILE keeps the file's permissions (600)" \
    "exit status $RC, mode $(stat -c %a "$D/m600.txt"): $(last_err)"
fi

# A symbolic link stays; the file it points to gets the results.
echo old >"$D/target.txt"
ln -s target.txt "$D/link.txt"
run --reference --output "$D/link.txt" "$TINY"
if [ "$RC" -eq 0 ] && [ -L "$D/link.txt" ] &&
  cmp -s "$D/target.txt" "$TMP/ref-float.txt"; then
  pass "--output LINK: the link stays, its target gets the results"
else
  fail "--output LINK: the link stays, its target gets the results" \
    "exit status $RC: $(last_err)"
fi

# A FIFO stays a FIFO and its reader gets the results.
if mkfifo "$D/fifo" 2>/dev/null; then
  timeout 20 cat "$D/fifo" >"$D/fifo.out" &
  reader=$!
  run --reference --output "$D/fifo" "$TINY"
  wait "$reader"
  if [ "$RC" -eq 0 ] && [ -p "$D/fifo" ] &&
    cmp -s "$D/fifo.out" "$TMP/ref-float.txt"; then
    pass "--output FIFO: stays a FIFO, its reader gets the results"
  else
    fail "--output FIFO: stays a FIFO, its reader gets the results" \
      "exit status $RC: $(last_err)"
  fi
  # In chunks: through the spool, the same bytes.
  timeout 20 cat "$D/fifo" >"$D/fifo.out" &
  reader=$!
  run --reference --chunk-pairs 3 --output "$D/fifo" "$TINY"
  wait "$reader"
  if [ "$RC" -eq 0 ] && cmp -s "$D/fifo.out" "$TMP/ref-float.txt"; then
    pass "--output FIFO in chunks (spooled): the same results"
  else
    fail "--output FIFO in chunks (spooled): the same results" \
      "exit status $RC: $(last_err)"
  fi
  # An input error is reported without waiting for the FIFO's reader.
  timeout 20 "$CLI" --reference --output "$D/fifo" \
    "$TMP/bad_base_for_output.in" >"$TMP/out" 2>"$TMP/err"
  RC=$?
  if [ "$RC" -eq 1 ] && [ -p "$D/fifo" ]; then
    pass "--output FIFO: an input error without a reader exits at once"
  else
    fail "--output FIFO: an input error without a reader exits at once" \
      "exit status $RC: $(last_err)"
  fi
else
  skip "--output FIFO (mkfifo failed)"
fi

# A dangling link: its target is created only when everything succeeded.
ln -s made.txt "$D/dangling.txt"
run --reference --output "$D/dangling.txt" "$TMP/bad_base_for_output.in"
if [ "$RC" -eq 1 ] && [ ! -e "$D/made.txt" ]; then
  run --reference --output "$D/dangling.txt" "$TINY"
  if [ "$RC" -eq 0 ] && [ -L "$D/dangling.txt" ] &&
    cmp -s "$D/made.txt" "$TMP/ref-float.txt"; then
    pass "--output dangling LINK: target created only on success"
  else
    fail "--output dangling LINK: target created only on success" \
      "exit status $RC: $(last_err)"
  fi
else
  fail "--output dangling LINK: target created only on success" \
    "a failed run: exit status $RC, target exists: $([ -e "$D/made.txt" ] &&
      echo yes || echo no)"
fi

# A chain of dangling links: the last one's target is created, the links
# stay links.
ln -s chain2.txt "$D/chain1.txt"
ln -s chain3.txt "$D/chain2.txt"
run --reference --output "$D/chain1.txt" "$TINY"
if [ "$RC" -eq 0 ] && [ -L "$D/chain1.txt" ] && [ -L "$D/chain2.txt" ] &&
  cmp -s "$D/chain3.txt" "$TMP/ref-float.txt"; then
  pass "--output chain of dangling links: the last target created"
else
  fail "--output chain of dangling links: the last target created" \
    "exit status $RC: $(last_err)"
fi

# --output /dev/stdout with stdout appended to a file: the file is
# appended to, not replaced.
if [ -e /dev/stdout ]; then
  echo header >"$D/log.txt"
  "$CLI" --reference --output /dev/stdout "$TINY" >>"$D/log.txt" 2>"$TMP/err"
  RC=$?
  { echo header; cat "$TMP/ref-float.txt"; } >"$D/log.want"
  if [ "$RC" -eq 0 ] && cmp -s "$D/log.txt" "$D/log.want"; then
    pass "--output /dev/stdout appended to a file keeps what was there"
  else
    fail "--output /dev/stdout appended to a file keeps what was there" \
      "exit status $RC: $(last_err)"
  fi
else
  skip "--output /dev/stdout (none)"
fi

# Write errors on a device reach the user; the device stays a device.
if [ -c /dev/full ] && [ -w /dev/full ]; then
  run --reference --output /dev/full "$TINY"
  if [ "$RC" -eq 1 ] && [ -c /dev/full ] &&
    grep -q '^clphmm: /dev/full: write error' "$TMP/err"; then
    pass "--output /dev/full: write error reported, still a device"
  else
    fail "--output /dev/full: write error reported, still a device" \
      "exit status $RC: $(last_err)"
  fi
else
  skip "--output /dev/full (none)"
fi

# A file the user may not write is refused up front (root may write it).
echo keep >"$D/ro.txt"
chmod 444 "$D/ro.txt"
if [ "$(id -u)" -ne 0 ]; then
  run --reference --output "$D/ro.txt" "$TINY"
  if [ "$RC" -eq 1 ] && [ "$(cat "$D/ro.txt")" = keep ] &&
    grep -q "^clphmm: .*ro.txt: Permission denied" "$TMP/err"; then
    pass "--output read-only FILE: refused, left unchanged"
  else
    fail "--output read-only FILE: refused, left unchanged" \
      "exit status $RC: $(last_err)"
  fi
else
  skip "--output read-only FILE (running as root)"
fi

# Killed while computing: the temporary file goes too. The input is a
# FIFO whose writer stops after one batch, so the run waits for more.
if mkfifo "$D/slow.in" 2>/dev/null; then
  { cat "$TINY"; exec sleep 30; } >"$D/slow.in" 2>/dev/null &
  writer=$!
  "$CLI" --reference --chunk-pairs 1 --output "$D/killed.txt" "$D/slow.in" \
    >/dev/null 2>"$TMP/err" &
  victim=$!
  for _ in $(seq 50); do
    [ "$(find "$D" -name 'killed.txt.tmp-*' | wc -l)" -gt 0 ] && break
    sleep 0.1
  done
  seen=$(find "$D" -name 'killed.txt.tmp-*' | wc -l)
  kill -TERM "$victim"
  wait "$victim"
  RC=$?
  kill "$writer" 2>/dev/null
  wait "$writer" 2>/dev/null
  left=$(find "$D" -name 'killed.txt*' | wc -l)
  if [ "$seen" -gt 0 ] && [ "$RC" -eq 143 ] && [ "$left" -eq 0 ]; then
    pass "SIGTERM while computing: no --output FILE, no temporary file"
  else
    fail "SIGTERM while computing: no --output FILE, no temporary file" \
      "temporary file seen: $seen, exit status $RC, left: $left"
  fi
  # Ignored as under nohup, SIGHUP stays ignored: the run goes on.
  { cat "$TINY"; exec sleep 2; } >"$D/slow.in" 2>/dev/null &
  writer=$!
  (
    trap '' HUP
    exec "$CLI" --reference --chunk-pairs 1 --output "$D/hup.txt" \
      "$D/slow.in" >/dev/null 2>"$TMP/err"
  ) &
  victim=$!
  sleep 0.5
  kill -HUP "$victim" 2>/dev/null
  wait "$victim"
  RC=$?
  wait "$writer" 2>/dev/null
  if [ "$RC" -eq 0 ] && cmp -s "$D/hup.txt" "$TMP/ref-float.txt"; then
    pass "SIGHUP ignored by the caller: the run completes"
  else
    fail "SIGHUP ignored by the caller: the run completes" \
      "exit status $RC: $(last_err)"
  fi
else
  skip "SIGTERM while computing (mkfifo failed)"
fi

# ---- bad inputs -------------------------------------------------------------

B=$TMP/bad
mkdir -p "$B"
READ='ACGTACGT IIIIIIII IIIIIIII IIIIIIII ++++++++'
HAP='ACGTACGTAC'
PAIR="$HAP ACGTACGT IIIIIIII IIIIIIII IIIIIIII ++++++++ -1.0e+00"
# A valid batch (lines 1-3), so that the error lies further down the file.
good_batch() { printf '1 1\n%s\n%s\n' "$READ" "$HAP"; }

{ good_batch; printf '2 1\n%s\n%s\n%s\n' "$READ" \
  'ACGTXCGT IIIIIIII IIIIIIII IIIIIIII ++++++++' "$HAP"; } >"$B/bad_base.in"
check_error "bad input: invalid base in a read (line 6)" 6 bad_base.in \
  --reference "$B/bad_base.in"

# Bytes outside printable ASCII are shown escaped; a byte-order mark is named.
{ printf '\357\273\277'; good_batch; } >"$B/bom.in"
check_error "bad input: UTF-8 byte-order mark (line 1)" 1 bom.in \
  --reference "$B/bom.in"
if grep -q 'byte-order mark (bytes \\xef\\xbb\\xbf)' "$TMP/err"; then
  pass "bad input: the byte-order mark named, its bytes escaped"
else
  fail "bad input: the byte-order mark named, its bytes escaped" "$(last_err)"
fi
# The same before a pair line.
{ printf '\357\273\277'; printf '%s\n' "$PAIR"; } >"$B/bom_pairs.in"
check_error "bad input: byte-order mark before a pair line (line 1)" 1 \
  bom_pairs.in --reference "$B/bom_pairs.in"
# A quality byte above 0x7e is shown escaped.
{ printf '1 1\n'; printf 'ACGT I\303\251I IIII IIII ++++\nACGT\n'; } \
  >"$B/utf8_qual.in"
run --reference "$B/utf8_qual.in"
if [ "$RC" -eq 1 ] && ! grep -q "$(printf '\303')" "$TMP/err"; then
  pass "bad input: no raw byte above 0x7e in the message"
else
  fail "bad input: no raw byte above 0x7e in the message" "$(last_err)"
fi

# Lines ended by CR alone read as one line: the message says so.
good_batch | tr '\n' '\r' >"$B/cr_only.in"
check_error "bad input: CR-only line endings (line 1)" 1 cr_only.in \
  --reference "$B/cr_only.in"
if grep -q "CR alone" "$TMP/err"; then
  pass "bad input: CR-only line endings are named"
else
  fail "bad input: CR-only line endings are named" "$(last_err)"
fi

# An EXPECTED value of many digits is a number.
printf '%s\n' "${PAIR% *} -1.0000000000000000000000000000000000000000000000000000000000000000001" \
  >"$B/long_expected.in"
printf '%s\n' "$PAIR" >"$B/short_expected.in"
run --reference "$B/long_expected.in"
cp "$TMP/out" "$TMP/long_expected.out"
long_rc=$RC
run --reference "$B/short_expected.in"
if [ "$long_rc" -eq 0 ] && [ "$RC" -eq 0 ] && [ -s "$TMP/out" ] &&
  cmp -s "$TMP/out" "$TMP/long_expected.out"; then
  pass "an EXPECTED value of 70 characters is read"
else
  fail "an EXPECTED value of 70 characters is read" \
    "exit status $long_rc: $(head -c 300 "$TMP/long_expected.out")"
fi

{ good_batch; printf '1 2\n%s\n%s\nACGTQ\n' "$READ" "$HAP"; } >"$B/bad_hap.in"
check_error "bad input: invalid base in a haplotype (line 7)" 7 bad_hap.in \
  --reference "$B/bad_hap.in"

printf '# comment\n%s\n%s IIIIIII IIIIIIII IIIIIIII ++++++++ -1.0e+00\n' \
  "$PAIR" "$HAP ACGTACGT" >"$B/bad_qual_len.txt"
check_error "bad input: quality length mismatch (line 3)" 3 bad_qual_len.txt \
  --reference "$B/bad_qual_len.txt"

{ good_batch; printf '1 1\nACGTACGT IIIIIIII IIIIIIII IIII ++++++++\n%s\n' \
  "$HAP"; } >"$B/bad_del_len.in"
check_error "bad input: deletion quality length mismatch (line 5)" 5 \
  bad_del_len.in --reference "$B/bad_del_len.in"

{ good_batch; printf '3 2\n%s\n%s\n' "$READ" "$READ"; } >"$B/truncated.in"
# Either the header's line (4) or where the file ends (6, or 7 for the first
# missing line) is a fair place to point at.
check_error "bad input: truncated batch (header promises more lines)" \
  '(4|6|7)' truncated.in --reference "$B/truncated.in"

{ good_batch; printf 'two 1\n%s\n%s\n' "$READ" "$HAP"; } >"$B/header_text.in"
check_error "bad input: non-numeric header (line 4)" 4 header_text.in \
  --reference "$B/header_text.in"

{ good_batch; printf -- '-1 1\n%s\n' "$HAP"; } >"$B/header_negative.in"
check_error "bad input: negative count in header (line 4)" 4 \
  header_negative.in --reference "$B/header_negative.in"

: >"$B/empty.in"
check_error "bad input: empty file" '' empty.in --reference "$B/empty.in"

{
  good_batch
  printf '\001\002\000\377\376garbage\000\n\000\000\n'
} >"$B/binary.in"
check_error "bad input: binary garbage with NUL bytes (line 4)" 4 binary.in \
  --reference "$B/binary.in"

printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000\003\000>\000' \
  >"$B/elf.in"
check_error "bad input: binary file with NUL bytes, no newline (line 1)" 1 \
  elf.in --reference "$B/elf.in"

printf '%s\n%s IIIIIIII IIIIIIII IIIIIIII -1.0e+00\n' "$PAIR" \
  "$HAP ACGTACGT" >"$B/token_count.txt"
check_error "bad input: wrong token count (line 2)" 2 token_count.txt \
  --reference "$B/token_count.txt"

{ good_batch; printf '1 1\nACGTACGT IIIIIIII IIIIIIII IIIIIIII\n%s\n' \
  "$HAP"; } >"$B/read_tokens.in"
check_error "bad input: read line with 4 tokens (line 5)" 5 read_tokens.in \
  --reference "$B/read_tokens.in"

check_error "bad input: missing file" '' no-such-file.in \
  --reference "$B/no-such-file.in"

# Bad inputs fail the same way on the device path (they are rejected while
# reading, before any OpenCL work).
check_error "bad input without --reference: invalid base (line 6)" 6 \
  bad_base.in --device no-such-device-xyz "$B/bad_base.in"

# ---- small good files: CRLF, tabs, no final newline, base quality floor ------

G=$TMP/good
mkdir -p "$G"
# Batch format: 2 reads of tiny.in's first batch against its 2 haplotypes.
{
  echo "2 2"
  sed -n '2,3p' "$TINY"
  n_reads=$(head -n 1 "$TINY" | awk '{ print $1 }')
  sed -n "$((n_reads + 2)),$((n_reads + 3))p" "$TINY"
} >"$G/small.in"
# Pairs format: a comment and 5 pairs of pairhmm-testdata.txt.
head -n 6 "$DATA/pairhmm-testdata.txt" >"$G/small.txt"

for f in small.in small.txt; do
  sed 's/$/\r/' "$G/$f" >"$G/crlf.$f"
  sed 's/ /\t/g' "$G/$f" >"$G/tab.$f"
  sed 's/ /\t  \t/g' "$G/$f" >"$G/mixed.$f"
  printf '%s' "$(cat "$G/$f")" >"$G/nonl.$f"
  same_output "CRLF variant of $f gives the same output" \
    "$G/$f" "$G/crlf.$f" --reference --precision double
  same_output "tab-separated variant of $f gives the same output" \
    "$G/$f" "$G/tab.$f" --reference --precision double
  same_output "mixed tab/space variant of $f gives the same output" \
    "$G/$f" "$G/mixed.$f" --reference --precision double
  same_output "$f without a final newline gives the same output" \
    "$G/$f" "$G/nonl.$f" --reference --precision double
done

run --reference "$G/small.in"
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$TMP/out")" -eq 4 ]; then
  pass "small.in (2 reads x 2 haplotypes) gives 4 lines"
else
  fail "small.in (2 reads x 2 haplotypes) gives 4 lines" \
    "exit status $RC, $(wc -l <"$TMP/out") lines: $(last_err)"
fi

# Base qualities below 6 are raised to 6 unless --raw-base-quals.
awk 'NR == 1 { print; next }
     NR <= 3 { q = $2; gsub(/./, "!", q); $2 = q } { print }' \
  "$G/small.in" >"$G/low.in"
awk 'NR == 1 { print; next }
     NR <= 3 { q = $2; gsub(/./, "'"'"'", q); $2 = q } { print }' \
  "$G/small.in" >"$G/six.in"
same_output "base qualities below 6 are raised to 6 by default" \
  "$G/six.in" "$G/low.in" --reference
run --reference --raw-base-quals "$G/low.in"
if [ "$RC" -eq 0 ] && [ -s "$TMP/out" ] && ! cmp -s "$TMP/out" "$TMP/same.a"
then
  pass "--raw-base-quals keeps base qualities below 6"
else
  fail "--raw-base-quals keeps base qualities below 6" \
    "exit status $RC: $(last_err)"
fi

# ---- streaming: chunks, spooling, limits ------------------------------------

# same_args_output NAME INPUT "ARGS A" "ARGS B": byte-identical stdout.
same_args_output() {
  local name=$1 input=$2 a=$3 b=$4
  # shellcheck disable=SC2086
  run $a "$input"
  cp "$TMP/out" "$TMP/args.a"
  local rc_a=$RC
  # shellcheck disable=SC2086
  run $b "$input"
  if [ "$rc_a" -ne 0 ] || [ "$RC" -ne 0 ]; then
    fail "$name" "exit status $rc_a / $RC: $(last_err)"
  elif [ ! -s "$TMP/args.a" ] || ! cmp -s "$TMP/args.a" "$TMP/out"; then
    fail "$name" "outputs differ"
  else
    pass "$name"
  fi
}

for n in 1 2 50; do
  same_args_output "--chunk-pairs $n: tiny.in output is identical" "$TINY" \
    "--reference" "--reference --chunk-pairs $n"
  same_args_output "--chunk-pairs $n: pairhmm-testdata.txt is identical" \
    "$DATA/pairhmm-testdata.txt" "--reference --precision double" \
    "--reference --precision double --chunk-pairs $n"
done
rm -f "$OUTF"
run --reference --chunk-pairs 3 --output "$OUTF" "$TINY"
if [ "$RC" -eq 0 ] && cmp -s "$OUTF" "$TMP/ref-float.txt"; then
  pass "--chunk-pairs 3 --output FILE is identical"
else
  fail "--chunk-pairs 3 --output FILE is identical" "exit status $RC"
fi
check_usage "usage: --chunk-pairs 0" --chunk-pairs 0 "$TINY"
check_usage "usage: --chunk-pairs abc" --chunk-pairs abc "$TINY"
check_usage "usage: --chunk-pairs -5" --chunk-pairs -5 "$TINY"

# An error in a later chunk: the earlier chunks' results are not printed.
S=$TMP/stream
mkdir -p "$S"
{ cat "$TINY"; printf '1 1\nACGTXCGT IIIIIIII IIIIIIII IIIIIIII ++++++++\n'
  printf 'ACGT\n'; } >"$S/late_error.in"
late_line=$(($(wc -l <"$TINY") + 2))
check_error "error in the last of many chunks: stdout stays empty" \
  "$late_line" late_error.in --reference --chunk-pairs 1 "$S/late_error.in"
rm -f "$OUTF"
run --reference --chunk-pairs 1 --output "$OUTF" "$S/late_error.in"
if [ "$RC" -eq 1 ] && [ ! -e "$OUTF" ] &&
  [ "$(find "$TMP/outdir" -type f | wc -l)" -eq 0 ]; then
  pass "error in a later chunk: --output FILE not created, no temp file"
else
  fail "error in a later chunk: --output FILE not created, no temp file" \
    "exit status $RC: $(find "$TMP/outdir" | tr '\n' ' ')"
fi

# Inputs of several chunks wait in $TMPDIR; one chunk needs no temporary file.
mkdir -p "$S/spool"
TMPDIR=$S/spool run --reference --chunk-pairs 1 "$TINY"
if [ "$RC" -eq 0 ] && cmp -s "$TMP/out" "$TMP/ref-float.txt" &&
  [ -z "$(ls -A "$S/spool")" ]; then
  pass "spooled output is identical and leaves no file in TMPDIR"
else
  fail "spooled output is identical and leaves no file in TMPDIR" \
    "exit status $RC: $(last_err); $(ls -A "$S/spool")"
fi
TMPDIR=$S/no-such-dir run --reference --chunk-pairs 1 "$TINY"
if [ "$RC" -eq 1 ] && [ ! -s "$TMP/out" ] &&
  grep -q '^clphmm: cannot create a temporary file in .*no-such-dir' \
    "$TMP/err"; then
  pass "unusable TMPDIR with several chunks: exit 1, says why"
else
  fail "unusable TMPDIR with several chunks: exit 1, says why" \
    "exit status $RC: $(last_err)"
fi
TMPDIR=$S/no-such-dir run --reference "$TINY"
if [ "$RC" -eq 0 ] && cmp -s "$TMP/out" "$TMP/ref-float.txt"; then
  pass "one chunk does not need TMPDIR"
else
  fail "one chunk does not need TMPDIR" "exit status $RC: $(last_err)"
fi

# The reader thread parses ahead while chunks compute: with one batch per
# chunk, many chunks are in flight and results must still come in order.
for i in $(seq 40); do cat "$TINY"; done >"$S/many.in"
run --reference "$S/many.in"
cp "$TMP/out" "$S/many.one-chunk.txt"
same_args_output "pipeline: 120 chunks give the output of one chunk" \
  "$S/many.in" "--reference" "--reference --chunk-pairs 1"
rm -f "$OUTF"
run --reference --chunk-pairs 1 --output "$OUTF" "$S/many.in"
if [ "$RC" -eq 0 ] && [ -s "$S/many.one-chunk.txt" ] &&
  cmp -s "$OUTF" "$S/many.one-chunk.txt"; then
  pass "pipeline: 120 chunks to --output FILE, in order"
else
  fail "pipeline: 120 chunks to --output FILE, in order" "exit status $RC"
fi
# Results are formatted on several threads in parts of 32,768
# (tools/cli/format.c): 106,240 results in one chunk (four parts) and in chunks of
# 1,000 (one part each) are byte-identical.
for i in $(seq 8); do cat "$S/many.in"; done >"$S/many8.in"
same_args_output "formatting: four parts on threads give the output of one" \
  "$S/many8.in" "--reference" "--reference --chunk-pairs 1000"

# A chunk of more results than one window of formatting (64 parts of
# 32,768): 2,250,000 pairs as one batch of 1,500 reads x 1,500 haplotypes
# (one chunk: a batch is never split) and as 1,500 batches of one read x
# the same haplotypes (chunks of one window) give the same output.
gen_window_input() { # N MODE: 1 one batch, 2 a batch per read
  awk -v n="$1" -v mode="$2" 'BEGIN {
    q = "+,-./0123456789:;<=>?@ABCDEFGHI"
    for (i = 0; i < n; i++) {
      c = substr(q, i % 30 + 1, 1); d = substr(q, (i * 7) % 30 + 1, 1)
      read[i] = "A" (i % 2 ? "C" : "G") " " c d " II II ++"
      hap[i] = (i % 3 == 0 ? "AC" : i % 3 == 1 ? "AG" : "TC")
    }
    if (mode == 1) {
      print n, n
      for (i = 0; i < n; i++) print read[i]
      for (i = 0; i < n; i++) print hap[i]
    } else {
      for (r = 0; r < n; r++) {
        print 1, n; print read[r]
        for (i = 0; i < n; i++) print hap[i]
      }
    }
  }'
}
gen_window_input 1500 1 >"$S/window1.in"
gen_window_input 1500 2 >"$S/window2.in"
run --reference "$S/window2.in"
cp "$TMP/out" "$S/window2.txt"
run --reference "$S/window1.in"
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$TMP/out")" -eq 2250000 ] &&
  cmp -s "$TMP/out" "$S/window2.txt"; then
  pass "formatting: a chunk of 2,250,000 results, window by window"
else
  fail "formatting: a chunk of 2,250,000 results, window by window" \
    "exit status $RC: $(last_err)"
fi
rm -f "$S/window1.in" "$S/window2.in" "$S/window2.txt"

# An error in a middle chunk: earlier chunks computed, later ones parsed
# ahead; the message names the line, nothing is written.
{ for i in $(seq 20); do cat "$TINY"; done
  printf '1 1\nACGTXCGT IIIIIIII IIIIIIII IIIIIIII ++++++++\nACGT\n'
  for i in $(seq 20); do cat "$TINY"; done; } >"$S/mid_error.in"
mid_line=$((20 * $(wc -l <"$TINY") + 2))
check_error "pipeline: an error in a middle chunk, later chunks parsed ahead" \
  "$mid_line" mid_error.in --reference --chunk-pairs 1 "$S/mid_error.in"

# --progress: progress lines (at most a few a second) and a summary line
# whose pair count is the output's; stderr is no terminal here.
PROGRESS_RE='^clphmm: [0-9]+ pairs, [0-9.e+]+ cells, [0-9.]+ GCUPS, [0-9.]+ s$'
SUMMARY_RE='^clphmm: done: [0-9]+ pairs, [0-9.e+]+ cells, [0-9]+ chunks in [0-9.]+ s, [0-9.]+ GCUPS'
start=$(date +%s.%N)
run --reference --chunk-pairs 1 --progress "$S/many.in"
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
n_progress=$(grep -cE "$PROGRESS_RE" "$TMP/err")
summary=$(grep -E "$SUMMARY_RE" "$TMP/err")
if [ "$RC" -eq 0 ] && cmp -s "$TMP/out" "$S/many.one-chunk.txt" &&
  [ "$n_progress" -ge 1 ] &&
  awk -v n="$n_progress" -v t="$elapsed" 'BEGIN { exit !(n <= 2 + 4 * t) }' &&
  [ "$(echo "$summary" | awk '{ print $3 }')" -eq "$(wc -l <"$TMP/out")" ] &&
  echo "$summary" | grep -q ' 120 chunks ' &&
  [ "$(tail -n 1 "$TMP/err")" = "$summary" ] &&
  [ "$(wc -l <"$TMP/err")" -eq $((n_progress + 1)) ]; then
  pass "--progress: throttled progress lines and a summary line"
else
  fail "--progress: throttled progress lines and a summary line" \
    "exit status $RC, $n_progress progress lines in $elapsed s" \
    "stderr: $(last_err)"
fi
run --reference --verbose "$TINY"
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
  grep -Eq "$SUMMARY_RE" "$TMP/err" && cmp -s "$TMP/out" "$TMP/ref-float.txt"
then
  pass "--verbose, stderr no terminal: only the summary line"
else
  fail "--verbose, stderr no terminal: only the summary line" \
    "exit status $RC: $(last_err)"
fi
run --reference --chunk-pairs 1 --progress "$S/mid_error.in"
if [ "$RC" -eq 1 ] && [ ! -s "$TMP/out" ] && ! grep -q 'done:' "$TMP/err" &&
  tail -n 1 "$TMP/err" | grep -q "^clphmm: .*mid_error.in:$mid_line:"; then
  pass "--progress: an error ends the run without a summary"
else
  fail "--progress: an error ends the run without a summary" \
    "exit status $RC: $(last_err)"
fi

# Lines longer than the limit (64 MiB) are refused with file and line.
{ good_batch; head -c 67108865 /dev/zero | tr '\0' 'A'; echo; } \
  >"$S/long_line.in"
check_error "bad input: line longer than 64 MiB (line 4)" 4 long_line.in \
  --reference "$S/long_line.in"
if grep -q 'line longer than' "$TMP/err"; then
  pass "over-long line message says so"
else
  fail "over-long line message says so" "$(last_err)"
fi
rm -f "$S/long_line.in"

# Input from a pipe (no seeking, no size known in advance).
run --reference --chunk-pairs 7 /dev/stdin <"$TINY"
if [ "$RC" -eq 0 ] && cmp -s "$TMP/out" "$TMP/ref-float.txt"; then
  pass "input from a pipe, in chunks"
else
  fail "input from a pipe, in chunks" "exit status $RC: $(last_err)"
fi

# ---- devices ----------------------------------------------------------------

check_error_mentions_reference() {
  local name=$1
  shift
  run "$@"
  if [ "$RC" -ne 1 ]; then
    fail "$name" "exit status $RC, want 1" "stderr: $(last_err)"
  elif [ -s "$TMP/out" ]; then
    fail "$name" "stdout not empty"
  elif ! grep -q '^clphmm: ' "$TMP/err" || ! grep -q -- '--reference' "$TMP/err"
  then
    fail "$name" "stderr lacks a 'clphmm: ' message mentioning --reference" \
      "stderr: $(last_err)"
  else
    pass "$name"
  fi
}

check_error_mentions_reference \
  "--device no-such-device-xyz fails and suggests --reference" \
  --device no-such-device-xyz "$TINY"
rm -f "$OUTF"
run --device no-such-device-xyz --output "$OUTF" "$TINY"
if [ "$RC" -eq 1 ] && [ ! -e "$OUTF" ]; then
  pass "device failure: --output FILE not created"
else
  fail "device failure: --output FILE not created" "exit status $RC"
fi
CLPHMM_DEVICE=no-such-device-xyz run "$TINY"
if [ "$RC" -eq 1 ] && grep -q -- '--reference' "$TMP/err"; then
  pass "CLPHMM_DEVICE=no-such-device-xyz fails and suggests --reference"
else
  fail "CLPHMM_DEVICE=no-such-device-xyz fails and suggests --reference" \
    "exit status $RC: $(last_err)"
fi
# --reference never touches OpenCL, whatever the device settings say.
CLPHMM_DEVICE=no-such-device-xyz run --reference --device nothing "$TINY"
if [ "$RC" -eq 0 ] && cmp -s "$TMP/out" "$TMP/ref-float.txt"; then
  pass "--reference ignores --device and CLPHMM_DEVICE"
else
  fail "--reference ignores --device and CLPHMM_DEVICE" \
    "exit status $RC: $(last_err)"
fi

check_usage "usage: --list-devices with an INPUT" --list-devices "$TINY"

# One line per device, e.g.
#   0: cpu "cpu-haswell-AMD EPYC", platform "Portable Computing Language",
#      16 compute units, 125.8 GiB global memory, fp64 yes
LIST_RE='^[0-9]+: (gpu|cpu|accelerator|other) ".*", platform ".*", '
LIST_RE+='[0-9]+ compute units, [0-9.]+ GiB global memory, fp64 (yes|no)$'
run --list-devices
if [ "$RC" -eq 0 ]; then
  if [ -s "$TMP/out" ] && [ ! -s "$TMP/err" ] &&
    awk -v re="$LIST_RE" '$0 !~ re { bad = 1 } END { exit bad }' \
      "$TMP/out"; then
    pass "--list-devices lists devices"
  else
    fail "--list-devices lists devices" "$(head -c 400 "$TMP/out")" \
      "stderr: $(last_err)"
  fi
  HAVE_DEVICE=1
  sed 's/^/     device: /' "$TMP/out"
else
  HAVE_DEVICE=0
  if [ "$RC" -eq 1 ] && [ ! -s "$TMP/out" ] &&
    grep -q -- '--reference' "$TMP/err"; then
    pass "--list-devices without a device: exit 1, suggests --reference"
  else
    fail "--list-devices without a device: exit 1, suggests --reference" \
      "exit status $RC: $(last_err)"
  fi
fi

if [ "$HAVE_DEVICE" -eq 1 ]; then
  CLPHMM_DEVICE=no-such-device-name "$CLI" "$TINY" >"$TMP/out" 2>"$TMP/err"
  RC=$?
  if [ "$RC" -eq 1 ] && grep -q "no-such-device-name' (from CLPHMM_DEVICE)" \
    "$TMP/err"; then
    pass "a CLPHMM_DEVICE that matches nothing is named as the variable's"
  else
    fail "a CLPHMM_DEVICE that matches nothing is named as the variable's" \
      "exit status $RC: $(last_err)"
  fi
fi

if [ "$HAVE_DEVICE" -eq 1 ]; then
  check_values "device double: tiny.in vs tiny.expected-double (1e-7)" \
    1e-7 "$TINY_D" --precision double "$TINY"
  check_values "device float (default): tiny.in vs tiny.expected-float (1e-5)" \
    1e-5 "$TINY_F" "$TINY"
  check_values "device --device 0 float: pairhmm-testdata.txt (1e-5)" \
    1e-5 "$TMP/gkl.expected" --device 0 "$DATA/pairhmm-testdata.txt"
  same_args_output "device --chunk-pairs 5: tiny.in output is identical" \
    "$TINY" "" "--chunk-pairs 5"
  # A selector with spaces around it, and a type in any case, as in lists.
  run --device " 0 " "$TINY"
  cp "$TMP/out" "$TMP/spaced.out"
  spaced_rc=$RC
  run --device 0 "$TINY"
  if [ "$spaced_rc" -eq 0 ] && [ -s "$TMP/out" ] &&
    cmp -s "$TMP/spaced.out" "$TMP/out"; then
    pass "--device ' 0 ' is device 0"
  else
    fail "--device ' 0 ' is device 0" "exit status $spaced_rc: $(last_err)"
  fi
  type0=$("$CLI" --list-devices 2>/dev/null | sed -n 's/^0: \([a-z]*\) .*/\1/p')
  if [ "$type0" = cpu ] || [ "$type0" = gpu ]; then
    mixed=$(printf '%s' "$type0" | sed 's/^./\U&/')
    run --device "$mixed" "$TINY"
    if [ "$RC" -eq 0 ] && [ -s "$TMP/out" ]; then
      pass "--device $mixed (a type in mixed case)"
    else
      fail "--device $mixed (a type in mixed case)" "exit status $RC: $(last_err)"
    fi
  else
    skip "--device Cpu/Gpu (device 0 is neither)"
  fi
  # many.in is tiny.in 40 times: its output is tiny.in's (one chunk, just
  # above) 40 times, whatever the chunking.
  for i in $(seq 40); do cat "$TMP/args.a"; done >"$TMP/dev-many.want"
  run --chunk-pairs 1 --progress "$S/many.in"
  if [ "$RC" -eq 0 ] && [ -s "$TMP/args.a" ] &&
    cmp -s "$TMP/out" "$TMP/dev-many.want" &&
    tail -n 1 "$TMP/err" | grep -Eq "$SUMMARY_RE \(kernel [0-9.]+ s, [0-9.]+ GCUPS\)$"
  then
    pass "device pipeline: 120 chunks in order; the summary has the kernel time"
  else
    fail "device pipeline: 120 chunks in order; the summary has the kernel time" \
      "exit status $RC: $(last_err)"
  fi
  # Several devices: the first device twice, in small chunks that the two
  # share (CLPHMM_CHUNK_CELLS), gives one device's output; -v lists both.
  export CLPHMM_CHUNK_CELLS=300000
  for p in float double; do
    same_args_output "--device 0,0 ($p): 10s.in output is one device's" \
      "$DATA/10s.in" "--device 0 --precision $p" \
      "--device 0,0 -v --precision $p"
  done
  if [ "$(grep -c '^clphmm: device [01] (0: .*pairs.*busy' "$TMP/err")" -eq 2 ]
  then
    pass "--device 0,0 -v: a summary line per device"
  else
    fail "--device 0,0 -v: a summary line per device" "$(last_err)"
  fi
  CLPHMM_DEVICE=0,0 same_args_output "CLPHMM_DEVICE=0,0: one device's output" \
    "$DATA/10s.in" "--device 0" ""
  # PoCL can show two CPU devices: --device all (no GPU: every device)
  # drives both. (Only where they are all the devices: with a GPU beside
  # them, as on a GPU machine, all is that GPU.)
  if POCL_DEVICES="pthread pthread" "$CLI" --list-devices 2>/dev/null |
    grep -c 'platform "Portable Computing Language"' | grep -qx 2 &&
    [ "$(POCL_DEVICES="pthread pthread" "$CLI" --list-devices 2>/dev/null |
      grep -c '^[0-9]*: ')" = 2 ]; then
    POCL_DEVICES="pthread pthread" same_args_output \
      "POCL_DEVICES='pthread pthread' --device all: one device's output" \
      "$DATA/10s.in" "--device 0" "--device all -v"
    if grep -q '^clphmm: device 1 (1: ' "$TMP/err"; then
      pass "--device all on two PoCL devices: both listed"
    else
      fail "--device all on two PoCL devices: both listed" "$(last_err)"
    fi
  else
    skip "--device all on two PoCL devices (not PoCL alone)"
  fi
  unset CLPHMM_CHUNK_CELLS
  run --device "0," "$TINY"
  if [ "$RC" -eq 1 ] && grep -q "item 2 is empty" "$TMP/err"; then
    pass "--device '0,': an error naming the empty item"
  else
    fail "--device '0,': an error naming the empty item" \
      "exit status $RC: $(last_err)"
  fi
  run --device "0,no-such-device-xyz" "$TINY"
  if [ "$RC" -eq 1 ] && grep -q "item 2, 'no-such-device-xyz'" "$TMP/err"; then
    pass "--device '0,no-such-device-xyz': an error naming the item"
  else
    fail "--device '0,no-such-device-xyz': an error naming the item" \
      "exit status $RC: $(last_err)"
  fi
  rm -f "$OUTF"
  run --precision double --output "$OUTF" "$TINY"
  cp "$TMP/out" "$TMP/dev-stdout.txt"
  if [ "$RC" -eq 0 ] && [ ! -s "$TMP/dev-stdout.txt" ] &&
    why=$(compare_numbers "$OUTF" "$TINY_D" 1e-7); then
    pass "device --output FILE"
  else
    fail "device --output FILE" "exit status $RC: $(last_err) ${why:-}"
  fi
else
  for t in "device double: tiny.in" "device float: tiny.in" \
    "device --device 0: pairhmm-testdata.txt" "device --chunk-pairs 5" \
    "device pipeline" "--device 0,0" \
    "device --output FILE"; do
    skip "$t (no OpenCL device)"
  done
fi

echo "$SKIPPED skipped"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
