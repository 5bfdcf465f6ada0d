#!/usr/bin/env python3
"""A fleet of swapd nodes behind a simulated endpoint picker (python3 standard library only).

    bench/fleet_sim.py [--nodes 4] [--requests 600] [--rate 8] [--zipf 1.0] [--load-ms 500]
                       [--tokens 32] [--tps 200] [--seed 1] [--bin build/bin]
                       [--affinity-weight 3]

Starts N swapd nodes on loopback, each with the same 6 fake models (fake-llama-server, --load-ms
to stand for a model's load time) of 4 GiB each under a 10 GiB RAM budget: 2 of the 6 fit on a
node at once. A trace of requests over the 6 models (Zipf-skewed popularity, Poisson arrivals) is
replayed three times, each time on fresh nodes, with three ways of choosing a node:

  round-robin  the next node in turn;
  picker       as llm-d's endpoint picker with its stock scorers (llm-d/llm-d-router,
               pkg/epp/framework/plugins/scheduling/scorer/): each node's /metrics scraped every
               50 ms; per node the sum, with weight 1 each, of
                 queue-scorer                (max_q - q) / (max_q - min_q) over the nodes (1 when equal),
                                             q = vllm:num_requests_waiting
                 running-requests-size-scorer the same over vllm:num_requests_running
                 kv-cache-utilization-scorer 1 - vllm:kv_cache_usage_perc
                 lora-affinity-scorer        1.0 when the model is in running_lora_adapters, else 0.8
                                             when running + waiting adapters < max_lora, else 0.6
                                             when it is in waiting_lora_adapters, else 0.0
               the highest sum wins; ties go to a random one of them (the max-score picker);
  picker, affinity xW  the same with the lora-affinity scorer's weight W (--affinity-weight).

Reports, per policy: requests, failures, model loads and swaps (a model stopped to make room:
swapd_model_swaps_total summed over the nodes) per 1000 requests, and the client's p50 and p95
latency (request sent to answer read).
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

MODELS = [f"m{i}" for i in range(6)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_config(bin_dir, load_ms, tps):
    lines = ["memory:", "  ram: 10GiB", "  sampleInterval: 0", "models:"]
    for model in MODELS:
        port = free_port()
        lines += [
            f"  {model}:",
            f"    cmd: {bin_dir}/fake-llama-server --port {port} --model {model}"
            f" --load-ms {load_ms} --tokens-per-second {tps}",
            f"    proxy: http://127.0.0.1:{port}",
            "    memory: {ram: 4GiB}",
        ]
    return "\n".join(lines) + "\n"


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


class Node:
    def __init__(self, bin_dir, work, index, load_ms, tps):
        self.dir = os.path.join(work, f"node{index}")
        os.makedirs(self.dir)
        config = os.path.join(self.dir, "config.yaml")
        with open(config, "w") as f:
            f.write(node_config(bin_dir, load_ms, tps))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, STATE_DIRECTORY=self.dir)
        self.log = open(os.path.join(self.dir, "swapd.log"), "w")
        self.process = subprocess.Popen(
            [f"{bin_dir}/swapd", "--config", config, "--listen", f"127.0.0.1:{self.port}",
             "--log-level", "warn"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 20
        while True:
            try:
                http_get(self.url + "/health", 1)
                break
            except (OSError, urllib.error.URLError):
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"node {index} did not start; see {self.log.name}")
                time.sleep(0.05)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def sample(text, name):
    m = re.search(r"^" + re.escape(name) + r" ([0-9.e+-]+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def total(text, name):
    return sum(float(v) for v in re.findall(r"^" + re.escape(name) + r"\{[^}]*\} ([0-9.e+-]+)$",
                                            text, re.M))


INFO = re.compile(r'^vllm:lora_requests_info\{max_lora="(\d+)",running_lora_adapters="([^"]*)",'
                  r'waiting_lora_adapters="([^"]*)"\}', re.M)


def parse_gauges(text):
    info = INFO.search(text)
    split = lambda s: set(x for x in s.split(",") if x)
    return {
        "waiting": sample(text, "vllm:num_requests_waiting"),
        "running": sample(text, "vllm:num_requests_running"),
        "kv": sample(text, "vllm:kv_cache_usage_perc"),
        "max_lora": int(info.group(1)) if info else 0,
        "active": split(info.group(2)) if info else set(),
        "waiting_models": split(info.group(3)) if info else set(),
    }


class Picker:
    """Scrapes every node's /metrics every 50 ms and scores as the stock scorers do."""

    def __init__(self, nodes, rng, affinity_weight):
        self.nodes = nodes
        self.affinity_weight = affinity_weight
        self.rng = rng
        self.lock = threading.Lock()
        self.gauges = [None] * len(nodes)
        self.stopping = threading.Event()
        self.scrapes = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopping.is_set():
            started = time.monotonic()
            for i, node in enumerate(self.nodes):
                try:
                    g = parse_gauges(http_get(node.url + "/metrics", 2))
                except (OSError, urllib.error.URLError):
                    continue
                with self.lock:
                    self.gauges[i] = g
                    self.scrapes += 1
            self.stopping.wait(max(0.0, 0.05 - (time.monotonic() - started)))

    @staticmethod
    def min_max(values):
        lo, hi = min(values), max(values)
        return [1.0 if hi == lo else (hi - v) / (hi - lo) for v in values]

    def choose(self, model):
        with self.lock:
            gauges = list(self.gauges)
        if any(g is None for g in gauges):
            return self.rng.randrange(len(gauges))
        queue = self.min_max([g["waiting"] for g in gauges])
        running = self.min_max([g["running"] for g in gauges])
        scores = []
        for i, g in enumerate(gauges):
            if model in g["active"]:
                lora = 1.0
            elif len(g["active"]) + len(g["waiting_models"]) < g["max_lora"]:
                lora = 0.8
            elif model in g["waiting_models"]:
                lora = 0.6
            else:
                lora = 0.0
            scores.append(queue[i] + running[i] + (1 - g["kv"]) + self.affinity_weight * lora)
        best = max(scores)
        return self.rng.choice([i for i, s in enumerate(scores) if s == best])

    def stop(self):
        self.stopping.set()
        self.thread.join()


