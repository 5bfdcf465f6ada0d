#!/usr/bin/env bash
# /api/events readers against proxy throughput: the same swapd and fake backend, wrk's small
# non-streamed requests through swapd with no /api/events reader and with READERS (default 50)
# `curl -N /api/events` readers connected, in rounds of two runs (one without readers, one with)
# whose order goes ABBA (none first, readers first, readers first, none first, ...), so that load
# from other processes and the drift of a long run hit both alike.
# Every proxied request publishes events (inflight upserts and remove, activity), so each reader
# gets several frames per request.
# Prints requests/s and p50/p99 with and without readers (medians over the rounds), each round's
# ratio (readers / none) as a range, a median, and a mean with its standard error and a 95%
# interval, and the events swapd dropped for readers too slow. One round's ratio is off by about
# 3% either way on a 2-core VM: a cost of 1-2% needs 50+ rounds to be told from none.
#   bench/events_bench.sh [seconds per run, default 3] [rounds, default 32] [readers, default 50]
# READER_PATH reads another stream (default /api/events; /models/sse: readers of some types).
# CONTROL=1 runs the same rounds with no reader in either run: how far the method can be trusted.
# SWAPD_ARGS adds arguments to swapd's command line (e.g. "--log-level warn": no log line per request).
# Needs a build (scripts/build.sh); installs wrk from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-3}
rounds=${2:-32}
readers=${3:-50}
scripts/install-deps.sh wrk python3
bin=$PWD/${BUILD_DIR:-build}/bin
work=$(mktemp -d)
pids=()
reader_pids=()
stop_readers() {
  for p in "${reader_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${reader_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  reader_pids=()
}
cleanup() {
  stop_readers
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

source bench/common.sh
backend_port=$(free_port)
swapd_port=$(free_port)
bench_config "$bin" "$backend_port" >"$work/config.yaml"
STATE_DIRECTORY=$work "$bin/swapd" --config "$work/config.yaml" --listen "127.0.0.1:$swapd_port" ${SWAPD_ARGS:-} \
  >"$work/swapd.log" 2>&1 &
pids+=("$!")
wait_for_health "$swapd_port"
body='{"model":"bench","prompt":"hello","max_tokens":1}'
curl -fs --max-time 60 "127.0.0.1:$swapd_port/v1/completions" -d "$body" >/dev/null
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA

start_readers() {
  [ -n "${CONTROL:-}" ] && return 0
  for _ in $(seq "$readers"); do
    curl -sN "127.0.0.1:$swapd_port${READER_PATH:-/api/events}" >/dev/null &
    reader_pids+=("$!")
  done
  # Every reader connected: swapd_event_readers says so.
  for _ in $(seq 200); do
    n=$(curl -fs "127.0.0.1:$swapd_port/metrics" | awk '$1=="swapd_event_readers" {print $2}')
    [ "${n:-0}" -ge "$readers" ] && return 0
    sleep 0.05
  done
  echo "only ${n:-0} of $readers readers connected" >&2
}

# run -> "rps p50_us p99_us", after a second of the same load, not counted: the runs with readers
# always come after a pause (the readers' start), the others not always, and a run should not
# measure how the pools warm up again. (Whether it mattered is not shown: controls without readers
# read 0.977-1.014 with it and without, bench/README.md.)
run() {
  wrk_run warm-up 1 8 "$work/post.lua" "http://127.0.0.1:$swapd_port/v1/completions" >/dev/null
  wrk_run events "$duration" 8 "$work/post.lua" "http://127.0.0.1:$swapd_port/v1/completions"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# A new swapd's throughput falls over its first 15 s or so (pools, the history's table): not
# counted either.
wrk_run settle 20 8 "$work/post.lua" "http://127.0.0.1:$swapd_port/v1/completions" >/dev/null
: >"$work/none" && : >"$work/readers"
for round in $(seq "$rounds"); do
  if [ $((round % 4)) -lt 2 ]; then
    run >>"$work/none"
    start_readers
    run >>"$work/readers"
    stop_readers
  else
    start_readers
    run >>"$work/readers"
    stop_readers
    run >>"$work/none"
  fi
  echo "round $round done" >&2
done
dropped=$(curl -fs "127.0.0.1:$swapd_port/metrics" | awk '$1=="swapd_events_dropped_total" {print $2}')
rss=$(awk '/VmRSS/ {print $2}' "/proc/${pids[0]}/status")
echo
echo "| /api/events readers | requests/s | ratio | p50 | p99 |"
echo "| --- | --- | --- | --- | --- |"
base=$(cut -d' ' -f1 "$work/none" | median)
for which in none readers; do
  rps=$(cut -d' ' -f1 "$work/$which" | median)
  p50=$(cut -d' ' -f2 "$work/$which" | median)
  p99=$(cut -d' ' -f3 "$work/$which" | median)
  label=$([ "$which" = none ] && echo 0 || echo "$readers")
  [ "$which" = readers ] && [ -n "${CONTROL:-}" ] && label="0 (control)"
  printf '| %s | %.0f | %.3f | %.0f us | %.0f us |\n' "$label" "$rps" \
    "$(awk -v a="$rps" -v b="$base" 'BEGIN {print a / b}')" "$p50" "$p99"
done
# Each round's readers run against the run without readers next to it: the spread of these
# ratios shows how far one round's noise goes; their mean (of the logarithms) and its standard
# error how far the whole run can be trusted.
ratios=$(paste -d' ' <(cut -d' ' -f1 "$work/none") <(cut -d' ' -f1 "$work/readers") |
  awk '{printf "%.4f\n", $2 / $1}')
sorted=$(echo "$ratios" | sort -g)
echo
echo "ratio per round: $(echo "$sorted" | head -1) to $(echo "$sorted" | tail -1)," \
  "median $(echo "$sorted" | median)"
echo "$ratios" | awk '{ l = log($1); s += l; ss += l * l; n++ }
  END {
    m = s / n; v = n > 1 ? (ss - n * m * m) / (n - 1) : 0; se = v > 0 ? sqrt(v / n) : 0
    printf "mean ratio %.4f +- %.4f (standard error, %d rounds), 95%% interval %.4f to %.4f\n",
      exp(m), exp(m) * se, n, exp(m - 1.96 * se), exp(m + 1.96 * se)
  }'
echo "events dropped for slow readers: ${dropped:-0}; swapd RSS after: $((rss / 1024)) MiB"
