#!/usr/bin/env bash
# Makes a self-contained folder for running bench/jni.sh on a machine without
# Java (no java, javac or jni.h) and without a package manager:
#
#   bench/jni-bundle.sh [DIR]        (default: build-jnibundle)
#
#   DIR/jre/           a Java runtime made with jlink from this machine's JDK,
#                      only the modules the harness, GKL and
#                      gatk-native-bindings need (jdeps), with include/
#                      (jni.h, jni_md.h) for building libclphmm_jni there
#   DIR/lib/java/      the harness and binding classes built here
#                      (clphmm-java-tests.jar, clphmm-gatk-classes.jar: no
#                      libclphmm_jni.so inside), gatk-native-bindings, GKL,
#                      commons-logging
#   DIR/lib/native/    GKL's JNI libraries (libgkl_pairhmm_omp.so,
#                      libgkl_pairhmm.so, libgkl_utils.so)
#   DIR/lib/fallback/  one folder per shared library that the runtime or GKL
#                      needs beyond glibc (libstdc++, libgcc_s, libz, libgomp):
#                      env.sh uses a copy only where the machine's own is
#                      missing or too old
#   DIR/env.sh, DIR/README.txt, DIR/MANIFEST.txt
#
# Needs a JDK 11 or later (javac, jar, jlink, jdeps: JAVA_HOME or the one
# whose javac is on PATH), cmake and a C compiler (the jars are built in
# build-jni/ as bench/jni.sh does); GKL from Debian's libgkl-java and
# libgkl-jni (GKL_JAR, GKL_JNI_DIR override where they are; without them the
# bundle has no GKL and jni.sh reports clphmm only). Copy DIR beside the
# checkout on the target and run bench/jni.sh --bundle DIR (bench/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out=
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench/jni-bundle.sh: unknown option $1" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "bench/jni-bundle.sh: one DIR only" >&2; exit 2; }
       out=$1; shift ;;
  esac
done
out=${out:-build-jnibundle}
die() { echo "bench/jni-bundle.sh: $*" >&2; exit 1; }

# ---- the JDK -------------------------------------------------------------------
jdk=${JAVA_HOME:-}
if [ -z "$jdk" ]; then
  javac=$(command -v javac) || die "no JDK found (install openjdk-17-jdk-headless or set JAVA_HOME)"
  jdk=$(dirname "$(dirname "$(readlink -f "$javac")")")
fi
for t in javac jar jlink jdeps java; do
  [ -x "$jdk/bin/$t" ] || die "$jdk/bin/$t missing (a full JDK is needed: javac, jar, jlink, jdeps)"
done
[ -d "$jdk/jmods" ] || die "$jdk/jmods missing: jlink needs the JDK's jmods (Debian: openjdk-17-jdk-headless)"

# ---- the jars (as bench/jni.sh builds them) -----------------------------------------
build="build-jni"
echo "building the binding and harness jars in $build/ ..."
JAVA_HOME=$jdk cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCLPHMM_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target clphmm_gatk_classes clphmm_java_tests >/dev/null
jdir=$build/bindings/java
[ -f "$jdir/classpath.txt" ] || die "the Java binding was not configured (see the cmake output in $build)"
# classpath.txt: tests jar, clphmm-gatk.jar, gatk-native-bindings (or the
# stand-in), then GKL and commons-logging when found.
IFS=: read -r -a cp_entries < "$jdir/classpath.txt"
bindings_jar=${cp_entries[2]}
gkl_jar=${GKL_JAR:-}
logging_jar=
for e in "${cp_entries[@]:3}"; do
  case $(basename "$e") in
    gkl*.jar) [ -n "$gkl_jar" ] || gkl_jar=$e ;;
    commons-logging*.jar) logging_jar=$e ;;
  esac
done
if [ -n "$gkl_jar" ] && [ -z "$logging_jar" ]; then
  logging_jar=$(ls /usr/share/java/commons-logging.jar 2>/dev/null || true)
  [ -n "$logging_jar" ] || die "GKL needs commons-logging's jar (Debian: libcommons-logging-java)"
