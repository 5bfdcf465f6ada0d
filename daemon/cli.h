// The command line of swapd: `swapd [serve flags]`, `swapd check [config flags] [--json]`,
// `swapd bench [bench flags]` (parsed by scoreboard/bench_options.h), `--version`, `--help`.
// llama-swap's single-dash spellings (-config, -listen, ...) are accepted, as are `--flag=value`
// and `-flag=value` (Go's flag package rules, which llama-swap uses). Pure parsing; no side
// effects. Thread safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "backends/containment.h"
#include "base/status.h"
#include "http/upstream_connection.h"
#include "scoreboard/bench_options.h"

namespace swapd {

// A validated listen address. `host` is a host name, an IPv4 address or an IPv6 address (without
// the brackets of "[::1]:8080"); an empty host (":8080") is mapped to "0.0.0.0". Port 0 asks the
// system for a free port (integration tests use it).
struct ListenAddress {
  std::string host;
  int port = 0;
  std::string ToString() const;  // "host:port", "[v6]:port"
};
Result<ListenAddress> ParseListenAddress(std::string_view text);

struct Options {
  enum class Command { kServe, kCheck, kBench, kVersion, kHelp };
  Command command = Command::kServe;
  std::string config_path;  // --config FILE (default "config.yaml" when no --config-dir)
  std::string config_dir;   // --config-dir DIR
  // --listen HOST:PORT: ":8080" (llama-swap's "all interfaces") is 0.0.0.0:8080.
  ListenAddress listen{"127.0.0.1", 8080};
  bool watch_config = false;                  // --watch-config
  bool strict = false;                        // --strict
  std::string log_level;                      // --log-level LEVEL; empty = the config's logLevel
  std::chrono::seconds shutdown_timeout{30};  // --shutdown-timeout SECONDS
  // --upstream-idle-timeout SECONDS: a backend that sends nothing for this long (before its
  // first byte or between two) fails the request. Long: a CPU model may think for many minutes.
  std::chrono::seconds upstream_idle_timeout = kDefaultUpstreamIdleTimeout;
  std::chrono::seconds peer_check_interval{5};  // --peer-check-interval SECONDS
  // --containment auto|cgroup|marker: how backend process trees are contained
  // (backends/containment.h).
  ContainmentMode containment = ContainmentMode::kAuto;
  bool json = false;   // check --json
  BenchOptions bench;  // `swapd bench ...`: everything after "bench"
};

struct ParsedCommandLine {
  Options options;
  std::string error;  // non-empty: a one-line usage error; the caller exits 2
};

ParsedCommandLine ParseCommandLine(const std::vector<std::string>& args);  // args without argv[0]
std::string UsageText();
std::string VersionText();

}  // namespace swapd
