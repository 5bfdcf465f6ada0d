#!/usr/bin/env bash
# The slot cache, measured in one run through one swapd with fake llama-servers: a model whose
# cmd has --slot-save-path ${SLOT_DIR} ("cached") and the same model without it ("plain") each
# answer a long conversation, are swapped out for a third model, and get the conversation's next
# turn. Reported (medians over the rounds):
#  - prompt tokens the first request after swap-in processed (timings.prompt_n), and the ratio;
#  - the time of the request that swaps the model out (stop, with the slot save) and of the one
#    that swaps it back in (start, with the restore), and what the cache adds to each.
#   bench/slot_cache_bench.sh [prompt words, default 4000] [bytes per token, default 16384]
#                             [rounds, default 5]
# The fake writes about words x bytes-per-token to disk per save (64 MiB by default). Needs a
# build (scripts/build.sh) and python3; nothing is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
words=${1:-4000}
bytes_per_token=${2:-16384}
rounds=${3:-5}
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
model() {  # id, extra flags
  local port
  port=$(free_port)
  printf '  %s:\n    cmd: %s --port %s --model %s %s\n    proxy: http://127.0.0.1:%s\n' \
    "$1" "$bin/fake-llama-server" "$port" "$1" "$2" "$port"
}
{
  echo "slotCacheDir: $work/slots"
  echo "models:"
  model cached "--slot-save-path \${SLOT_DIR} --slot-bytes-per-token $bytes_per_token"
  model plain ""
  model other ""
} >"$work/config.yaml"
"$bin/swapd" --config "$work/config.yaml" --listen "127.0.0.1:$swapd_port" --log-level warn \
  >"$work/swapd.log" 2>&1 &
swapd_pid=$!
wait_for_health "$swapd_port"

python3 - "$swapd_port" "$words" "$rounds" "$bytes_per_token" "$work/slots" <<'PY'
import json, os, statistics, sys, time, urllib.request

port, words, rounds, bpt, slots = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
vocab = "the quick model swaps tokens stream fast local llama reply daemon hello".split()
conversation = " ".join(vocab[i % len(vocab)] + str(i) for i in range(words))

def chat(model, prompt):
    body = json.dumps({"model": model, "max_tokens": 8,
                       "messages": [{"role": "user", "content": prompt}]}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", body,
                                 {"Content-Type": "application/json"})
    start = time.perf_counter()
    with urllib.request.urlopen(req, timeout=600) as r:
        doc = json.load(r)
    return time.perf_counter() - start, doc["timings"]["prompt_n"]

def du(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)

results = {}
for model in ("cached", "plain"):
    out_t, in_t, processed = [], [], []
    for r in range(rounds):
        chat(model, conversation + f" round{r}")
        out_t.append(chat("other", "hello")[0])  # swaps `model` out
        t, n = chat(model, conversation + f" round{r} and the next turn of the conversation")
        in_t.append(t)
        processed.append(n)
    results[model] = (statistics.median(processed), statistics.median(out_t), statistics.median(in_t))

c, p = results["cached"], results["plain"]
ms = lambda s: f"{s * 1000:.1f} ms"
print(f"conversation: {words} words (tokens), {bpt} bytes per token; slot files on disk now: "
      f"{du(slots) / 2**20:.1f} MiB; {rounds} rounds, medians\n")
print("| | plain (no slot cache) | cached (${SLOT_DIR}) | ratio / added |")
print("| --- | --- | --- | --- |")
print(f"| prompt tokens processed after swap-in | {p[0]:.0f} | {c[0]:.0f} | {c[0] / p[0]:.4f}x |")
print(f"| swap-out request (stop + save) | {ms(p[1])} | {ms(c[1])} | +{ms(c[1] - p[1])} |")
print(f"| swap-in request (start + restore) | {ms(p[2])} | {ms(c[2])} | +{ms(c[2] - p[2])} |")
PY
