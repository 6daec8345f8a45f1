#!/usr/bin/env bash
# Small calls' kernels one launch at a time: N calls of one batch of 300
# pairs (read=R x hap=H, equal lengths) per haplotype length in HAPS, each
# profiled and traced (CLPHMM_TRACE), and the median run time of the float
# pass's launch (slot 0) and of the double pass's (slot 2: the speculative
# pass, or the rescue's) over the calls. Then per read length the time per
# step (the slope between the shortest and longest haplotype: a pair's
# launch takes about H + lanes steps) and what does not depend on the
# steps (the line at H = 0). Builds clphmm (Release) in $BUILD unless
# --no-build.
#
#   bench/small-kernels.sh [--no-build] [--calls N]
# Environment: BUILD (default build-bench), READS (default "100 150 200"),
# HAPS (default "64 256 512"), SPECULATE (CLPHMM_SPECULATE, default 1:
# the double pass runs beside the float pass on the side queue, as in a
# HaplotypeCaller region's call; 0: the float launch alone), and anything
# else of clphmm's (CLPHMM_VARIANTS with a `:small` variant, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
calls=200 build_it=1
while [ $# -gt 0 ]; do
  case $1 in
    --calls) calls=${2:?--calls needs a number}; shift 2 ;;
    --no-build) build_it=0; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/small-kernels.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
BUILD=${BUILD:-build-bench}
[ "$build_it" = 1 ] && bench_build "$BUILD"
bench=$BUILD/tools/clphmm-bench
trace=$(mktemp)
trap 'rm -f "$trace"' EXIT
# run_us SLOT: the median run time (us) of the traced kernel launches of
# slot SLOT, the first call (untimed warm-up) left out.
# ("-": none.)
run_us() {
  local m
  m=$(awk -v slot="$1" '/^call / { call++ }
    call > 1 && /^  dev  kernel/ && $4 == slot {
      for (i = 1; i <= NF; i++) if ($i == "run,") print $(i - 1) }' "$trace" |
    bench_median)
  echo "${m:--}"
}
echo "# small-kernels: commit=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" \
  "date=$(date -u +%Y-%m-%dT%H:%MZ) calls=$calls SPECULATE=${SPECULATE:-1}" \
  "CLPHMM_VARIANTS=${CLPHMM_VARIANTS:-} CLPHMM_DOUBLE_VARIANTS=${CLPHMM_DOUBLE_VARIANTS:-}"
printf "%-6s %-6s %14s %14s\n" read hap "float us" "double us"
for r in ${READS:-100 150 200}; do
  first= last= fd= ld= h0= h1=
  for h in ${HAPS:-64 256 512}; do
    : >"$trace"
    CLPHMM_PROFILE=1 CLPHMM_SPECULATE=${SPECULATE:-1} CLPHMM_TRACE=$trace \
      "$bench" --synthetic "read=$r,hap=$h,pairs=300" --calls "$calls" \
      >/dev/null
    f=$(run_us 0) d=$(run_us 2)
    printf "%-6s %-6s %14s %14s\n" "$r" "$h" "$f" "$d"
    [ -z "$first" ] && { first=$f; fd=$d; h0=$h; }
    last=$f ld=$d h1=$h
  done
  # Per step and at H = 0, from the shortest and longest haplotypes.
  awk -v r="$r" -v h0="$h0" -v h1="$h1" -v f0="$first" -v f1="$last" \
    -v d0="$fd" -v d1="$ld" 'function fit(a, b, name) {
      if (a == "-" || b == "-" || h1 == h0) return
      s = (b - a) / (h1 - h0)
      printf "  read %s %s: %.1f ns per step, %.1f us at H = 0\n", r, name,
        1000 * s, a - s * h0 }
    BEGIN { fit(f0, f1, "float"); fit(d0, d1, "double") }'
done
