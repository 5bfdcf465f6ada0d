// `swapd bench`: wires the scoreboard (scoreboard/) to the command line, to a swapd (one it starts
// from --config, or the one at --url), to the bench store and to the outputs. Progress and
// problems go to `err`; the scoreboard (or the JSON document of --json) to `out`.
// Exit status: 0 every row measured and every gate passed; 1 a row failed, a gate failed, or the
// bench could not run; 2 usage error (also a bad gate file); 3 --strict refused a busy machine.
// Called once from main's thread (it may start a swapd whose parent-death signal is tied to it).
#pragma once

#include <ostream>
#include <string>

#include "scoreboard/bench_options.h"

namespace swapd {

int RunBench(const BenchOptions& options, std::ostream& out, std::ostream& err);

// True when the URL's host is this machine (127.x, localhost, [::1]).
bool IsLoopbackUrl(const std::string& url);

}  // namespace swapd
