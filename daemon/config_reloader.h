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
#include "daemon/cli.h"

namespace swapd {

// How the command line's options load the configuration: ${env.X} from the process environment,
// `auto` budgets from what this machine has.
LoadOptions LoadOptionsFor(const Options& options);

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
