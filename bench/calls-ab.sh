#!/usr/bin/env bash
# Small calls under several settings of one build, taking turns: each
# SETTING (environment assignments separated by spaces, or "-" for none)
# runs bench/calls.sh --no-build in each of ROUNDS rounds (default 3), so
# that a drift of the machine touches every setting alike. Prints each
# run's per-call line and trace summary under its setting; the medians to
# compare are the rounds' "wall us/call" values.
#
#   BUILD=build-bench bench/calls-ab.sh [--calls N] SETTING...
#   e.g. bench/calls-ab.sh - "CLPHMM_PACK_BYTES=0 CLPHMM_EARLY_FLUSH=0"
set -euo pipefail
cd "$(dirname "$0")/.."
calls=1000
if [ "${1:-}" = --calls ]; then
  calls=${2:?--calls needs a number}
  shift 2
fi
[ $# -ge 1 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
rounds=${ROUNDS:-3}
for r in $(seq 1 "$rounds"); do
  for setting in "$@"; do
    echo "### round $r: ${setting}"
    assigns=()
    [ "$setting" = - ] || read -r -a assigns <<<"$setting"
    env ${assigns[@]+"${assigns[@]}"} bench/calls.sh --no-build --calls "$calls" |
      grep -E '^## |^1 |host-call-us|host-submit-us|host-wait-us|device-span-us|dev-kernel-us|dev-prep-us|dev-kernel-count|dev-upload-count|dev-download-count'
  done
done
