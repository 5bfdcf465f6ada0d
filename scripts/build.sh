#!/usr/bin/env bash
# Configures and builds swapd into BUILD_DIR (default build/). Extra arguments go to cmake.
# SWAPD_SANITIZE=address,undefined builds with sanitizers (use another BUILD_DIR for that).
# BUILD_TARGETS="swapd fake-llama-server" builds only those targets (default: all of them).
# A developer build: warnings are errors (SWAPD_WERROR).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DSWAPD_WERROR=ON -DSWAPD_SANITIZE="${SWAPD_SANITIZE:-}" "$@" >/dev/null
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
