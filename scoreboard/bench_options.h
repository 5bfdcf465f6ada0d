// The command line of `swapd bench` (everything after the word "bench"): which swapd to drive
// (--config FILE starts one, --url URL uses a running one), which models and duos, how many runs of
// what size, gates, the quiet-machine limits, the store and the outputs. Pure parsing, no side
// effects; thread safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "scoreboard/quiet_guard.h"

namespace swapd {

struct BenchOptions {
  std::string config_path;  // --config FILE: bench a swapd started from this config
  std::string url;          // --url URL (no trailing '/'); set to kDefaultUrl without --config
  // Models benchmarked alone; when neither models nor duos are given, every listed model.
  std::vector<std::string> models;
  std::vector<std::pair<std::string, std::string>> duos;   // --duo A,B (repeatable)
  std::vector<std::pair<std::string, std::string>> swaps;  // --swap A,B (repeatable)
  std::string compare_router;  // --compare-router PATH: the swaps through llama-server's router too
  int runs = 3;                // measured runs per model
  int prompt_tokens = 512;
  int gen_tokens = 128;
  bool json = false;                    // --json: the JSON document on stdout instead of the table
  std::string markdown_path;            // --markdown FILE: the table written there too
  std::vector<std::string> gate_files;  // --gates FILE (repeatable), added to the built-in gates
  bool gates = true;                    // false with --no-gates
  bool strict = false;                  // a busy machine refuses the run instead of marking it
  bool compare = false;                 // show the change against the previous stored run
  std::string store;                    // --store PATH or "none"; empty = the default store
  std::string api_key;                  // --api-key KEY, sent as a Bearer token
  std::string output_dir = "swapd-bench-out";  // failed gates' answers, own swapd's log
  NoiseLimits noise;                           // --noise-cpu, --noise-disk, --noise-cache
};

inline constexpr const char* kDefaultBenchUrl = "http://127.0.0.1:8080";

struct ParsedBenchOptions {
  BenchOptions options;
  bool help = false;  // --help / -h was given
  std::string error;  // non-empty: a one-line usage error (exit status 2)
};

// `args` are the words after "bench". Flags take one or two dashes, "--flag VALUE" or
// "--flag=VALUE"; model ids may come anywhere.
ParsedBenchOptions ParseBenchOptions(const std::vector<std::string>& args);

// The "swapd bench" part of `swapd --help`.
std::string BenchUsageText();

}  // namespace swapd
