#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang into build-fuzz/ and runs each of them.
#   scripts/fuzz.sh [SECONDS]              smoke run (CI): each target for SECONDS (default 20) on a
#                                          temporary copy of its seeds, fuzz/corpus/<target>/, which
#                                          are never modified
#   scripts/fuzz.sh --long SECONDS [JOBS]  long run: each target for SECONDS with JOBS parallel
#                                          jobs (-jobs/-workers, default 2); the corpus is kept and
#                                          grows in build-fuzz/corpus/<target>/, logs in build-fuzz/logs/
# FUZZ_TARGETS="fuzz_config fuzz_usage" runs only those; FUZZ_ARGS adds libFuzzer options.
# A crash, hang (-timeout) or leak leaves its input in build-fuzz/artifacts/ and fails the script;
# replay it with `build-fuzz/bin/<target> <file>`, then make it a test in tests/fuzz_regressions/.
set -euo pipefail
cd "$(dirname "$0")/.."

long=0
if [ "${1:-}" = "--long" ]; then
  long=1
  shift
  [ $# -ge 1 ] || { echo "usage: scripts/fuzz.sh --long SECONDS [JOBS]" >&2; exit 2; }
fi
seconds="${1:-20}"
jobs="${2:-2}"
targets=(${FUZZ_TARGETS:-fuzz_config fuzz_argv fuzz_json_scan fuzz_model_id fuzz_filters fuzz_usage fuzz_http1 fuzz_http1_request})
extra=(${FUZZ_ARGS:-})

started=$SECONDS
scripts/install-deps.sh clang libclang-rt-14-dev
build_dir=build-fuzz
# -O1 with line tables only: compiles in half the time of RelWithDebInfo, and keeps assert().
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -DSWAPD_FUZZ=ON -DSWAPD_WERROR=ON -DSWAPD_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=Fuzz -DCMAKE_CXX_FLAGS_FUZZ="-O1 -gline-tables-only" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}" >/dev/null
built=$SECONDS

artifacts="$PWD/$build_dir/artifacts"
mkdir -p "$artifacts"
stamp="$(mktemp)"
scratch="$(mktemp -d)"
trap 'rm -rf "$stamp" "$scratch"' EXIT

failed=()
for t in "${targets[@]}"; do
  bin="$PWD/$build_dir/bin/$t"
  seeds="fuzz/corpus/$t"
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="$PWD/fuzz/$t.dict")
  common=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$artifacts/$t-" "${dict[@]}" "${extra[@]}")
  if [ "$long" = 1 ]; then
    corpus="$PWD/$build_dir/corpus/$t"
    logs="$PWD/$build_dir/logs/$t"
    mkdir -p "$corpus" "$logs"
    cp -n "$seeds"/* "$corpus"/
    echo "fuzz: $t for ${seconds}s with $jobs jobs (logs in $logs)"
    (cd "$logs" && "$bin" -max_total_time="$seconds" -jobs="$jobs" -workers="$jobs" \
      "${common[@]}" "$corpus" >"$logs/driver.log" 2>&1) || true
    echo "fuzz: $t: corpus has $(ls "$corpus" | wc -l) inputs"
  else
    corpus="$scratch/$t"
    mkdir -p "$corpus"
    cp "$seeds"/* "$corpus"/
    log="$scratch/$t.log"
    if "$bin" -max_total_time="$seconds" -print_final_stats=1 "${common[@]}" "$corpus" \
      >"$log" 2>&1; then
      runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
      echo "fuzz: $t: ${runs:-?} inputs in ${seconds}s, no failure"
    else
      tail -n 60 "$log" >&2
      failed+=("$t")
      continue
    fi
  fi
  if [ -n "$(find "$artifacts" -maxdepth 1 -name "$t-*" -newer "$stamp")" ]; then
    failed+=("$t")
  fi
done

echo "fuzz: build $((built - started))s, total $((SECONDS - started))s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}; inputs:" >&2
  find "$artifacts" -maxdepth 1 -newer "$stamp" -type f >&2
  exit 1
fi
