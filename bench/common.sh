# Shell helpers the bench/ scripts share; they `source bench/common.sh` from the repository root.

# A loopback TCP port that was free a moment ago (the OS picked it).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# bench_config BIN_DIR PORT [TOP-LEVEL YAML]: a config of one model, "bench", the fake backend of
# BIN_DIR on 127.0.0.1:PORT with room for any flood, after the given top-level settings.
bench_config() {
  [ -n "${3:-}" ] && printf '%s\n' "$3"
  cat <<YAML
models:
  bench:
    cmd: $1/fake-llama-server --port $2 --model bench
    proxy: http://127.0.0.1:$2
    concurrencyLimit: 1000
YAML
}

# Waits up to 10 s for a swapd (or backend) on 127.0.0.1:PORT to answer GET /health.
wait_for_health() {
  for _ in $(seq 100); do
    curl -fs "127.0.0.1:$1/health" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 0  # the next request says what is wrong
}

# wrk_run LABEL SECONDS CONNECTIONS LUA_SCRIPT URL -> "requests/s p50_us p99_us"; non-2xx answers
# are reported on stderr under LABEL.
wrk_run() {
  local out threads=$(($3 < 2 ? 1 : 2))
  out=$(wrk -t"$threads" -c"$3" -d"$2s" --latency -s "$4" "$5")
  if echo "$out" | grep -q "Non-2xx"; then echo "wrk: errors for $1" >&2; echo "$out" >&2; fi
  echo "$(echo "$out" | awk '/Requests\/sec/ {print $2}')" \
    "$(to_us "$(echo "$out" | awk '$1=="50%" {print $2}')")" \
    "$(to_us "$(echo "$out" | awk '$1=="99%" {print $2}')")"
}

# A wrk latency (123.45us, 1.23ms or 1.02s) in microseconds.
to_us() {
  awk -v v="$1" 'BEGIN { n=v+0; if (v ~ /us$/) print n; else if (v ~ /ms$/) print n*1000; else print n*1000000 }'
}

# The median of the numbers on stdin, one per line.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
