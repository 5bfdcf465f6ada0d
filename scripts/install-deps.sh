#!/usr/bin/env bash
# Installs the Debian 12 packages swapd needs to build and test, only those missing.
# Idempotent and quiet when everything is there.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ccache clang-format
  libcpp-httplib-dev nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libboost1.81-dev
  catch2 libssl-dev openssl curl libsqlite3-dev
)
# Extra tools the test suite or the benchmarks use: pass them as arguments.
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
