#!/usr/bin/env bash
# ThreadSanitizer job (CI): builds everything with -fsanitize=thread into build-tsan/ and runs the
# tests of swapd's threaded parts, picked by Catch2 tag:
#   [scheduler] [router]  the swap scheduler and the Router that runs it
#   [backend]             backend processes: launcher, guardian, readiness, output monitor
#   [proxy] [front]       the streaming proxy and the HTTP front door (real swapd + fake backends)
#   [http1]               the front door's HTTP/1.1 server: its thread pool over one epoll set
#   [reload]              reload while requests are in flight
#   [memory]              the memory meters and FootprintMonitor beside the Router (real swapd)
#   [events]              /api/events: its hub, the feed's thread, the log listener (real swapd)
#   [activity]            the request history's writer thread (real swapd)
# TSAN_TAGS="[scheduler]" runs other tags. Every process (swapd_tests and the swapd and
# fake-llama-server it starts, all built with TSan) writes its reports to build-tsan/tsan-logs/;
# any report, or a failed test, fails the job.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=build-tsan
tags="${TSAN_TAGS:-[scheduler],[router],[backend],[proxy],[front],[reload],[http1],[memory],[events],[activity],[captures],[loadprogress],[pacer],[scoreboard]}"

started=$SECONDS
BUILD_DIR="$build_dir" SWAPD_SANITIZE=thread BUILD_TARGETS=swapd_tests scripts/build.sh >/dev/null
built=$SECONDS

logs="$PWD/$build_dir/tsan-logs"
rm -rf "$logs"
mkdir -p "$logs"
# Not swapd's races: Debian's libcpp-httplib is a prebuilt, uninstrumented library. TSan sees only
# the calls it makes to intercepted functions (malloc, memcmp, ...) and not its own synchronization
# (e.g. the guard of a function-local static it initializes), which yields reports with no swapd
# code in them. called_from_lib ignores the intercepted calls made from inside the library (swapd
# code it calls back is still checked); the regex lines cover the std::regex templates it
# instantiates in our binaries (its static regexes), and libstdc++'s known benign race in
# std::ctype<char>::narrow's cache (GCC PR 77704).
supp="$PWD/$build_dir/tsan.supp"
cat >"$supp" <<'EOF'
called_from_lib:libcpp-httplib.so
race_top:std::ctype<char>::narrow
race:std::__detail::_BracketMatcher
EOF
export TSAN_OPTIONS="log_path=$logs/tsan suppressions=$supp second_deadlock_stack=1 ${TSAN_OPTIONS:-}"

status=0
"$build_dir/bin/swapd_tests" "$tags" || status=$?
reports=("$logs"/tsan.*)
if [ -e "${reports[0]}" ]; then
  cat "${reports[@]}" >&2
  echo "tsan: reports from ${#reports[@]} process(es) above (files in $logs)" >&2
  status=1
fi
echo "tsan: $tags: build $((built - started))s, total $((SECONDS - started))s"
exit "$status"
