// The command line of swapd: `swapd [serve flags]`, `swapd check [config flags] [--json]`,
// `--version`, `--help`. llama-swap's single-dash spellings (-config, -listen, ...) are accepted.
// Pure parsing; no side effects.
#pragma once

#include <string>
#include <vector>

namespace swapd {

struct Options {
  enum class Command { kServe, kCheck, kVersion, kHelp };
  Command command = Command::kServe;
  std::string config_path;  // --config FILE (default "config.yaml" when no --config-dir)
  std::string config_dir;   // --config-dir DIR
  std::string listen = "127.0.0.1:8080";  // --listen HOST:PORT
  bool watch_config = false;              // --watch-config
  bool strict = false;                    // --strict
  std::string log_level;                  // --log-level LEVEL; empty = the config's logLevel
  bool json = false;                      // check --json
};

struct ParsedCommandLine {
  Options options;
  std::string error;  // non-empty: a one-line usage error; the caller exits 2
};

ParsedCommandLine ParseCommandLine(const std::vector<std::string>& args);  // args without argv[0]
std::string UsageText();
std::string VersionText();

}  // namespace swapd
