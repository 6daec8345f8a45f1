#!/usr/bin/env bash
# Determinism across OpenCL thread counts: dumps the results of both
# precisions with PoCL limited to one thread and with its default thread
# count, and requires identical bytes. Usage: test_determinism.sh PROGRAM DIR
set -u
prog=$1
dir=$2
mkdir -p "$dir"
run() { # NAME THREADS...: dump with the given thread limit ("" = default)
  local name=$1 threads=$2
  if [ -n "$threads" ]; then
    POCL_MAX_PTHREAD_COUNT=$threads POCL_CPU_MAX_CU_COUNT=$threads \
      "$prog" --dump "$dir/$name.bin"
  else
    env -u POCL_MAX_PTHREAD_COUNT -u POCL_CPU_MAX_CU_COUNT \
      "$prog" --dump "$dir/$name.bin"
  fi
}
out1=$(run one 1)
rc=$?
[ $rc -eq 77 ] && { echo "$out1"; exit 77; }
[ $rc -eq 0 ] || { echo "$out1"; echo "FAIL: dump with one thread"; exit 1; }
outn=$(run default "")
[ $? -eq 0 ] || { echo "$outn"; echo "FAIL: dump with default threads"; exit 1; }
cu1=$(echo "$out1" | sed -n 's/^compute units //p')
cun=$(echo "$outn" | sed -n 's/^compute units //p')
echo "compute units: $cu1 (limited) and $cun (default)"
[ "$cu1" = "$cun" ] && echo "note: the device ignored the thread limit"
if cmp "$dir/one.bin" "$dir/default.bin"; then
  echo "1 passed, 0 failed"
  exit 0
fi
echo "FAIL: results differ between thread counts"
echo "0 passed, 1 failed"
exit 1
