#!/usr/bin/env bash
# Packaging test: install a built clphmm into a scratch prefix and use it the
# way a user would.
#
#   check_install.sh BUILD_DIR SOURCE_DIR C_COMPILER WORK_DIR [OPTION]...
#
#   BUILD_DIR   a configured and built clphmm build tree
#   SOURCE_DIR  the clphmm source tree (the consumer project is in
#               SOURCE_DIR/tests/install/consumer)
#   C_COMPILER  the compiler that built clphmm, used for the consumers
#   WORK_DIR    scratch directory, emptied first (the prefix and the
#               consumer builds go there)
# Options:
#   --cmake=PATH      the cmake to run (default: cmake on PATH)
#   --generator=GEN   CMake generator for the consumer project
#   --config=CFG      configuration to install and build (multi-config)
#   --cflags=FLAGS    extra compile and link flags for the consumers (e.g.
#                     -fsanitize=address,undefined when clphmm was built so)
#
# Steps: `cmake --install BUILD_DIR --prefix WORK_DIR/prefix`; check the
# installed files; run the installed `clphmm` command; configure, build and
# run the consumer project through find_package(clphmm) (shared and static
# targets); build and run the same main.c through pkg-config (shared and
# static). Prints one line per check and "N passed, M failed" at the end;
# exits non-zero on any failure.
set -u

if [ $# -lt 4 ]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR C_COMPILER WORK_DIR [OPTION]..." >&2
  exit 2
fi
BUILD_DIR=$1
SOURCE_DIR=$2
CC_BIN=$3
WORK=$4
shift 4
CMAKE=cmake
GENERATOR=
CONFIG=
EXTRA_FLAGS=
for arg in "$@"; do
  case $arg in
    --cmake=*) CMAKE=${arg#*=} ;;
    --generator=*) GENERATOR=${arg#*=} ;;
    --config=*) CONFIG=${arg#*=} ;;
    --cflags=*) EXTRA_FLAGS=${arg#*=} ;;
    *) echo "$0: unknown option '$arg'" >&2; exit 2 ;;
  esac
done
# Word-split the extra flags on purpose (they are compiler flags).
read -r -a EXTRA <<<"$EXTRA_FLAGS"

case $WORK in
  "" | / | /tmp | /tmp/ | "$HOME" | "$HOME/")
    echo "$0: refusing to use '$WORK' as the scratch directory" >&2
    exit 2 ;;
esac

PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "ok   $1"; }
fail() {
  FAILED=$((FAILED + 1))
  echo "FAIL $1"
  shift
  local line
  for line in "$@"; do echo "     $line"; done
}
# Show the last lines of a log file under a failure.
show_log() {
  [ -f "$1" ] || return 0
  tail -n 30 "$1" | sed 's/^/     | /'
}

finish() {
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
  exit $?
}

rm -rf "$WORK"
mkdir -p "$WORK" || { fail "create $WORK"; finish; }
WORK=$(cd "$WORK" && pwd)
PREFIX=$WORK/prefix
LOG=$WORK/logs
mkdir -p "$LOG"

CONFIG_ARGS=()
[ -n "$CONFIG" ] && CONFIG_ARGS=(--config "$CONFIG")

# ---- install ----------------------------------------------------------------
if "$CMAKE" --install "$BUILD_DIR" --prefix "$PREFIX" "${CONFIG_ARGS[@]}" \
  >"$LOG/install.log" 2>&1; then
  pass "cmake --install into $PREFIX"
else
  fail "cmake --install $BUILD_DIR --prefix $PREFIX failed"
  show_log "$LOG/install.log"
  finish
fi

# ---- installed files ----------------------------------------------------------
# The library directory is lib, lib64 or lib/<multiarch>, as GNUInstallDirs
# chose it: find it through the installed static library.
LIBDIR=
for cand in "$PREFIX"/lib*/libclphmm.a "$PREFIX"/lib/*/libclphmm.a; do
  if [ -f "$cand" ]; then LIBDIR=$(dirname "$cand"); break; fi
done
check_file() { # check_file PATH DESCRIPTION
  if [ -f "$1" ]; then pass "installed: $2"; else fail "not installed: $2 ($1)"; fi
}
check_file "$PREFIX/include/clphmm.h" "include/clphmm.h"
if [ -z "$LIBDIR" ]; then
  fail "not installed: libclphmm.a (no lib*/libclphmm.a under $PREFIX)"
  echo "     installed files:"
  (cd "$PREFIX" && find . -type f | sort | sed 's/^/     | /')
  finish
