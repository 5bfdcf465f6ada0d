#!/usr/bin/env bash
# Builds docker/Dockerfile.debian with podman and checks the image end to end: /health, a chat
# through the demo backend inside the container, the HEALTHCHECK (also under another --listen), a
# SIGTERM stop that lets a stream finish, exits 0 and leaves no process, and the image's size.
# The command to run before a release (not in CI: the build alone takes 10+ minutes on 2 cores).
#
# Needs root (re-runs itself with sudo). Idempotent: installs podman, runc and debootstrap if
# missing, makes the debian:12 base with debootstrap unless podman has one (no registry is
# needed), and keeps podman's settings in its own containers.conf (the system's is not touched).
#   IMAGE_CHECK_IMAGE  the tag to build (default swapd:debian)
#   IMAGE_CHECK_DIR    its work directory (default /var/tmp/swapd-image-check)
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  exec sudo --preserve-env=IMAGE_CHECK_IMAGE,IMAGE_CHECK_DIR "$0" "$@"
fi
cd "$(dirname "$0")/.."

image="${IMAGE_CHECK_IMAGE:-swapd:debian}"
work="${IMAGE_CHECK_DIR:-/var/tmp/swapd-image-check}"
prefix=swapd-image-check
mkdir -p "$work"

say() { echo "image-check: $*"; }
fail() {
  echo "image-check: FAIL: $*" >&2
  exit 1
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2fs", b - a }'; }

# ---- tools ----
missing=()
for p in podman runc debootstrap curl jq; do command -v "$p" >/dev/null || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null
fi

# runc (crun is not in Debian 12's podman setup here), no default ulimits (a container may not
# raise them above the host's), cgroupfs and a file event log (no systemd needed).
export CONTAINERS_CONF="$work/containers.conf"
cat >"$CONTAINERS_CONF" <<'EOF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
# Without systemd podman cannot schedule the periodic health check (`podman healthcheck run` runs
# it, below) and says so on every run, stop and rm: those lines are kept out of the output.
pm() { podman --runtime runc "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }
if [ ! -S /run/systemd/private ]; then
  say "no systemd: podman runs the HEALTHCHECK only when asked (podman healthcheck run)"
fi

cleanup() {
  pm rm -f -i -t 0 "$prefix-1" "$prefix-2" >/dev/null 2>&1 || true
  if [ -n "${stream_pid:-}" ]; then kill "$stream_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
cleanup

# ---- the base: debian:12 made locally, as the official image is (minbase, bookworm sources) ----
if pm image exists debian:12; then
  say "base debian:12 present ($(pm image inspect --format '{{.Id}}' debian:12 | cut -c1-12))"
else
  t=$(now)
  rootfs="$work/rootfs-bookworm"
  rm -rf "$rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian \
    >"$work/debootstrap.log" 2>&1 ||
    fail "debootstrap (see $work/debootstrap.log)"
  rm -f "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . |
    pm import --change 'CMD ["bash"]' - debian:12 >/dev/null 2>>"$work/debootstrap.log"
  rm -rf "$rootfs"
  say "base debian:12 bootstrapped in $(since "$t")"
fi

# ---- build ----
t=$(now)
say "building $image (log: $work/build.log)"
if ! pm build --runtime runc --format docker --isolation chroot -f docker/Dockerfile.debian \
  -t "$image" . >"$work/build.log" 2>&1; then
  tail -n 30 "$work/build.log" >&2
  fail "build"
fi
build_time=$(since "$t")
size=$(pm image inspect --format '{{.Size}}' "$image")
say "built $image in $build_time: $((size / 1000000)) MB ($size bytes)"

# ---- helpers on a running container ----
host_port() { pm port "$1" "$2" | head -n 1 | sed 's/.*://'; }

# Waits up to 30 s for /health on the published port; prints the time since t (the run).
wait_health() {
  local name=$1 port=$2 t=$3
  for _ in $(seq 300); do
    if curl -fsS -m 1 -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null; then
      since "$t"
      return 0
    fi
    [ "$(pm inspect --format '{{.State.Running}}' "$name")" = true ] || break
    sleep 0.1
  done
  pm logs "$name" >&2 || true
  fail "$name: no /health on 127.0.0.1:$port after $(since "$t")"
}

# Runs the image's HEALTHCHECK now and prints the status podman then reports.
health_status() {
  local name=$1 status
  pm healthcheck run "$name" >/dev/null || fail "$name: podman healthcheck run failed"
  status=$(pm inspect --format '{{.State.Health.Status}}' "$name" 2>/dev/null) ||
    status=$(pm inspect --format '{{.State.Healthcheck.Status}}' "$name")
  [ "$status" = healthy ] || fail "$name: health status \"$status\""
  echo "$status"
}

# The host pids of the container's processes, and their command lines.
processes() { pm top "$1" hpid args | tail -n +2; }

# podman stop -t 30 (SIGTERM, then 30 s), then: exit code 0, none of `pids` left.
stop_clean() {
  local name=$1 pids=$2 t code left=()
  t=$(now)
  pm stop -t 30 "$name" >/dev/null
  stop_time=$(since "$t")
  code=$(pm inspect --format '{{.State.ExitCode}}' "$name")
  [ "$code" = 0 ] || fail "$name: exit code $code after SIGTERM"
  for p in $pids; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
  [ ${#left[@]} -eq 0 ] || fail "$name: processes left after stop: ${left[*]}"
  [ "$(pm inspect --format '{{.State.Status}}' "$name")" = exited ] || fail "$name: not exited"
}

# ---- run 1: the default command (the demo on 0.0.0.0:8080 inside) ----
c1="$prefix-1"
t=$(now)
pm run -d --name "$c1" -p 127.0.0.1::8080 "$image" >/dev/null
port=$(host_port "$c1" 8080)
up=$(wait_health "$c1" "$port" "$t")
say "run 1: $c1 on 127.0.0.1:$port -> 8080, /health $up after podman run"

t=$(now)
answer=$(curl -fsS -m 60 "http://127.0.0.1:$port/v1/chat/completions" \
  -H 'Content-Type: application/json' -d '{"model":"coder","max_tokens":12,
      "messages":[{"role":"user","content":"hello from image-check"}]}') ||
  fail "chat with coder"
content=$(jq -er '.choices[0].message.content | select(type == "string" and length > 0)' \
  <<<"$answer") ||
  fail "chat: no answer in $answer"
say "chat: model coder -> $(jq -r .model <<<"$answer") answered \"$content\" in $(since "$t")" \
  "(cold: includes its 1.5 s load)"

health=$(health_status "$c1")
say "health: $health (podman healthcheck run: the image's check, on --listen 0.0.0.0:8080)"

procs=$(processes "$c1")
grep -q '[s]wapd --config' <<<"$procs" || fail "no swapd in podman top: $procs"
grep -q '[f]ake-llama-server' <<<"$procs" || fail "no fake-llama-server in podman top: $procs"
say "processes before stop (host pid, command: tini, swapd, swapd's guardian, the demo backend):"
while read -r line; do say "  ${line:0:120}"; done <<<"$procs"

# Stop with a stream in flight: swapd lets it finish, then stops the backend and exits.
# Emptied here, not by curl's redirection, which runs in the background child: the check below
# could read the last run's file before the child truncates it.
: >"$work/stream.txt"
curl -sSN -m 60 "http://127.0.0.1:$port/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"model":"coder","stream":true,"max_tokens":30,
       "messages":[{"role":"user","content":"stream"}]}' \
  >"$work/stream.txt" 2>&1 &
stream_pid=$!
for _ in $(seq 100); do
  grep -q '"content":"' "$work/stream.txt" && break
  sleep 0.1
done
if ! grep -q '"content":"' "$work/stream.txt"; then
  pm logs --tail 30 "$c1" >&2 || true
  fail "no token of the stream within 10 s: $(cat "$work/stream.txt")"
fi
stop_clean "$c1" "$(awk '{print $1}' <<<"$procs")"
wait "$stream_pid" || true
stream_pid=""
grep -q '^data: \[DONE\]' "$work/stream.txt" ||
  fail "the stream in flight did not finish: $(tail -n 3 "$work/stream.txt")"
say "stop: podman stop -t 30 (SIGTERM) with a stream in flight took $stop_time;" \
  "the stream finished ([DONE]), exit code 0, no process left"

# ---- run 2: another --listen; the HEALTHCHECK must follow it ----
c2="$prefix-2"
t=$(now)
pm run -d --name "$c2" -p 127.0.0.1::9090 "$image" \
  --config /etc/swapd/config.yaml --listen 0.0.0.0:9090 >/dev/null
port=$(host_port "$c2" 9090)
up=$(wait_health "$c2" "$port" "$t")
say "run 2: $c2 with --listen 0.0.0.0:9090 on 127.0.0.1:$port -> 9090, /health $up after podman run"
# A check fixed to 8080 would fail here.
! pm exec "$c2" curl -fsS -m 2 -o /dev/null http://127.0.0.1:8080/health 2>/dev/null ||
  fail "$c2: something answers on 8080"
health=$(health_status "$c2")
say "health: $health (the check followed --listen to 9090; nothing answers on 8080 inside)"
procs=$(processes "$c2")
stop_clean "$c2" "$(awk '{print $1}' <<<"$procs")"
say "stop: podman stop -t 30 (SIGTERM, idle) took $stop_time; exit code 0, no process left"

pm rm "$c1" "$c2" >/dev/null
say "containers removed; podman ps -a shows $(pm ps -a --filter "name=$prefix" -q | wc -l) of them"
say "OK: image $image, $((size / 1000000)) MB, build $build_time"