fi

# ---- the folder ------------------------------------------------------------------
rm -rf "$out"
mkdir -p "$out/lib/java" "$out/lib/native" "$out/lib/fallback"
copy_jar() { cp "$(readlink -f "$1")" "$out/lib/java/$2"; }
copy_jar "$jdir/clphmm-java-tests.jar" clphmm-java-tests.jar
copy_jar "$jdir/clphmm-gatk-classes.jar" clphmm-gatk-classes.jar
copy_jar "$bindings_jar" gatk-native-bindings.jar
classpath="lib/java/clphmm-java-tests.jar:lib/java/clphmm-gatk-classes.jar:lib/java/gatk-native-bindings.jar"
gkl_note="no GKL (libgkl-java not found): bench/jni.sh reports clphmm only"
if [ -n "$gkl_jar" ]; then
  gkl_jni=${GKL_JNI_DIR:-}
  if [ -z "$gkl_jni" ]; then
    for d in /usr/lib/jni /usr/lib/x86_64-linux-gnu/jni /usr/lib/"$(uname -m)"-linux-gnu/jni; do
      [ -f "$d/libgkl_pairhmm_omp.so" ] && { gkl_jni=$d; break; }
    done
  fi
  if [ -n "$gkl_jni" ] && [ -f "$gkl_jni/libgkl_pairhmm_omp.so" ]; then
    copy_jar "$gkl_jar" gkl.jar
    copy_jar "$logging_jar" commons-logging.jar
    classpath="$classpath:lib/java/gkl.jar:lib/java/commons-logging.jar"
    for l in libgkl_pairhmm_omp.so libgkl_pairhmm.so libgkl_utils.so; do
      [ -f "$gkl_jni/$l" ] || die "$gkl_jni/$l missing"
      cp "$(readlink -f "$gkl_jni/$l")" "$out/lib/native/$l"
    done
    gkl_note="GKL $(basename "$(readlink -f "$gkl_jar")" .jar) from $gkl_jni"
  else
    echo "bench/jni-bundle.sh: GKL's JNI libraries (libgkl-jni) not found: bundling without GKL" >&2
  fi
fi
echo "$gkl_note"

# ---- the runtime -------------------------------------------------------------------
jars=()
IFS=: read -r -a rel <<< "$classpath"
for j in "${rel[@]}"; do jars+=("$out/$j"); done
jcp=$(IFS=:; echo "${jars[*]}")
# --ignore-missing-deps: commons-logging refers to optional log4j, avalon and
# servlet classes that are never loaded here.
modules=$("$jdk/bin/jdeps" --multi-release base --ignore-missing-deps --print-module-deps \
            -cp "$jcp" "${jars[@]}")
case ",$modules," in *,java.base,*) ;; *) modules="java.base,$modules" ;; esac
echo "jlink: modules $modules"
# Header files are kept: jni.h and jni_md.h for building libclphmm_jni there.
"$jdk/bin/jlink" --module-path "$jdk/jmods" --add-modules "$modules" \
  --strip-debug --no-man-pages --compress=2 --output "$out/jre"
if [ ! -f "$out/jre/include/jni.h" ] || [ ! -f "$out/jre/include/linux/jni_md.h" ]; then
  mkdir -p "$out/jre/include/linux"
  cp "$jdk/include/jni.h" "$out/jre/include/"
  cp "$jdk/include/linux/jni_md.h" "$out/jre/include/linux/"
fi

