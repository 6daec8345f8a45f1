#!/usr/bin/env bash
# GATK's calls through JNI: times every region of each input, one
# computeLikelihoods call per region, through the clphmm Java binding
# (org.clphmm.gatk.ClphmmPairHmm) and through Intel GKL's IntelPairHmmOMP
# when its Debian packages are installed (libgkl-java, libgkl-jni), and
# reports regions/s, pairs/s, GCUPS and the JNI layer's own time per region.
#
#   bench/jni.sh [FILE]... [--repeat N] [--precision float|double]
#                [--threads N] [--no-gkl]
#
# Default input: tests/data/10s.in. --threads is GATK's
# --native-pair-hmm-threads for GKL (default 4; clphmm ignores it). Builds
# in build-jni/ (Release, no tests); needs a JDK (javac, jar, jni.h). The
# device is chosen as everywhere (CLPHMM_DEVICE; -Dclphmm.device through
# JAVA_TOOL_OPTIONS). See bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-jni
files=()
opts=()
while [ $# -gt 0 ]; do
  case $1 in
    --repeat|--precision|--threads) opts+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    --no-gkl) opts+=("$1"); shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench/jni.sh: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
[ ${#files[@]} -gt 0 ] || files=(tests/data/10s.in)
if ! command -v javac >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  echo "bench/jni.sh: no JDK found (install openjdk-17-jdk-headless or set JAVA_HOME)" >&2
  exit 1
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCLPHMM_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target clphmm_gatk clphmm_java_tests >/dev/null
classpath_file=$build/bindings/java/classpath.txt
if [ ! -f "$classpath_file" ]; then
  echo "bench/jni.sh: the Java binding was not configured (see the cmake output in $build)" >&2
  exit 1
fi
java=java
[ -n "${JAVA_HOME:-}" ] && java=$JAVA_HOME/bin/java
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "${CLPHMM_COMMIT:-unknown}")
git diff --quiet HEAD 2>/dev/null || commit="$commit-dirty"
echo "# bench/jni.sh, commit $commit, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n)"
echo "# $("$java" -version 2>&1 | head -n 1); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
for f in "${files[@]}"; do
  echo
  "$java" -cp "$(cat "$classpath_file")" org.clphmm.gatk.JniBench "$f" ${opts[@]+"${opts[@]}"}
done
