#!/usr/bin/env bash
# The main job: install dependencies, build, and compute the bundled 10s
# dataset (3,550 pairs) on the default OpenCL device; likelihoods on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh >&2
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >&2
cmake --build build -j "$(nproc)" >&2
build/tools/clphmm "${@:-tests/data/10s.in}"
