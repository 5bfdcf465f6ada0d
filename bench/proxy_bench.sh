#!/usr/bin/env bash
# Proxy overhead: the same fake backend measured four ways in one run — direct, through nginx
# (the reference reverse proxy: keepalive upstream, proxy_buffering off), through swapd with its
# defaults (captures, activity history and in-flight table on, as the dashboard needs them), and
# through "swapd-lean", the same binary with captures off (captureBuffer: 0) and the history in
# memory (store.path: none), so that what the bookkeeping costs stays visible — with
# wrk over loopback, small non-streamed requests at 1 and 64 connections, and a large one (a
# 256 KiB chat of 2000 messages, as an agent with a long context sends) at 1 connection. Prints
# a markdown table of requests/s and p50/p99 latency with ratios to direct, and swapd's resident
# memory.
# The targets are measured in interleaved rounds and each figure is the median over the
# rounds, so that load from other processes on a small machine hits all of them alike.
#   bench/proxy_bench.sh [seconds per run, default 10] [rounds, default 3]
# BASELINE_SWAPD=/path/to/other/swapd adds a target, "swapd-before": that binary with the defaults
# in front of its own backend (for before/after figures measured under the same load). Each swapd
# keeps its history database under the run's temporary directory, never the user's.
# Needs a build (scripts/build.sh); installs wrk and nginx from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
rounds=${2:-3}
scripts/install-deps.sh wrk nginx python3
bin=$PWD/${BUILD_DIR:-build}/bin
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

source bench/common.sh
backend_port=$(free_port)
lean_backend_port=$(free_port)
swapd_port=$(free_port)
lean_port=$(free_port)
nginx_port=$(free_port)

bench_config "$bin" "$backend_port" >"$work/config.yaml"
bench_config "$bin" "$lean_backend_port" $'captureBuffer: 0\nstore:\n  path: none' >"$work/lean.yaml"
# start_swapd NAME CONFIG PORT [BINARY]: its database in $work/NAME (STATE_DIRECTORY).
start_swapd() {
  mkdir -p "$work/$1"
  STATE_DIRECTORY="$work/$1" "${4:-$bin/swapd}" --config "$2" --listen "127.0.0.1:$3" \
    --log-level warn >"$work/$1.log" 2>&1 &
  pids+=("$!")
}
start_swapd swapd "$work/config.yaml" "$swapd_port"
swapd_pid=$!
start_swapd swapd-lean "$work/lean.yaml" "$lean_port"
body='{"model":"bench","prompt":"hello","max_tokens":1}'
targets=("direct" "nginx" "swapd" "swapd-lean")
if [ -n "${BASELINE_SWAPD:-}" ]; then
  base_port=$(free_port)
  base_backend_port=$(free_port)
  # Its own fake backend, like the first (swapd refuses a backend port that is already taken).
  bench_config "$bin" "$base_backend_port" >"$work/baseline.yaml"
fi
# The first request starts the backend.
for port in "$swapd_port" "$lean_port"; do
  wait_for_health "$port"
  curl -fs --max-time 60 "127.0.0.1:$port/v1/completions" -d "$body" >/dev/null
done
idle_rss=$(awk '/VmRSS/ {print $2}' "/proc/$swapd_pid/status")
if [ -n "${BASELINE_SWAPD:-}" ]; then
  start_swapd swapd-before "$work/baseline.yaml" "$base_port" "$BASELINE_SWAPD"
  wait_for_health "$base_port"
  curl -fs --max-time 60 "127.0.0.1:$base_port/v1/completions" -d "$body" >/dev/null
  targets+=("swapd-before")
fi

cat >"$work/nginx.conf" <<NGINX
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  upstream backend { server 127.0.0.1:$backend_port; keepalive 64; }
  server {
    listen 127.0.0.1:$nginx_port;
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
NGINX
nginx -c "$work/nginx.conf" -p "$work"

cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA
python3 - "$work/large.json" <<'PY'
import json, sys
messages = [{"role": "user" if i % 2 == 0 else "assistant",
             "content": "message %d: " % i + "lorem ipsum dolor sit amet " * 4} for i in range(2000)]
body = {"model": "bench", "messages": messages, "max_tokens": 1, "temperature": 0.2}
open(sys.argv[1], "w").write(json.dumps(body))
PY
cat >"$work/large.lua" <<LUA
local f = io.open("$work/large.json", "rb")
wrk.body = f:read("*a")
f:close()
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
LUA

# run NAME PORT CONNECTIONS SCRIPT PATH -> "rps p50_us p99_us"
run() { wrk_run "$1" "$duration" "$3" "$work/$4.lua" "http://127.0.0.1:$2$5"; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| connections | target | requests/s | ratio to direct | p50 | p99 | added p50 |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for load in 1 64 large; do
  case $load in
    large) c=1 script=large path=/v1/chat/completions label="1, $(( $(wc -c <"$work/large.json") / 1024 )) KiB chat" ;;
    *) c=$load script=post path=/v1/completions label=$load ;;
  esac
  : >"$work/results"
  for _ in $(seq "$rounds"); do
    for name in "${targets[@]}"; do
      case $name in
        direct) port=$backend_port ;;
        nginx) port=$nginx_port ;;
        swapd) port=$swapd_port ;;
        swapd-lean) port=$lean_port ;;
        swapd-before) port=$base_port ;;
      esac
      echo "$name $(run "$name" "$port" "$c" "$script" "$path")" >>"$work/results"
    done
  done
  # field: 2 = requests/s, 3 = p50, 4 = p99
  stat() { awk -v n="$1" -v f="$2" '$1 == n { print $f }' "$work/results" | median; }
  d_rps=$(stat direct 2) d_p50=$(stat direct 3)
  for name in "${targets[@]}"; do
    awk -v c="$label" -v n="$name" -v r="$(stat "$name" 2)" -v dr="$d_rps" -v p50="$(stat "$name" 3)" \
      -v p99="$(stat "$name" 4)" -v d50="$d_p50" \
      'BEGIN { printf "| %s | %s | %.0f | %.2fx | %.0f us | %.0f us | %+.0f us |\n", c, n, r, r/dr, p50, p99, p50-d50 }'
  done
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
busy_rss=$(awk '/VmRSS/ {print $2}' "/proc/$swapd_pid/status")
sleep 5  # the free memory of the flood goes back once requests have stopped for 2 s (IdleTrim)
rested_rss=$(awk '/VmRSS/ {print $2}' "/proc/$swapd_pid/status")
echo
echo "swapd resident memory: ${idle_rss} KiB idle (backend loaded), ${busy_rss} KiB right after" \
  "the runs, ${rested_rss} KiB 5 s later"
