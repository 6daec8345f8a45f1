#!/usr/bin/env bash
# Where a call's microseconds go: summarises a CLPHMM_TRACE file (see the
# README, "Diagnostics") over its calls, skipping the first SKIP (default 1,
# the warm-up): per call, the host phases (stage, schedule, submit, wait,
# finish, whole call), the device commands (count and summed run time per
# kind), and the device span from the first command queued to the last one
# ended. Prints the median and the 90th percentile of each over the calls.
#
#   bench/trace-summary.sh TRACE [SKIP]
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
trace=$1 skip=${2:-1}
awk -v skip="$skip" '
function flush() {
  if (call > skip) {
    for (k in v) print k, v[k]
    print "device-span-us", span
  }
  delete v; span = 0
}
/^call / { flush(); call++; next }
/^  host / { v["host-" $2 "-us"] += $(NF - 1); next }
/^  dev / {
  kind = $2; v["dev-" kind "-count"]++
  for (i = 1; i <= NF; i++) {
    if ($i == "run,") v["dev-" kind "-us"] += $(i - 1)
    if ($i == "ends") { e = $(i + 1); if (e > span) span = e }
  }
}
END { flush() }' "$trace" | sort -k1,1 -k2,2g | awk '
function report() {
  if (n) printf "%-22s median %9.1f   p90 %9.1f   (%d calls)\n", key,
    x[int((n - 1) / 2)], x[int(0.9 * (n - 1))], n
}
$1 != key { report(); key = $1; n = 0 }
{ x[n++] = $2 }
END { report() }'
