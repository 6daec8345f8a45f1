#!/usr/bin/env bash
# Split pairs (cl/pairhmm.cl, SPLIT_Q) on a GPU in one call: bench/env-ab.sh
# with CLPHMM_SPLIT = each of PARTS ("default": unset, 1: never split) as
# its settings: --suite long in float and double and the 7e9-cell long-read
# file taking turns for ROUNDS rounds, the long suite at 1e9 cells checked
# against the CPU reference per setting, and a summary of wall-time
# medians; the text file goes to
# bench/results/<device>-<date>-split-<commit>.txt (and to $OUT).
#
#   bench/split.sh [--device SPEC]
#
# Environment: PARTS (default "1 default 8"), and env-ab.sh's (BUILD,
# ROUNDS, REPS, WORKLOADS, TIMELINE, STEP_TIMEOUT, COMMIT).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
settings=()
for p in ${PARTS:-1 default 8}; do
  if [ "$p" = default ]; then settings+=(default); else settings+=("CLPHMM_SPLIT=$p"); fi
done
KIND=split exec bench/env-ab.sh "$@" "${settings[@]}"
