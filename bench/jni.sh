#!/usr/bin/env bash
# GATK's calls through JNI: times every region of each input, one
# computeLikelihoods call per region, through the clphmm Java binding
# (org.clphmm.gatk.ClphmmPairHmm) and through Intel GKL's IntelPairHmmOMP
# when its Debian packages are installed (libgkl-java, libgkl-jni), and
# reports regions/s, pairs/s, GCUPS and the JNI layer's own time per region.
#
#   bench/jni.sh [FILE]... [--repeat N] [--precision float|double]
#                [--threads N] [--no-gkl] [--bundle DIR]
#
# Default input: tests/data/10s.in. --threads is GATK's
# --native-pair-hmm-threads for GKL (default 4; clphmm ignores it). Builds
# in build-jni/ (Release, no tests); needs a JDK (javac, jar, jni.h). The
# device is chosen as everywhere (CLPHMM_DEVICE; -Dclphmm.device through
# JAVA_TOOL_OPTIONS). See bench/README.md.
#
# --bundle DIR: on a machine without a JDK, with a folder made by
# bench/jni-bundle.sh: builds only libclphmm_jni (in build-jni-bundle/,
# against DIR/jre/include) and runs DIR's java, jars and GKL libraries; no
# java or javac of the machine is used.
set -euo pipefail
cd "$(dirname "$0")/.."
build="build-jni"
bundle=
files=()
opts=()
while [ $# -gt 0 ]; do
  case $1 in
    --repeat|--precision|--threads) opts+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
    --no-gkl) opts+=("$1"); shift ;;
    --bundle) bundle=${2:?$1 needs a value}; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench/jni.sh: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
[ ${#files[@]} -gt 0 ] || files=(tests/data/10s.in)
if [ -n "$bundle" ]; then
  [ -f "$bundle/env.sh" ] || { echo "bench/jni.sh: $bundle/env.sh missing (make the folder with bench/jni-bundle.sh)" >&2; exit 1; }
  # shellcheck source=/dev/null
  . "$bundle/env.sh"
  if [ -n "$CLPHMM_BUNDLE_UNMET" ]; then
    echo "bench/jni.sh: the bundle's runtime or GKL needs $CLPHMM_BUNDLE_UNMET, missing or too old here and not in the bundle (see $bundle/MANIFEST.txt for the glibc needed)" >&2
  fi
  build="build-jni-bundle"
  # Only the JNI library: no Java of this machine is looked for.
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCLPHMM_BUILD_TESTS=OFF \
    -DCLPHMM_JAVA_JNI_ONLY=ON -DCLPHMM_JNI_INCLUDE_DIR="$CLPHMM_BUNDLE_JNI_INCLUDE" >/dev/null
  cmake --build "$build" -j "$(nproc)" --target clphmm_jni >/dev/null
  jni_lib=$(cd "$build/bindings/java" && pwd)/libclphmm_jni.so
  [ -f "$jni_lib" ] || { echo "bench/jni.sh: $jni_lib was not built" >&2; exit 1; }
  java=$CLPHMM_BUNDLE_JAVA
  classpath=$CLPHMM_BUNDLE_CP
  # The binding loads the library just built (the bundle's classes jar has
  # none inside); GKL loads its own through java.library.path, which names
  # the bundle's copies only. Fallback libraries only where needed.
  jvm_opts=(-Dclphmm.jni.library="$jni_lib" -Djava.library.path="$CLPHMM_BUNDLE_LIBPATH")
  if [ -n "$CLPHMM_BUNDLE_LD_PATH" ]; then
    export LD_LIBRARY_PATH=$CLPHMM_BUNDLE_LD_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
else
  if ! command -v javac >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
    echo "bench/jni.sh: no JDK found (install openjdk-17-jdk-headless or set JAVA_HOME; without one, see --bundle)" >&2
    exit 1
  fi
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCLPHMM_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" -j "$(nproc)" --target clphmm_gatk clphmm_java_tests >/dev/null
  classpath_file=$build/bindings/java/classpath.txt
  if [ ! -f "$classpath_file" ]; then
    echo "bench/jni.sh: the Java binding was not configured (see the cmake output in $build)" >&2
    exit 1
  fi
  classpath=$(cat "$classpath_file")
  java=java
  [ -n "${JAVA_HOME:-}" ] && java=$JAVA_HOME/bin/java
  jvm_opts=()
fi
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "${CLPHMM_COMMIT:-unknown}")
git diff --quiet HEAD 2>/dev/null || commit="$commit-dirty"
echo "# bench/jni.sh, commit $commit, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n)"
echo "# $("$java" -version 2>&1 | head -n 1); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
[ -z "$bundle" ] || echo "# bundle $bundle: $(head -n 1 "$bundle/MANIFEST.txt" | sed 's/.*at commit/made at commit/'); libclphmm_jni from $build/; LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
for f in "${files[@]}"; do
  echo
  "$java" ${jvm_opts[@]+"${jvm_opts[@]}"} -cp "$classpath" org.clphmm.gatk.JniBench "$f" ${opts[@]+"${opts[@]}"}
done
