# Shared by the bench scripts (sourced, not run): a script's log, building
# clphmm, naming the device measured, reading clphmm-bench's table, the
# median of a column of numbers and saving the results file.

# bench_begin: COMMIT (unless set), BENCH (clphmm-bench in $BUILD), and
# LOG and WALLS, temporary files removed when the script exits.
bench_begin() {
  COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
  BENCH=$BUILD/tools/clphmm-bench
  LOG=$(mktemp)
  WALLS=$(mktemp)
  trap 'rm -f "$LOG" "$WALLS"' EXIT
}

# bench_workload_args NAME: clphmm-bench's arguments for a named workload
# (env-ab.sh, builds-ab.sh): long-float and long-double (--suite long),
# 7e9 (reads 1.1-2 kb x haplotypes 2-3 kb), hc (20,000 HaplotypeCaller-
# like pairs), mix (such pairs of 6e10 cells; mix-double: in double
# mode), peakL (reads and haplotypes of L bases, 1e10 cells: peak64,
# peak2048), and small calls:
# region (one 300-pair region per call), regions (the 225 regions of
# 30,000 pairs in turn), 10s (tests/data/10s.in per call).
bench_workload_args() {
  case $1 in
    long-float) echo "--suite long" ;;
    long-double) echo "--suite long -p double" ;;
    7e9) echo "--synthetic mix=long,read=1100-2000,hap=2000-3000,cells=7e9" ;;
    hc) echo "--synthetic mix=hc,pairs=20000" ;;
    mix) echo "--synthetic mix=hc,cells=6e10" ;;
    mix-double) echo "--synthetic mix=hc,cells=6e10 -p double" ;;
    peak[1-9]*) echo "--synthetic read=${1#peak},hap=${1#peak},cells=1e10" ;;
    region) echo "--synthetic mix=hc,reads=30,haps=10,pairs=300 --calls 1000" ;;
    regions) echo "--synthetic mix=hc,pairs=30000 --calls 2250" ;;
    10s) echo "--input tests/data/10s.in --call-batches all --calls 1000" ;;
    *) echo "bench: unknown workload '$1'" >&2; return 1 ;;
  esac
}

# say TEXT...: TEXT to stdout and to LOG.
say() { echo "$*" | tee -a "$LOG"; }

# bench_wall: the median wall seconds (the column after the kernel's
# [min..max]) of the first device row of clphmm-bench's table on stdin.
bench_wall() {
  awk '$1 ~ /^[0-9]+$/ && NF >= 8 {
    for (i = 1; i <= NF; i++) if ($i ~ /^\[/) { print $(i + 1); exit } }'
}

# bench_build BUILD [TESTS]: configure and build clphmm (Release) in BUILD,
# with tests when TESTS is ON (default OFF); 0 on success.
bench_build() {
  timeout 600 cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Release \
    -DCLPHMM_BUILD_TESTS="${2:-OFF}" >/dev/null &&
    timeout 600 cmake --build "$1" -j "$(nproc)" >/dev/null
}

# bench_device_name BENCH TYPE: the name of the first device of TYPE (gpu,
# cpu) that `BENCH --list` shows, else of the first device.
bench_device_name() {
  "$1" --list 2>/dev/null | awk -v t="$2" '
    /^device [0-9]+:/ { name = $0; sub(/^device [0-9]+: */, "", name); if (!first) first = name }
    /^  type:/ && $2 == t"," && !found { found = name }
    END { print found ? found : first }'
}

# bench_slug NAME: NAME as a file-name part (lower case, dashes).
bench_slug() {
  echo "$1" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/-*$//' | cut -c1-40
}

# bench_median: the median of the numbers on stdin, one per line (the
# lower middle one of an even count); nothing for none.
bench_median() {
  sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# bench_save LOG STEM KIND SCRIPT: LOG to
# bench/results/STEM-<date>-KIND-$COMMIT.txt (and to $OUT when set), and say
# so on stderr as SCRIPT.
bench_save() {
  local dest
  dest=bench/results/$2-$(date -u +%Y-%m-%d)-$3-$COMMIT.txt
  cp "$1" "$dest"
  echo "$4: wrote $dest" >&2
  if [ -n "${OUT:-}" ]; then cp "$dest" "$OUT/"; fi
}
