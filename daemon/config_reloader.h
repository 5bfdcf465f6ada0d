// ConfigReloader: applies an edited configuration to the running daemon (SIGHUP, --watch-config,
// POST /api/config/reload). The whole new configuration is loaded and validated first; if it has
// any error, every diagnostic is logged with its position and nothing changes: the old
// configuration keeps serving. Otherwise `apply` hands it to the Router (unchanged models keep
// their processes, see Router::Reconfigure) and to the HTTP server.
// Thread safe: concurrent reloads are serialized.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/diff.h"
#include "config/loader.h"

namespace swapd {

struct ReloadOutcome {
  bool ok = false;
  std::vector<Diagnostic> diagnostics;  // of the new configuration
  ConfigDiff diff;                      // what changed; empty when !ok
};

// The body of POST /api/config/reload: {"status": "ok", "added": [...], "removed": [...],
// "changed": [...], "unchanged": [...], "diagnostics": [...]}, or when the configuration has
// errors an OpenAI-shaped error whose "error" object also carries "diagnostics".
nlohmann::json ReloadOutcomeJson(const ReloadOutcome& outcome);

// Logs each diagnostic at its severity's level.
void LogDiagnostics(const std::vector<Diagnostic>& diagnostics);

class ConfigReloader {
 public:
  // Takes the new configuration into service; returns what changed.
  using Apply = std::function<ConfigDiff(std::shared_ptr<const Config>)>;

  ConfigReloader(LoadOptions options, Apply apply);

  // `trigger` names the cause in the log ("SIGHUP", "file change", "POST /api/config/reload").
  ReloadOutcome Reload(const std::string& trigger);

 private:
  const LoadOptions options_;
  const Apply apply_;
  std::mutex mu_;  // one reload at a time
};

}  // namespace swapd
