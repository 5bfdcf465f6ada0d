#!/usr/bin/env bash
# Load and soak (issue "Hardening"; not run by CI):
#  load: wrk, 64 connections for S seconds, small non-streamed requests, direct to the fake
#        backend and through swapd in the same run: requests/s, errors (non-2xx and socket
#        errors), p99;
#  soak: M minutes of concurrent streamed requests spread over a duo (swap: false) and a solo
#        model, so that the duo is swapped out and back every few seconds: requests, failures,
#        swaps, and swapd's resident memory and open descriptors at the start and the end, and its
#        memory and threads at ten even steps along the way.
#   bench/load_soak.sh [load seconds, default 60] [soak minutes, default 30] [streams, default 8]
# Needs a build (scripts/build.sh); installs wrk when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
load_seconds=${1:-60}
soak_minutes=${2:-30}
streams=${3:-8}
scripts/install-deps.sh wrk python3
bin=$PWD/${BUILD_DIR:-build}/bin
work=$(mktemp -d)
swapd_pid=
cleanup() {
  [ -n "$swapd_pid" ] && kill "$swapd_pid" 2>/dev/null && wait "$swapd_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
source bench/common.sh
swapd_port=$(free_port)
load_port=$(free_port)
model() {  # id port extra-yaml
  printf '  %s:\n    cmd: %s --port %s --model %s --load-ms 200 --tokens-per-second 200\n    proxy: http://127.0.0.1:%s\n    concurrencyLimit: 1000\n%s' \
    "$1" "$bin/fake-llama-server" "$2" "$1" "$2" "${3:-}"
}
{
  echo "models:"
  printf '  load:\n    cmd: %s --port %s --model load\n    proxy: http://127.0.0.1:%s\n    concurrencyLimit: 1000\n' \
    "$bin/fake-llama-server" "$load_port" "$load_port"
  model duo-a "$(free_port)"
  model duo-b "$(free_port)"
  model solo "$(free_port)"
  echo "groups:"
  echo "  load: {swap: false, exclusive: false, persistent: true, members: [load]}"
  echo "  duo: {swap: false, exclusive: true, members: [duo-a, duo-b]}"
  echo "  solo: {swap: true, exclusive: true, members: [solo]}"
} >"$work/config.yaml"
"$bin/swapd" --config "$work/config.yaml" --listen "127.0.0.1:$swapd_port" --log-level warn \
  >"$work/swapd.log" 2>&1 &
swapd_pid=$!
wait_for_health "$swapd_port"
body='{"model":"load","prompt":"hello","max_tokens":1}'
curl -fs --max-time 60 "127.0.0.1:$swapd_port/v1/completions" -d "$body" >/dev/null
cat >"$work/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA

echo "## Load: wrk, 64 connections, ${load_seconds} s each"
echo
echo "| target | requests/s | non-2xx | socket errors | p99 |"
echo "| --- | --- | --- | --- | --- |"
for target in direct swapd; do
  port=$load_port
  [ "$target" = swapd ] && port=$swapd_port
  out=$(wrk -t2 -c64 -d"${load_seconds}s" --latency -s "$work/post.lua" \
    "http://127.0.0.1:$port/v1/completions")
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
  sock=$(echo "$out" | awk -F'[ ,]+' '/Socket errors/ {print $4+$6+$8+$10}')
  p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  echo "| $target | $rps | ${non2xx:-0} | ${sock:-0} | $p99 |"
done
echo

python3 - "$swapd_port" "$swapd_pid" "$soak_minutes" "$streams" <<'PY'
import json, os, random, sys, threading, time, urllib.request

port, pid, minutes, streams = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
base = f"http://127.0.0.1:{port}"

def status(field):
    with open(f"/proc/{pid}/status") as f:
        return int(next(l for l in f if l.startswith(field + ":")).split()[1])

def rss_kib():
    return status("VmRSS")

def fds():
    return len(os.listdir(f"/proc/{pid}/fd"))

def swaps():
    text = urllib.request.urlopen(base + "/metrics", timeout=30).read().decode()
    return sum(float(l.split()[-1]) for l in text.splitlines()
               if l.startswith("swapd_model_swaps_total{"))

lock = threading.Lock()
counts = {"ok": 0, "failed": 0}
failures = []
deadline = time.monotonic() + minutes * 60

def worker(seed):
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        # Mostly the duo (both members at once), sometimes the solo model: a swap each way.
        model = "solo" if rng.random() < 0.15 else rng.choice(["duo-a", "duo-b"])
        body = json.dumps({"model": model, "stream": True, "max_tokens": rng.randint(5, 60),
                           "messages": [{"role": "user", "content": "soak"}]}).encode()
        req = urllib.request.Request(base + "/v1/chat/completions", body,
                                     {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                text = r.read().decode()
            good = r.status == 200 and "data: [DONE]" in text and '"error"' not in text
            why = "" if good else text[-300:]
        except Exception as e:  # noqa: BLE001 - every failure counts
            good, why = False, repr(e)
        with lock:
            counts["ok" if good else "failed"] += 1
            if not good and len(failures) < 5:
                failures.append(f"{model}: {why}")

# Warm up (every model loaded once), then the starting figures.
for m in ("duo-a", "duo-b", "solo", "duo-a", "duo-b"):
    urllib.request.urlopen(urllib.request.Request(
        base + "/v1/chat/completions",
        json.dumps({"model": m, "max_tokens": 1, "messages": [{"role": "user", "content": "x"}]}).encode(),
        {"Content-Type": "application/json"}), timeout=120).read()
start_rss, start_fds, start_swaps, start_threads = rss_kib(), fds(), swaps(), status("Threads")
# RSS along the way, at ten even steps: growth that levels off (the allocator's arenas and
# caches filling) or growth that goes on (a leak).
samples = []
def sampler():
    begin, step = deadline - minutes * 60, minutes * 60 / 10
    for i in range(1, 11):
        time.sleep(max(0.0, begin + i * step - time.monotonic()))
        samples.append((i * step / 60, rss_kib(), status("Threads"), swaps()))
threads = [threading.Thread(target=worker, args=(i,)) for i in range(streams)]
watch = threading.Thread(target=sampler)
for t in threads + [watch]: t.start()
for t in threads + [watch]: t.join()
time.sleep(5)  # idle keep-alive connections to backends expire (3 s)
end_rss, end_fds, end_swaps = rss_kib(), fds(), swaps()
print(f"## Soak: {minutes:g} min, {streams} concurrent streams over duo-a, duo-b and solo\n")
print("| requests | failed | swaps | RSS start | RSS end | fds start | fds end |")
print("| --- | --- | --- | --- | --- | --- | --- |")
print(f"| {counts['ok'] + counts['failed']} | {counts['failed']} | {end_swaps - start_swaps:.0f} | "
      f"{start_rss / 1024:.1f} MiB | {end_rss / 1024:.1f} MiB | {start_fds} | {end_fds} |")
print("\n| minute | RSS | threads | swaps so far |")
print("| --- | --- | --- | --- |")
print(f"| 0 | {start_rss / 1024:.1f} MiB | {start_threads} | 0 |")
for minute, rss, nthreads, nswaps in samples:
    print(f"| {minute:g} | {rss / 1024:.1f} MiB | {nthreads} | {nswaps - start_swaps:.0f} |")
for f in failures:
    print("\nfailure:", f)
PY
