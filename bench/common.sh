# Shell helpers the bench/ scripts share; they `source bench/common.sh` from the repository root.

# A loopback TCP port that was free a moment ago (the OS picked it).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits up to 10 s for a swapd (or backend) on 127.0.0.1:PORT to answer GET /health.
wait_for_health() {
  for _ in $(seq 100); do
    curl -fs "127.0.0.1:$1/health" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 0  # the next request says what is wrong
}
