#!/usr/bin/env python3
"""SSE client for bench/stream_bench.sh (python3 standard library only).

  [--model ID] latency DIRECT_URL SWAPD_URL [--rounds R] [--tokens N] [--tps T]
      One streamed chat completion at a time, alternating direct and through swapd, R rounds each.
      For every stream: time to first chunk (request written -> first `data:` event) and, for
      every token event k = 1..N, its lateness against the backend's pacing:
      (arrival_k - request written) - k / T. Prints one JSON object.

  [--model ID] hold SWAPD_URL --streams S [--tokens N] [--tps T] [--pid PID] [--health-every-ms 20]
      Opens S concurrent streams, waits until every one has sent its first event, then polls
      GET /health (new connection each time) while they are held and samples PID's VmRSS.
      Prints one JSON object: streams held, /health p50/p99/max, peak RSS, failures.

Arrival times are those of the socket reads that carry each `data:` line; chunked framing is
ignored because its size lines never contain "data:".
"""
import argparse
import asyncio
import json
import statistics
import time
from urllib.parse import urlsplit


MODEL = "bench"


def chat_body(tokens):
    return json.dumps({
        "model": MODEL,
        "stream": True,
        "max_tokens": tokens,
        "messages": [{"role": "user", "content": "hello"}],
    }).encode()


def request_bytes(host, port, body):
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n")
    return head.encode() + body


async def one_stream(url, tokens, on_first=None, hold=None):
    """Returns (t_sent, [arrival times of data: events], status_line)."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        writer.write(request_bytes(parts.hostname, parts.port, chat_body(tokens)))
        await writer.drain()
        t_sent = time.perf_counter()
        arrivals = []
        status = None
        tail = b""
        while True:
            data = await reader.read(65536)
            now = time.perf_counter()
            if not data:
                break
            if status is None:
                status = data.split(b"\r\n", 1)[0].decode(errors="replace")
            # Count "data:" at line starts; keep a short tail so a marker split across reads
            # is counted once, at the read that completes it.
            text = tail + data
            count = text.count(b"\ndata:") - tail.count(b"\ndata:")
            tail = text[-8:]
            if count > 0:
                if not arrivals and on_first:
                    on_first()
                arrivals.extend([now] * count)
            if text.endswith(b"data: [DONE]\n\n") or b"data: [DONE]" in data:
                if hold is None:
                    break
        return t_sent, arrivals, status
    finally:
        writer.close()


def percentile(values, p):
    if not values:
        return None
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * (len(s) - 1)))))
    return s[k]


def summarize_us(values):
    return {
        "n": len(values),
        "p50_us": round(percentile(values, 50) * 1e6, 1) if values else None,
        "p99_us": round(percentile(values, 99) * 1e6, 1) if values else None,
        "mean_us": round(statistics.fmean(values) * 1e6, 1) if values else None,
    }


async def latency(args):
    interval = 1.0 / args.tps
    results = {}
    samples = {"direct": ([], []), "swapd": ([], [])}
    for _ in range(args.rounds):
        for name, url in (("direct", args.direct), ("swapd", args.swapd)):
            t_sent, arrivals, status = await one_stream(url, args.tokens)
            if not arrivals or "200" not in (status or ""):
                raise SystemExit(f"{name}: bad stream: status={status!r} events={len(arrivals)}")
            ttfc, late = samples[name]
            ttfc.append(arrivals[0] - t_sent)
            # Chat streams: one opening event at once, then token k (k = 1..N) on the backend's
            # clock, due k * interval after the stream began. A chunk's lateness is its arrival
            # minus that schedule, counted from the moment the request was sent.
            for k in range(1, min(args.tokens, len(arrivals) - 1) + 1):
                late.append(arrivals[k] - t_sent - k * interval)
    for name, (ttfc, late) in samples.items():
        results[name] = {"ttfc": summarize_us(ttfc), "chunk_lateness": summarize_us(late)}
    print(json.dumps(results))


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def threads(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


async def health_once(url):
    parts = urlsplit(url)
    t0 = time.perf_counter()
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write(f"GET /health HTTP/1.1\r\nHost: {parts.hostname}\r\nConnection: close\r\n\r\n"
                 .encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    ok = data.startswith(b"HTTP/1.1 200")
    return time.perf_counter() - t0, ok


async def hold(args):
    first = asyncio.Event()
    started = 0

    def on_first():
        nonlocal started
        started += 1
        if started == args.streams:
            first.set()

    t_open = time.perf_counter()
    tasks = []
    for i in range(args.streams):
        tasks.append(asyncio.create_task(one_stream(args.swapd, args.tokens, on_first, hold=True)))
        if i % 50 == 49:
            await asyncio.sleep(0.02)  # a gentle ramp, not a SYN flood
    try:
        await asyncio.wait_for(first.wait(), timeout=args.open_timeout)
    except asyncio.TimeoutError:
        pass
    all_started = time.perf_counter() - t_open
    lat, failures, rss_peak, thread_peak = [], 0, 0, 0
    stop = time.perf_counter() + args.poll_seconds
    while time.perf_counter() < stop and started == args.streams:
        try:
            t, ok = await asyncio.wait_for(health_once(args.swapd), timeout=10)
            lat.append(t)
            failures += 0 if ok else 1
        except (asyncio.TimeoutError, OSError):
            failures += 1
        if args.pid:
            rss_peak = max(rss_peak, rss_kib(args.pid) or 0)
            thread_peak = max(thread_peak, threads(args.pid) or 0)
        await asyncio.sleep(args.health_every_ms / 1000.0)
    live = sum(1 for t in tasks if not t.done())
    done = await asyncio.gather(*tasks, return_exceptions=True)
    complete = sum(1 for d in done
                   if not isinstance(d, BaseException) and len(d[1]) >= args.tokens)
    print(json.dumps({
        "streams": args.streams,
        "streams_started": started,
        "seconds_to_start_all": round(all_started, 2),
        "streams_live_at_end_of_polling": live,
        "streams_complete": complete,
        "health": summarize_us(lat),
        "health_max_us": round(max(lat) * 1e6, 1) if lat else None,
        "health_failures": failures,
        "rss_peak_kib": rss_peak,
        "threads_peak": thread_peak,
    }))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="mode", required=True)
    lp = sub.add_parser("latency")
    lp.add_argument("direct")
    lp.add_argument("swapd")
    lp.add_argument("--rounds", type=int, default=10)
    lp.add_argument("--tokens", type=int, default=50)
    lp.add_argument("--tps", type=float, required=True)
    hp = sub.add_parser("hold")
    hp.add_argument("swapd")
    hp.add_argument("--streams", type=int, default=1000)
    hp.add_argument("--tokens", type=int, default=60)
    hp.add_argument("--pid", type=int, default=0)
    hp.add_argument("--health-every-ms", type=float, default=20)
    hp.add_argument("--poll-seconds", type=float, default=10)
    hp.add_argument("--open-timeout", type=float, default=60)
    p.add_argument("--model", default="bench", help="the model id to ask for")
    args = p.parse_args()
    global MODEL
    MODEL = args.model
    asyncio.run(latency(args) if args.mode == "latency" else hold(args))


if __name__ == "__main__":
    main()