class RoundRobin:
    def __init__(self, n):
        self.n = n
        self.next = 0
        self.lock = threading.Lock()

    def choose(self, _model):
        with self.lock:
            i = self.next
            self.next = (self.next + 1) % self.n
            return i

    def stop(self):
        pass


def make_trace(args):
    rng = random.Random(args.seed)
    weights = [1.0 / (rank + 1) ** args.zipf for rank in range(len(MODELS))]
    order = MODELS[:]
    rng.shuffle(order)  # which model is popular is chance, not its name
    t = 0.0
    trace = []
    for _ in range(args.requests):
        t += rng.expovariate(args.rate)
        trace.append((t, rng.choices(order, weights)[0]))
    return trace


def chat(url, model, tokens):
    body = json.dumps({"model": model, "max_tokens": tokens,
                       "messages": [{"role": "user", "content": "hello"}]}).encode()
    request = urllib.request.Request(url + "/v1/chat/completions", body,
                                     {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=300) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return -1


def run(args, policy, trace):
    work = tempfile.mkdtemp(prefix="swapd-fleet-")
    nodes = []
    try:
        for i in range(args.nodes):
            nodes.append(Node(args.bin, work, i, args.load_ms, args.tps))
        if policy == "round-robin":
            chooser = RoundRobin(len(nodes))
        else:
            weight = 1.0 if policy == "picker" else args.affinity_weight
            chooser = Picker(nodes, random.Random(args.seed + 1), weight)
        time.sleep(0.2)  # the picker's first scrapes
        latencies, failures = [], []
        lock = threading.Lock()

        def one(model):
            node = nodes[chooser.choose(model)]
            started = time.monotonic()
            status = chat(node.url, model, args.tokens)
            elapsed = time.monotonic() - started
            with lock:
                (latencies if status == 200 else failures).append(elapsed)

        threads = []
        t0 = time.monotonic()
        for at, model in trace:
            delay = t0 + at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            th = threading.Thread(target=one, args=(model,))
            th.start()
            threads.append(th)
        for th in threads:
            th.join()
        chooser.stop()
        loads = swaps = 0.0
        for node in nodes:
            text = http_get(node.url + "/metrics")
            loads += total(text, "swapd_model_starts_total")
            swaps += total(text, "swapd_model_swaps_total")
        n = len(trace)
        q = statistics.quantiles(latencies, n=20) if len(latencies) >= 2 else [0] * 19
        return {
            "policy": policy, "requests": n, "failed": len(failures),
            "loads_per_1000": 1000 * loads / n, "swaps_per_1000": 1000 * swaps / n,
            "p50_ms": 1000 * statistics.median(latencies), "p95_ms": 1000 * q[18],
            "scrapes": getattr(chooser, "scrapes", 0),
        }
    finally:
        for node in nodes:
            node.stop()
        shutil.rmtree(work, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nodes", type=int, default=4)
    p.add_argument("--requests", type=int, default=600)
    p.add_argument("--rate", type=float, default=8.0, help="requests per second (Poisson)")
    p.add_argument("--zipf", type=float, default=1.0, help="popularity skew exponent")
    p.add_argument("--load-ms", type=int, default=500, help="each model's load time")
    p.add_argument("--tokens", type=int, default=32, help="max_tokens of each request")
    p.add_argument("--tps", type=int, default=200, help="the fake backend's tokens per second")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--bin", default="build/bin", help="where swapd and fake-llama-server are")
    p.add_argument("--affinity-weight", type=float, default=3.0,
                   help="the lora-affinity scorer's weight in the third run")
    args = p.parse_args()
    args.bin = os.path.abspath(args.bin)
    trace = make_trace(args)
    counts = {m: sum(1 for _, x in trace if x == m) for m in MODELS}
    print(f"# {args.nodes} nodes, 2 of 6 models resident per node; {args.requests} requests at "
          f"{args.rate}/s, Zipf {args.zipf}: {json.dumps(counts)}; load {args.load_ms} ms, "
          f"{args.tokens} tokens at {args.tps}/s", flush=True)
    print("| policy | requests | failed | loads / 1000 requests | swaps / 1000 requests "
          "| p50 | p95 |")
    print("| --- | --- | --- | --- | --- | --- | --- |", flush=True)
    results = []
    for policy in ("round-robin", "picker", f"picker, affinity x{args.affinity_weight:g}"):
        r = run(args, policy, trace)
        results.append(r)
        print(f"| {r['policy']} | {r['requests']} | {r['failed']} | {r['loads_per_1000']:.0f} | "
              f"{r['swaps_per_1000']:.0f} | {r['p50_ms']:.0f} ms | {r['p95_ms']:.0f} ms |",
              flush=True)
    for r in results[1:]:
        if r["swaps_per_1000"] > 0:
            ratio = results[0]["swaps_per_1000"] / r["swaps_per_1000"]
            print(f"# swaps: round-robin / {r['policy']} = {ratio:.1f}x")
        else:
            print(f"# swaps: {r['policy']} made none")


if __name__ == "__main__":
    main()
