#!/usr/bin/env bash
# Regenerates bench/results/tcups-vs-length.png from the stored results:
# kernel TCUPS against read length (read = haplotype length, the peak
# suite) per device and file, from every results/*.json that has
# equal-length runs (clphmm-bench writes one run per line) and from the
# older peak.sh tables (results/*-peak.txt). Needs gnuplot (Debian:
# gnuplot-nox).
#
#   bench/plot.sh [OUTPUT.png]
set -euo pipefail
cd "$(dirname "$0")"
OUT=${1:-results/tcups-vs-length.png}
command -v gnuplot >/dev/null || {
  echo "bench/plot.sh: gnuplot is not installed (apt-get install gnuplot-nox)" >&2
  exit 1
}
DATA=$(mktemp -d "${TMPDIR:-/tmp}/clphmm-plot.XXXXXX")
trap '[ -n "${KEEP_PLOT_DATA:-}" ] || rm -rf "$DATA"' EXIT

# field NAME LINE: a JSON scalar of a one-line run object.
series=()
for f in results/*.json; do
  [ -e "$f" ] || continue
  base=$(basename "$f" .json)
  # One series per (file, device, precision): "L TCUPS" sorted by L.
  awk -v dir="$DATA" -v base="$base" '
    function field(name,   m, s) {
      if (match($0, "\"" name "\": (\"[^\"]*\"|[-0-9.eE+]+|null)")) {
        s = substr($0, RSTART, RLENGTH); sub(/^"[^"]*": /, "", s)
        gsub(/"/, "", s); return s
      }
      return ""
    }
    /"kind": "equal"/ && /"ok": true/ {
      L = field("read_length"); g = field("gcups_kernel")
      if (L == "" || g == "" || g == "null" || field("hap_length") != L) next
      key = field("device") " " field("precision")
      if (!(key in id)) { id[key] = ++n; print base ": " key > (dir "/" base "." n ".title") }
      print L, g / 1000 > (dir "/" base "." id[key] ".dat")
    }' "$f"
done
for f in results/*-peak.txt; do
  [ -e "$f" ] || continue
  base=$(basename "$f" .txt)
  # peak.sh tables: "L TCUPS ..." rows until the first blank line.
  awk '/^L +TCUPS/ { t = 1; next } t && /^$/ { exit }
       t && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ { print $1, $2 }' "$f" \
    >"$DATA/$base.1.dat"
  dev=$(sed -n 's/^# device: \([^(,]*\).*/\1/p' "$f" | head -n 1)
  echo "$base: ${dev:-peak.sh} float" >"$DATA/$base.1.title"
done
for d in "$DATA"/*.dat; do
  [ -e "$d" ] && [ -s "$d" ] || continue
  sort -n -o "$d" "$d"
  series+=("$d")
done
if [ ${#series[@]} -eq 0 ]; then
  echo "bench/plot.sh: no peak-suite results in bench/results" >&2
  exit 1
fi
{
  echo "set terminal pngcairo size 1000,700 noenhanced font 'sans,10'"
  echo "set output '$OUT'"
  echo "set title 'clphmm kernel throughput, read length = haplotype length'"
  echo "set xlabel 'read length'; set ylabel 'TCUPS (kernel)'"
  # Log y: CPUs run at GCUPS, GPUs at TCUPS.
  echo "set logscale x 2; set logscale y 10; set format y '%g'; set grid"
  echo "set key outside below box font ',9'"
  printf "plot "
  sep=""
  for d in "${series[@]}"; do
    title=$(sed "s/'/ /g" "${d%.dat}.title")
    printf "%s'%s' using 1:2 with linespoints lw 2 title '%s'" "$sep" "$d" "$title"
    sep=", \\
  "
  done
  echo
} >"$DATA/plot.gp"
gnuplot "$DATA/plot.gp"
echo "bench/plot.sh: wrote bench/$OUT (${#series[@]} series)"
