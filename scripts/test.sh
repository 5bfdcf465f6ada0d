#!/usr/bin/env bash
# Quick start, command 2: installs what is missing, builds, and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# prometheus brings promtool: a test checks /metrics with `promtool check metrics`.
# chromium runs the dashboard's browser test (tests/browser/), with playwright-core from npm.
scripts/install-deps.sh prometheus chromium
scripts/install-browser-test.sh
scripts/build.sh
build_dir="${BUILD_DIR:-build}"
cd "$build_dir"
ctest --output-on-failure -j "$(nproc)"
