#!/usr/bin/env bash
# Offline kernel compile for the GPUs CI cannot run: every kernel build the
# library can ask for (each built-in variant list, precision plan and
# shuffle backend, listed by tests/kernel_variants.c with the host's own
# program source and -D options), compiled by Debian's clang for
#   amdgcn   AMD GPUs (AMD_GPUS, default gfx90a, 64-wide wavefronts, and
#            gfx1030, 32-wide; clang 14 knows no gfx11), backends amd and
#            local: object code;
#   nvptx64  NVIDIA GPUs (NV_ARCH, default sm_80), backends nvidia and
#            local: PTX (no ptxas here, so the inline PTX's text is only
#            checked by NVIDIA's driver);
#   spir64   Intel GPUs and CPUs through PoCL, backends intel, khr, khr-abs
#            and local: SPIR-V (clang, LLVM's inliner, llvm-spirv), checked
#            by spirv-val.
# The GPU targets compile without optimization: code generation still runs
# whole (instruction selection, registers, local memory limits), at a
# seventh of the time that -O2 takes on the big unrolled variants, which
# keeps the step within CI's 2 minutes on 2 cores. Fails on any error and
# on any warning of the kernel source (below); prints the failing command
# and its messages, and each distinct warning once with its count.
#
#   scripts/kernels-offline.sh
#
# Build in build-kernels/ (outputs and logs in build-kernels/offline/).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/install-deps.sh kernels
ver=$(clang -dumpversion | cut -d. -f1)
# llvm-spirv must read the bitcode of this clang's LLVM.
command -v "llvm-spirv-$ver" >/dev/null ||
  scripts/install-deps.sh kernels "llvm-spirv-$ver"
BUILD=build-kernels
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target kernel_variants >/dev/null
out=$BUILD/offline
rm -rf "$out"
"$BUILD/tests/kernel_variants" "$out"

# One job per build and target processor: "ID TARGET CPU BACKEND OPTIONS".
awk -v amd="${AMD_GPUS:-gfx90a gfx1030}" -v nv="${NV_ARCH:-sm_80}" '
  BEGIN { na = split(amd, a, " ") }
  { rest = substr($0, length($1) + 2)
    if ($1 == "amdgcn") for (i = 1; i <= na; i++) print NR "-" a[i], $1, a[i], rest
    else print NR, $1, ($1 == "nvptx64" ? nv : "-"), rest }
' "$out/builds.txt" >"$out/jobs.txt"

# Compile one job; its messages go to ID.log. Every target compiles as
# OpenCL C 1.2, the drivers' default without -cl-std, except the khr
# backends: clang 14 declares the subgroup functions only from OpenCL C 2.0
# (the drivers that offer these extensions are OpenCL 3.0 ones). Clang's
# full opencl-c.h declares the vendor extensions' functions (intel
# subgroups); NVIDIA's compiler takes GNU `asm`, clang in OpenCL needs
# -fgnu-keywords for it.
compile() {
  local id=$1 target=$2 cpu=$3 backend=$4
  shift 4
  local o=$out/$id std=CL1.2
  case $backend in khr | khr-abs) std=CL3.0 ;; esac
  local cc=(clang -x cl "-cl-std=$std" -cl-no-stdinc -Xclang
    -finclude-default-header "$@")
  {
    case $target in
      amdgcn)
        "${cc[@]}" -O0 --target=amdgcn-amd-amdhsa -nogpulib "-mcpu=$cpu" -c \
          -o "$o.o" "$out/pairhmm.cl" ;;
      nvptx64)
        "${cc[@]}" -O0 -fgnu-keywords --target=nvptx64-nvidia-nvcl \
          "-march=$cpu" -S -o "$o.ptx" "$out/pairhmm.cl" ;;
      spir64)
        # The front end's IR, inlined as every driver's optimizer does first
        # (llvm-spirv 14 cannot translate the `freeze` of LLVM's full -O2).
        "${cc[@]}" -O2 -Xclang -disable-llvm-passes \
          --target=spir64-unknown-unknown -emit-llvm -c -o "$o.bc" \
          "$out/pairhmm.cl" &&
          "opt-$ver" -passes='cgscc(inline),globaldce' "$o.bc" -o "$o.bc" &&
          "llvm-spirv-$ver" --spirv-ext=+all "$o.bc" -o "$o.spv" &&
          spirv-val "$o.spv" ;;
      *) echo "unknown target $target" ;;
    esac
  } >"$o.log" 2>&1 || {
    echo "FAILED: $target $cpu $backend $*"
    sed 's/^/  /' "$o.log" | head -n 40
    return 1
  }
}
export -f compile
export out ver
rc=0
xargs -a "$out/jobs.txt" -d '\n' -P "$(nproc)" -n 1 \
  bash -c 'compile $1' _ || rc=$?

for t in amdgcn nvptx64 spir64; do
  printf "%-8s %4d compiles:" "$t" "$(awk -v t="$t" '$2 == t' "$out/jobs.txt" | wc -l)"
  awk -v t="$t" '$2 == t { print $3 "/" $4 }' "$out/jobs.txt" | sort |
    uniq -c | awk '{ printf " %s x%d", $2, $1 }'
  echo
done
cat "$out"/*.log | grep -o 'warning: .*' | sort | uniq -c | sort -rn |
  sed 's/^/  /' || true
# Warnings of the source itself fail the step: drivers' compilers print
# their count ("2 warnings generated.") on the process's stderr when they
# build a program, which a library must not do. Two kinds are this clang's
# own: extension pragmas clang 14 does not know (the drivers that offer
# them do) and the CPU option -cl-denorms-are-zero on GPU targets.
own=$(cat "$out"/*.log | grep -o 'warning: .*' |
  grep -v -e "unknown OpenCL extension 'cl_khr_subgroup_shuffle" \
    -e "argument unused during compilation: '-cl-denorms-are-zero'" || true)
if [ -n "$own" ]; then
  echo "kernels-offline: the kernel source has warnings:"
  echo "$own" | sort | uniq -c | sed 's/^/  /'
  rc=1
fi
echo "kernels-offline: $(wc -l <"$out/jobs.txt") compiles in" \
  "$((SECONDS - start)) s, $([ $rc -eq 0 ] && echo "all passed" || echo FAILED)"
exit $rc
