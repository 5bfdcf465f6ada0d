#!/usr/bin/env bash
# The images' HEALTHCHECK: asks swapd's /health on the address swapd was started with, so that
# `--listen 0.0.0.0:9090` (or any other) in the run command is followed without repeating it.
# The address is read from the running swapd's command line in /proc, with swapd's own rules:
# --listen or -listen, "HOST:PORT" or "=HOST:PORT", default 127.0.0.1:8080; ":PORT" and
# 0.0.0.0 mean every interface, so loopback is asked; [::] likewise asks [::1].
# Exit 0 healthy, 1 not (the HEALTHCHECK convention).
set -uo pipefail

swapd_pid=""
for comm in /proc/[0-9]*/comm; do
  if [ "$(cat "$comm" 2>/dev/null)" = swapd ]; then
    pid=${comm#/proc/}
    pid=${pid%/comm}
    # The lowest pid is the daemon; its guardian (a fork, same command line) and a
    # `swapd check` run beside it come later.
    if [ -z "$swapd_pid" ] || [ "$pid" -lt "$swapd_pid" ]; then swapd_pid=$pid; fi
  fi
done
if [ -z "$swapd_pid" ]; then
  echo "healthcheck: no swapd process" >&2
  exit 1
fi

listen="127.0.0.1:8080"
mapfile -d '' args < "/proc/$swapd_pid/cmdline"
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --listen | -listen) listen="${args[i + 1]:-}" ;;
    --listen=* | -listen=*) listen="${args[i]#*=}" ;;
  esac
done

if [[ "$listen" == \[* ]]; then
  host="${listen%%]*}"
  host="${host#[}"
  port="${listen##*]:}"
else
  host="${listen%:*}"
  port="${listen##*:}"
fi
case "$host" in
  "" | 0.0.0.0) host="127.0.0.1" ;;
  :: | 0:0:0:0:0:0:0:0) host="[::1]" ;;
  *:*) host="[$host]" ;;
esac
if [ "$port" = 0 ]; then
  echo "healthcheck: swapd listens on a port the system picked (--listen $listen); give it one" >&2
  exit 1
fi

# -g: brackets are an IPv6 address, not a curl URL glob.
exec curl -fsSg --max-time 4 -o /dev/null "http://$host:$port/health"
