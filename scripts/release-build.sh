#!/usr/bin/env bash
# A packager's build (CI runs it once): plain `cmake -DCMAKE_BUILD_TYPE=Release`, no -Werror, every
# target (the daemon, the tests, the fake backend, the benchmarks) into build-release/.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build-release}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
