#!/usr/bin/env bash
# A packager's build: a plain `cmake -DCMAKE_BUILD_TYPE=Release` (no -Werror) into build-release/,
# then the optimized programs: swapd, the demo backend and the benchmarks. The test binary is left
# out: it compiles at -O0 in every build type, and the sanitized builds already compile it.
# Prints "release: built in N s, W compiler warnings" (warnings are not errors here: GCC 12 warns
# falsely about std::string at -O3, e.g. -Wrestrict); the warnings themselves are in the output.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build-release}"
started=$SECONDS
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
log="$build_dir/compile.log"
cmake --build "$build_dir" -j "$(nproc)" --target swapd fake-llama-server readiness-bench \
  matrix-bench memory-bench control-bench 2>&1 | tee "$log"
echo "release: built in $((SECONDS - started)) s, $(grep -c 'warning:' "$log" || true) compiler warnings"
