#!/usr/bin/env bash
# Writes a large synthetic input in the batch format, for measuring memory
# and throughput of the streaming `clphmm` command on inputs of any size:
#
#   bench/gen_input.sh SIZE_MB [READ_LEN [HAP_LEN]] > FILE
#
# Batches of 1-8 reads x 1-4 haplotypes, read lengths READ_LEN/2..READ_LEN
# (default 16), haplotype lengths HAP_LEN/2..HAP_LEN (default 32): short
# sequences keep the cell count (compute time) low per byte. A block of about
# 1 MB of random batches (fixed seed) is repeated until SIZE_MB megabytes
# are written, so generation is fast; line numbers keep counting, so errors
# would still point at the right place.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  echo "usage: $0 SIZE_MB [READ_LEN [HAP_LEN]] > FILE" >&2
  exit 2
fi
size_mb=$1 read_len=${2:-16} hap_len=${3:-32}
block=$(mktemp "${TMPDIR:-/tmp}/clphmm-gen.XXXXXX")
trap 'rm -f "$block"' EXIT
awk -v rl="$read_len" -v hl="$hap_len" 'BEGIN {
  srand(42); b = "ACGT"; bytes = 0
  while (bytes < 1000000) {
    nr = 1 + int(rand() * 8); nh = 1 + int(rand() * 4)
    out = nr " " nh "\n"
    for (r = 0; r < nr; r++) {
      n = int(rl / 2) + int(rand() * (rl - int(rl / 2) + 1)); if (n < 1) n = 1
      s = ""; q = ""; i = ""; d = ""; g = ""
      for (k = 0; k < n; k++) {
        s = s substr(b, 1 + int(rand() * 4), 1)
        q = q sprintf("%c", 43 + int(rand() * 30))
        i = i "I"; d = d "I"; g = g "+"
      }
      out = out s " " q " " i " " d " " g "\n"
    }
    for (h = 0; h < nh; h++) {
      n = int(hl / 2) + int(rand() * (hl - int(hl / 2) + 1)); if (n < 1) n = 1
      s = ""
      for (k = 0; k < n; k++) s = s substr(b, 1 + int(rand() * 4), 1)
      out = out s "\n"
    }
    printf "%s", out; bytes += length(out)
  }
}' >"$block"
block_bytes=$(wc -c <"$block")
reps=$(( (size_mb * 1000000 + block_bytes - 1) / block_bytes ))
for ((i = 0; i < reps; i++)); do cat "$block"; done
