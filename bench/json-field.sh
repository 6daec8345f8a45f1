# Sourced by the bench scripts. json_field FILE NAME: a scalar of the
# (one-line) run in a one-run `clphmm-bench --json` FILE.
json_field() {
  grep '"device":' "$1" | sed 's/, "bins".*//' |
    sed -n "s/.*\"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\}[,}].*/\1/p" | head -n 1
}
