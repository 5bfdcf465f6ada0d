// What a reload changes: compares two Configs model by model. A model is "changed" when what its
// running process depends on differs (argv, environment, proxy URL, readiness endpoint, stop
// command, group); such a model must be restarted to take the new definition. Every other field
// (ttl, concurrencyLimit, aliases, filters, ...) applies to the running process as it is.
// Pure: safe from any thread.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "config/config.h"

namespace swapd {

struct ConfigDiff {
  std::set<std::string> added;
  std::set<std::string> removed;
  std::set<std::string> changed;    // must restart
  std::set<std::string> unchanged;  // keeps its process (settings may differ)

  bool empty() const { return added.empty() && removed.empty() && changed.empty(); }
};

// True when a process started for `a` cannot serve as one started for `b`.
bool NeedsRestart(const ModelConfig& a, const ModelConfig& b);

ConfigDiff DiffConfigs(const Config& before, const Config& after);

// What one reload did: the new configuration's diagnostics and, when it had no error and was
// taken into service, what changed.
struct ReloadOutcome {
  bool ok = false;
  std::vector<Diagnostic> diagnostics;  // of the new configuration
  ConfigDiff diff;                      // what changed; empty when !ok
};

}  // namespace swapd