# ---- shared libraries beyond glibc ------------------------------------------------------
# Everything the runtime's and GKL's ELF files link to, other than glibc's own
# libraries and the bundle's, goes to lib/fallback/<soname>/.
elves=("$out/jre/bin/java" "$out/jre/lib/server/libjvm.so")
for f in "$out"/jre/lib/*.so "$out"/lib/native/*.so; do [ -f "$f" ] && elves+=("$f"); done
for f in "${elves[@]}"; do
  LD_LIBRARY_PATH="$out/jre/lib:$out/jre/lib/server" ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r soname path; do
  case $soname in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libresolv.so.*|ld-linux*|libutil.so.*) continue ;;
  esac
  case $(readlink -f "$path") in "$(readlink -f "$out")"/*) continue ;; esac
  mkdir -p "$out/lib/fallback/$soname"
  cp "$(readlink -f "$path")" "$out/lib/fallback/$soname/$soname"
done

# ---- the minimum glibc ------------------------------------------------------------------
# The highest GLIBC_ symbol version that the runtime and GKL's libraries
# need, and that of the fallback libraries (needed only where one is used).
max_glibc() {
  find "$@" -type f -exec sh -c 'for f; do objdump -T "$f" 2>/dev/null; done' _ {} + \
    | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V -u | tail -n 1
}
glibc_min=unknown glibc_fallback=unknown
if command -v objdump >/dev/null 2>&1; then
  # (objdump fails quietly on the files that are not ELF.)
  glibc_min=$(max_glibc "$out/jre" "$out/lib/native")
  glibc_fallback=$(max_glibc "$out/lib/fallback")
fi

# ---- env.sh, README.txt, MANIFEST.txt ------------------------------------------------------------
cat > "$out/env.sh" <<EOF
# Source this file (bash): the bundle's Java runtime, classpath and library paths.
#   CLPHMM_BUNDLE          this folder (absolute)
#   CLPHMM_BUNDLE_JAVA     its java
#   CLPHMM_BUNDLE_CP       the classpath (harness, binding classes,
#                          gatk-native-bindings, GKL, commons-logging)
#   CLPHMM_BUNDLE_JNI_INCLUDE  jni.h's folder, for building libclphmm_jni
#   CLPHMM_BUNDLE_LIBPATH  for -Djava.library.path: GKL's libraries
#   CLPHMM_BUNDLE_LD_PATH  for LD_LIBRARY_PATH: the lib/fallback/ folders whose
#                          library this machine lacks or has in too old a version
#   CLPHMM_BUNDLE_UNMET    libraries missing or too old with no copy here (empty
#                          when all is well; e.g. libc.so.6: glibc < $glibc_min)
# Then: LD_LIBRARY_PATH=\$CLPHMM_BUNDLE_LD_PATH \$CLPHMM_BUNDLE_JAVA -cp \$CLPHMM_BUNDLE_CP \\
#         -Dclphmm.jni.library=.../libclphmm_jni.so -Djava.library.path=\$CLPHMM_BUNDLE_LIBPATH ...
CLPHMM_BUNDLE=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
CLPHMM_BUNDLE_JAVA=\$CLPHMM_BUNDLE/jre/bin/java
CLPHMM_BUNDLE_JNI_INCLUDE=\$CLPHMM_BUNDLE/jre/include
CLPHMM_BUNDLE_LIBPATH=\$CLPHMM_BUNDLE/lib/native
CLPHMM_BUNDLE_CP=
for _j in ${classpath//:/ }; do
  CLPHMM_BUNDLE_CP=\${CLPHMM_BUNDLE_CP:+\$CLPHMM_BUNDLE_CP:}\$CLPHMM_BUNDLE/\$_j
done
# A bundled library is used only when the machine's own copy is missing or
# lacks a symbol version the runtime or GKL needs (ldd says "not found").
# Without ldd, all of them are used.
CLPHMM_BUNDLE_LD_PATH=
_missing=
if command -v ldd >/dev/null 2>&1; then
  for _f in "\$CLPHMM_BUNDLE"/jre/bin/java "\$CLPHMM_BUNDLE"/jre/lib/server/libjvm.so \\
            "\$CLPHMM_BUNDLE"/jre/lib/*.so "\$CLPHMM_BUNDLE"/lib/native/*.so; do
    [ -f "\$_f" ] || continue
    _missing="\$_missing \$(LD_LIBRARY_PATH="\$CLPHMM_BUNDLE/jre/lib:\$CLPHMM_BUNDLE/jre/lib/server" \\
      ldd "\$_f" 2>&1 | grep 'not found' | grep -o 'lib[A-Za-z0-9_+.-]*\\.so\\.[0-9]*' || true)"
  done
fi
for _d in "\$CLPHMM_BUNDLE"/lib/fallback/*/; do
  [ -d "\$_d" ] || continue
  _s=\$(basename "\$_d")
  if ! command -v ldd >/dev/null 2>&1 || case " \$_missing " in *" \$_s "*) true ;; *) false ;; esac; then
    CLPHMM_BUNDLE_LD_PATH=\${CLPHMM_BUNDLE_LD_PATH:+\$CLPHMM_BUNDLE_LD_PATH:}\${_d%/}
  fi
