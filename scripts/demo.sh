#!/usr/bin/env bash
# Quick start, command 1: installs what is missing, builds swapd and the demo backend (only those),
# and runs swapd on examples/demo.yaml, whose models are the project's own fake llama-server (no
# model files needed). Listens on 127.0.0.1:8080 unless SWAPD_LISTEN says otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD_TARGETS="swapd fake-llama-server" scripts/build.sh
build_dir="${BUILD_DIR:-build}"
export PATH="$PWD/$build_dir/bin:$PATH"
exec swapd --config examples/demo.yaml --listen "${SWAPD_LISTEN:-127.0.0.1:8080}" "$@"
