#!/usr/bin/env bash
# Installs what building and testing clphmm needs on Debian/Ubuntu: a C
# compiler, CMake, the OpenCL headers and ICD loader, PoCL (a CPU OpenCL
# driver, so everything runs without a GPU), and for the Java binding's
# tests a JDK, gatk-native-bindings and Intel GKL (its PairHMM is the
# comparison). Skips apt when all are present.
#
#   scripts/install-deps.sh [fuzz|kernels [PACKAGE...]]
#
# "fuzz" adds clang and its runtime libraries (libFuzzer, sanitizers) for
# scripts/fuzz.sh; "kernels" adds clang, LLVM's tools, the SPIR-V tools and
# the PACKAGEs named after it for scripts/kernels-offline.sh.
set -euo pipefail
packages=(build-essential cmake pkg-config opencl-headers ocl-icd-opencl-dev
          ocl-icd-libopencl1 pocl-opencl-icd clinfo
          openjdk-17-jdk-headless libgatk-native-bindings-java libgkl-java
          libgkl-jni libcommons-logging-java)
case "${1:-}" in
  fuzz) packages+=(clang libclang-rt-dev) ;;
  kernels) packages+=(clang llvm spirv-tools "${@:2}") ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
