// How the daemon loads its configuration, and a reload: an edited configuration taken into
// service while swapd runs (SIGHUP, --watch-config, POST /api/config/reload). A reload is
// "validate, swap, notify": the whole new configuration is loaded and validated first; if it has
// any error, every diagnostic is logged with its position and nothing changes (the old
// configuration keeps serving); otherwise the LiveConfig makes it current and tells its
// subscribers (the Router restarts only the models whose process must change, see
// Router::Reconfigure). systemd hears RELOADING=1, then READY=1.
// Thread safe: concurrent reloads are serialized.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "config/diff.h"
#include "config/live_config.h"
#include "config/loader.h"
#include "daemon/cli.h"

namespace swapd {

// How the command line's options load the configuration: ${env.X} from the process environment,
// `auto` budgets from what this machine has.
LoadOptions LoadOptionsFor(const Options& options);

// Logs each diagnostic at its severity's level.
void LogDiagnostics(const std::vector<Diagnostic>& diagnostics);

class Reloader {
 public:
  // `live` is not owned and must outlive the Reloader.
  Reloader(LoadOptions options, LiveConfig& live);

  // `trigger` names the cause in the log ("SIGHUP", "config file changed", "POST
  // /api/config/reload").
  ReloadOutcome Reload(const std::string& trigger);

 private:
  const LoadOptions options_;
  LiveConfig& live_;
  std::mutex mu_;  // one reload at a time
};

}  // namespace swapd
