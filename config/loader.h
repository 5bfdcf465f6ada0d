// Loading a Config from YAML: parsing, macro expansion, command-line splitting, validation and the
// merging of several files. Reports every problem with its file:line:col, not only the first.
// Pure apart from reading the named files: no processes, no sockets. Thread compatible.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace swapd {

struct LoadOptions {
  std::string config_path;  // --config; may be empty when config_dir is set
  std::string config_dir;   // --config-dir: every *.yaml / *.yml in it, sorted, merged after
  bool strict = false;      // unknown keys are errors instead of warnings
  // Reads an environment variable for ${env.NAME}; nullopt = unset. Defaults to getenv.
  std::function<std::optional<std::string>(const std::string&)> getenv;
  // What the machine has, for `memory: {ram: auto, gpus: auto}`; unset: `auto` sets no budget
  // (with a warning).
  std::optional<MachineMemory> machine;
};

struct LoadResult {
  std::optional<Config> config;         // set iff there is no error
  std::vector<Diagnostic> diagnostics;  // errors, warnings and hints, in file order
  bool ok() const { return config.has_value(); }
  std::string ErrorText() const;  // every diagnostic, one per line
};

// Used by the daemon: reads the files named by `options`.
LoadResult LoadConfig(const LoadOptions& options);

// Used by tests: parses one YAML text as if it were the file `filename`.
LoadResult ParseConfig(std::string_view yaml, std::string_view filename = "config.yaml",
                       const LoadOptions& options = {});

}  // namespace swapd