done
# What is still missing (no copy here: glibc itself too old, for one).
CLPHMM_BUNDLE_UNMET=
for _s in \$_missing; do
  [ -d "\$CLPHMM_BUNDLE/lib/fallback/\$_s" ] || case " \$CLPHMM_BUNDLE_UNMET " in
    *" \$_s "*) ;; *) CLPHMM_BUNDLE_UNMET="\${CLPHMM_BUNDLE_UNMET:+\$CLPHMM_BUNDLE_UNMET }\$_s" ;; esac
done
unset _j _f _d _s _missing
export CLPHMM_BUNDLE CLPHMM_BUNDLE_JAVA CLPHMM_BUNDLE_CP CLPHMM_BUNDLE_JNI_INCLUDE \\
  CLPHMM_BUNDLE_LIBPATH CLPHMM_BUNDLE_LD_PATH CLPHMM_BUNDLE_UNMET
EOF

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit-dirty"
{
  echo "clphmm JNI benchmark bundle, made by bench/jni-bundle.sh at commit $commit"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "built on: $(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-?}"), $(uname -m), $(ldd --version 2>&1 | head -n 1)"
  echo "runtime: $("$out/jre/bin/java" -version 2>&1 | head -n 2 | tail -n 1); modules: $modules"
  echo "needs: glibc >= $glibc_min (highest GLIBC_ symbol version of the runtime and GKL's libraries);"
  echo "       glibc >= $glibc_fallback where a lib/fallback/ library is used (the machine lacks it or has an older one)"
  echo "GKL: $gkl_note"
  echo "fallback libraries: $(cd "$out/lib/fallback" && ls | tr '\n' ' ')"
  echo
  echo "files (sha256):"
  (cd "$out" && find lib -type f | LC_ALL=C sort | xargs sha256sum)
} > "$out/MANIFEST.txt"

cat > "$out/README.txt" <<EOF
clphmm JNI benchmark bundle (bench/jni-bundle.sh)

Runs bench/jni.sh (org.clphmm.gatk.JniBench: the clphmm Java binding and
Intel GKL's IntelPairHmmOMP through JNI) on a Linux x86-64 machine with no
Java. Contents: jre/ (a jlink'ed Java runtime, $modules, with
jni.h in jre/include), lib/java/ (jars), lib/native/ (GKL's JNI libraries),
lib/fallback/ (libraries used only where the machine lacks them), env.sh
(source it for the paths), MANIFEST.txt (versions, checksums, the glibc
needed: $glibc_min or later; $glibc_fallback where a fallback library is used).

Copy this folder beside a clphmm checkout (default name build-jnibundle/)
and, from the checkout's root (needs cmake, a C compiler, OpenCL headers and
an ICD loader):

    bench/jni.sh --bundle build-jnibundle tests/data/10s.in --repeat 5

It builds libclphmm_jni.so there against jre/include (build-jni-bundle/) and
runs jre/bin/java with the jars, -Dclphmm.jni.library set to that library
and -Djava.library.path set to lib/native/.
EOF

echo "bundle: $out ($(du -sh "$out" | cut -f1)); needs glibc >= $glibc_min ($glibc_fallback with a fallback library)"
echo "fallback libraries: $(cd "$out/lib/fallback" && ls | tr '\n' ' ')"
