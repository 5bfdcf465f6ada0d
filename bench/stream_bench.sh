#!/usr/bin/env bash
# Streaming through swapd, measured in one run against the same fake backend:
#  1. added time to first chunk and per-chunk lateness of an SSE stream, swapd vs direct
#     (fake backend paced with --tokens-per-second; bench/stream_client.py records arrivals);
#  2. S concurrent SSE streams (default 1000) held through swapd while GET /health is polled:
#     /health p50/p99 meanwhile, and swapd's resident memory and thread count;
#  3. swapd's resident memory idle (backend loaded, before any stream).
#   bench/stream_bench.sh [streams, default 1000] [tokens per second of each held stream, default 5]
# Needs a build (scripts/build.sh) and python3; nothing is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
streams=${1:-1000}
hold_tps=${2:-5}
bin=$PWD/${BUILD_DIR:-build}/bin
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"

source bench/common.sh
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
backend_port=$(free_port)
swapd_port=$(free_port)
latency_tps=50

# Two models on the same fake binary: "bench" paced for the latency run, "hold" for the held
# streams (enough HTTP threads for every stream: one thread per connection).
hold_port=$(free_port)
cat >"$work/config.yaml" <<YAML
models:
  bench:
    cmd: $bin/fake-llama-server --port $backend_port --model bench --tokens-per-second $latency_tps
    proxy: http://127.0.0.1:$backend_port
  hold:
    cmd: $bin/fake-llama-server --port $hold_port --model bench --tokens-per-second $hold_tps --threads-http $((streams + 64))
    proxy: http://127.0.0.1:$hold_port
    concurrencyLimit: $((streams + 100))
groups:
  both:
    swap: false
    exclusive: true
    members: [bench, hold]
YAML
"$bin/swapd" --config "$work/config.yaml" --listen "127.0.0.1:$swapd_port" --log-level warn \
  >"$work/swapd.log" 2>&1 &
swapd_pid=$!
pids+=("$swapd_pid")
wait_for_health "$swapd_port"
for m in bench hold; do
  curl -fs --max-time 60 "127.0.0.1:$swapd_port/v1/completions" \
    -d "{\"model\":\"$m\",\"prompt\":\"hi\",\"max_tokens\":1}" >/dev/null
done
sleep 1
idle_rss=$(rss "$swapd_pid")
idle_threads=$(awk '/Threads/ {print $2}' "/proc/$swapd_pid/status")

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "### Time to first chunk and per-chunk lateness ($latency_tps tokens/s, 50 tokens, 20 streams each)"
lat=$(python3 bench/stream_client.py latency "http://127.0.0.1:$backend_port" \
  "http://127.0.0.1:$swapd_port" --rounds 20 --tokens 50 --tps "$latency_tps")
python3 - "$lat" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
print("| target | first chunk p50 | first chunk p99 | chunk lateness p50 | chunk lateness p99 |")
print("| --- | --- | --- | --- | --- |")
for name in ("direct", "swapd"):
    t, l = r[name]["ttfc"], r[name]["chunk_lateness"]
    print(f"| {name} | {t['p50_us']:.0f} us | {t['p99_us']:.0f} us | {l['p50_us']:.0f} us | {l['p99_us']:.0f} us |")
d, s = r["direct"], r["swapd"]
print(f"| added by swapd | {s['ttfc']['p50_us']-d['ttfc']['p50_us']:+.0f} us | "
      f"{s['ttfc']['p99_us']-d['ttfc']['p99_us']:+.0f} us | "
      f"{s['chunk_lateness']['p50_us']-d['chunk_lateness']['p50_us']:+.0f} us | "
      f"{s['chunk_lateness']['p99_us']-d['chunk_lateness']['p99_us']:+.0f} us |")
PY

echo
echo "### $streams concurrent SSE streams held through swapd ($hold_tps tokens/s each), /health polled"
held=$(python3 bench/stream_client.py --model hold hold "http://127.0.0.1:$swapd_port" --streams "$streams" \
  --tokens $((hold_tps * 40)) --pid "$swapd_pid" --poll-seconds 15)
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$held" "$idle_rss" "$idle_threads" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
h = r["health"]
if not h["n"]:
    print("not every stream started, so /health was not polled:", sys.argv[1])
    sys.exit(0)
print("| streams held | /health p50 | /health p99 | /health max | /health failures | swapd RSS idle | swapd RSS with streams | swapd threads idle / with streams |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
print(f"| {r['streams_started']}/{r['streams']} | {h['p50_us']/1000:.1f} ms | {h['p99_us']/1000:.1f} ms | "
      f"{r['health_max_us']/1000:.1f} ms | {r['health_failures']} of {h['n']} | "
      f"{int(sys.argv[2])/1024:.1f} MiB | {r['rss_peak_kib']/1024:.1f} MiB | {sys.argv[3]} / {r['threads_peak']} |")
print()
print(f"all {r['streams']} streams had their first event after {r['seconds_to_start_all']} s; "
      f"{r['streams_complete']} completed every token")
PY