fi
LIBREL=${LIBDIR#"$PREFIX"/}
check_file "$LIBDIR/libclphmm.a" "$LIBREL/libclphmm.a"
# The shared library: the development link, the soname link, the real file.
if [ -L "$LIBDIR/libclphmm.so" ] || [ -f "$LIBDIR/libclphmm.so" ]; then
  pass "installed: $LIBREL/libclphmm.so"
else
  fail "not installed: $LIBREL/libclphmm.so"
fi
sonames=("$LIBDIR"/libclphmm.so.[0-9]*)
if [ -e "${sonames[0]}" ]; then
  pass "installed: versioned shared library (${sonames[*]##*/})"
else
  fail "not installed: $LIBREL/libclphmm.so.MAJOR"
fi
check_file "$PREFIX/bin/clphmm" "bin/clphmm"
# clphmm-bench, when this build tree has one.
if [ -f "$BUILD_DIR/tools/clphmm-bench" ]; then
  check_file "$PREFIX/bin/clphmm-bench" "bin/clphmm-bench"
fi
CMAKEDIR=$LIBDIR/cmake/clphmm
check_file "$CMAKEDIR/clphmmConfig.cmake" "$LIBREL/cmake/clphmm/clphmmConfig.cmake"
check_file "$CMAKEDIR/clphmmConfigVersion.cmake" \
  "$LIBREL/cmake/clphmm/clphmmConfigVersion.cmake"
check_file "$CMAKEDIR/clphmmTargets.cmake" "$LIBREL/cmake/clphmm/clphmmTargets.cmake"
PCDIR=$LIBDIR/pkgconfig
check_file "$PCDIR/clphmm.pc" "$LIBREL/pkgconfig/clphmm.pc"
# The Java binding, when this build tree has one (a JDK was found): both
# jars, the JNI library, and its copy inside clphmm-gatk.jar.
if [ -f "$BUILD_DIR/bindings/java/clphmm-gatk.jar" ]; then
  check_file "$PREFIX/share/java/clphmm-gatk.jar" "share/java/clphmm-gatk.jar"
  check_file "$PREFIX/share/java/clphmm-gkl-shim.jar" "share/java/clphmm-gkl-shim.jar"
  check_file "$LIBDIR/jni/libclphmm_jni.so" "$LIBREL/jni/libclphmm_jni.so"
  if unzip -l "$PREFIX/share/java/clphmm-gatk.jar" 2>/dev/null |
    grep -q 'org/clphmm/gatk/native/.*/libclphmm_jni\.so$' ||
    { command -v jar >/dev/null &&
      jar tf "$PREFIX/share/java/clphmm-gatk.jar" |
      grep -q 'org/clphmm/gatk/native/.*/libclphmm_jni\.so$'; }; then
    pass "share/java/clphmm-gatk.jar carries libclphmm_jni.so"
  else
    fail "share/java/clphmm-gatk.jar carries no libclphmm_jni.so"
  fi
fi

# The version the installed header declares.
HDR_VERSION=$(awk '/#define CLPHMM_VERSION_(MAJOR|MINOR|PATCH)/ {v = v sep $3; sep = "."}
                   END {print v}' "$PREFIX/include/clphmm.h" 2>/dev/null)

# ---- the installed command ------------------------------------------------------
if [ -x "$PREFIX/bin/clphmm" ]; then
  out=$(env -u LD_LIBRARY_PATH "$PREFIX/bin/clphmm" --version 2>&1)
  if [ "$out" = "clphmm $HDR_VERSION" ]; then
    pass "bin/clphmm --version prints 'clphmm $HDR_VERSION'"
  else
    fail "bin/clphmm --version" "got: $out" "want: clphmm $HDR_VERSION"
  fi
  # One batch of one read and two haplotypes, on the CPU reference.
  printf '1 2\nACGTNA ?????? ]]]]]] ]]]]]] ++++++\nTTACGTGAC\nACGTAA\n' \
    >"$WORK/tiny.in"
  if env -u LD_LIBRARY_PATH "$PREFIX/bin/clphmm" --reference "$WORK/tiny.in" \
    >"$WORK/tiny.out" 2>"$LOG/cli.log" &&
    [ "$(wc -l <"$WORK/tiny.out")" -eq 2 ] &&
    awk '!($1 + 0 < 0) { exit 1 }' "$WORK/tiny.out"; then
    pass "bin/clphmm --reference computes a small file"
  else
    fail "bin/clphmm --reference on a small file" \
      "stdout: $(tr '\n' ' ' <"$WORK/tiny.out" 2>/dev/null)"
    show_log "$LOG/cli.log"
  fi
else
  fail "bin/clphmm is not executable"
fi

# run_consumer NAME BINARY [ENV...]: runs a consumer; it must exit 0 and print
# the header's version.
run_consumer() {
  local name=$1 bin=$2 out
  shift 2
  if ! out=$(env "$@" "$bin" 2>&1); then
    fail "$name runs" "$out"
  elif ! grep -qx "version $HDR_VERSION" <<<"$out"; then
    fail "$name prints version $HDR_VERSION" "$out"
  else
    pass "$name runs ($(tr '\n' ' ' <<<"$out"))"
  fi
}

# ---- find_package(clphmm) ---------------------------------------------------------
CONSUMER_SRC=$SOURCE_DIR/tests/install/consumer
CBUILD=$WORK/consumer-cmake
gen_args=()
[ -n "$GENERATOR" ] && gen_args=(-G "$GENERATOR")
cmake_flags=()
if [ ${#EXTRA[@]} -gt 0 ]; then
  cmake_flags=("-DCMAKE_C_FLAGS=${EXTRA[*]}" "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA[*]}")
fi
if "$CMAKE" -S "$CONSUMER_SRC" -B "$CBUILD" "${gen_args[@]}" \
  -DCMAKE_C_COMPILER="$CC_BIN" -DCMAKE_PREFIX_PATH="$PREFIX" \
  -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON \
  ${CONFIG:+-DCMAKE_BUILD_TYPE="$CONFIG"} "${cmake_flags[@]}" \
  >"$LOG/consumer-configure.log" 2>&1; then
  pass "consumer project: find_package(clphmm) with CMAKE_PREFIX_PATH"
  found=$(grep -o 'found clphmm .*' "$LOG/consumer-configure.log")
  case $found in
    "found clphmm $HDR_VERSION in $PREFIX/"*)
      pass "find_package found clphmm $HDR_VERSION in the scratch prefix" ;;
    *) fail "find_package found the installed package" "got: $found" \
         "want: clphmm $HDR_VERSION under $PREFIX" ;;
  esac
  if "$CMAKE" --build "$CBUILD" "${CONFIG_ARGS[@]}" \
    >"$LOG/consumer-build.log" 2>&1; then
    pass "consumer project builds against clphmm::clphmm and clphmm::clphmm_static"
    for t in consumer_shared consumer_static; do
      bin=$(find "$CBUILD" -type f -name "$t" -perm -u+x | head -n 1)
      if [ -z "$bin" ]; then
        fail "$t was built"
        continue
      fi
      # CMake gives the executable an RPATH to the imported library, so no
      # LD_LIBRARY_PATH is needed.
      run_consumer "cmake $t" "$bin" -u LD_LIBRARY_PATH
    done
  else
    fail "consumer project build"
    show_log "$LOG/consumer-build.log"
  fi
else
  fail "consumer project configure: find_package(clphmm)"
  show_log "$LOG/consumer-configure.log"
fi

# ---- pkg-config -------------------------------------------------------------------
if ! command -v pkg-config >/dev/null 2>&1; then
  fail "pkg-config is not installed (scripts/install-deps.sh installs it)"
  finish
fi
export PKG_CONFIG_PATH=$PCDIR
unset PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
modversion=$(pkg-config --modversion clphmm 2>&1)
if [ "$modversion" = "$HDR_VERSION" ]; then
  pass "pkg-config --modversion clphmm is $HDR_VERSION"
else
  fail "pkg-config --modversion clphmm" "got: $modversion" "want: $HDR_VERSION"
fi
# The .pc file must point into the prefix it was installed to.
for var in includedir libdir; do
  val=$(pkg-config --variable="$var" clphmm 2>&1)
  case $val in
    "$PREFIX"/*) pass "clphmm.pc $var is inside the prefix ($val)" ;;
    *) fail "clphmm.pc $var points outside the install prefix" \
         "got: $var=$val" "want: a path under $PREFIX" \
         "(the .pc file is configured with CMAKE_INSTALL_PREFIX at configure" \
         " time; cmake --install --prefix does not change it)" ;;
  esac
done

read -r -a PC_CFLAGS <<<"$(pkg-config --cflags clphmm)"
read -r -a PC_LIBS <<<"$(pkg-config --libs clphmm)"
read -r -a PC_STATIC_LIBS <<<"$(pkg-config --static --libs clphmm)"
MAIN_C=$CONSUMER_SRC/main.c

# Shared: cc main.c $(pkg-config --cflags --libs clphmm), run with
# LD_LIBRARY_PATH (nothing sets an RPATH here).
if "$CC_BIN" "${EXTRA[@]}" -o "$WORK/consumer_pc_shared" "$MAIN_C" \
  "${PC_CFLAGS[@]}" "${PC_LIBS[@]}" -lm >"$LOG/pc-shared.log" 2>&1; then
  pass "cc main.c \$(pkg-config --cflags --libs clphmm)"
  run_consumer "pkg-config shared consumer" "$WORK/consumer_pc_shared" \
    LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  fail "cc main.c \$(pkg-config --cflags --libs clphmm)" \
    "cflags: ${PC_CFLAGS[*]}" "libs: ${PC_LIBS[*]}"
  show_log "$LOG/pc-shared.log"
fi

# Static: the same link line from `pkg-config --static` (Libs.private must
# name what the archive needs), with the archive chosen over the .so.
static_libs=()
for w in "${PC_STATIC_LIBS[@]}"; do
  if [ "$w" = "-lclphmm" ]; then static_libs+=("-l:libclphmm.a"); else static_libs+=("$w"); fi
done
if "$CC_BIN" "${EXTRA[@]}" -o "$WORK/consumer_pc_static" "$MAIN_C" \
  "${PC_CFLAGS[@]}" "${static_libs[@]}" -lm >"$LOG/pc-static.log" 2>&1; then
  pass "cc main.c \$(pkg-config --static --cflags --libs clphmm) with libclphmm.a"
  run_consumer "pkg-config static consumer" "$WORK/consumer_pc_static" \
    -u LD_LIBRARY_PATH
else
  fail "cc main.c with \$(pkg-config --static --libs clphmm) and libclphmm.a" \
    "libs: ${static_libs[*]}"
  show_log "$LOG/pc-static.log"
fi

finish
