#include "daemon/reload.h"

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "base/text.h"
#include "daemon/service_notify.h"
#include "memory/footprint_monitor.h"

namespace swapd {
void LogDiagnostics(const std::vector<Diagnostic>& diagnostics) {
  for (const auto& d : diagnostics) {
    switch (d.severity) {
      case Diagnostic::Severity::kError:
        spdlog::error("{}", d.ToString());
        break;
      case Diagnostic::Severity::kWarning:
        spdlog::warn("{}", d.ToString());
        break;
      case Diagnostic::Severity::kHint:
        spdlog::info("{}", d.ToString());
        break;
    }
  }
}

LoadOptions LoadOptionsFor(const Options& options) {
  LoadOptions lo;
  lo.config_path = options.config_path;
  lo.config_dir = options.config_dir;
  lo.strict = options.strict;
  lo.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  lo.machine = ReadMachineMemory();
  return lo;
}

Reloader::Reloader(LoadOptions options, LiveConfig& live)
    : options_(std::move(options)), live_(live) {}

ReloadOutcome Reloader::Reload(const std::string& trigger) {
  std::lock_guard lock(mu_);
  NotifyReloading();
  spdlog::info("{}: reloading the configuration", trigger);
  LoadResult loaded = LoadConfig(options_);
  LogDiagnostics(loaded.diagnostics);
  ReloadOutcome outcome;
  outcome.diagnostics = std::move(loaded.diagnostics);
  if (!loaded.ok()) {
    spdlog::error("{}: the new configuration has errors; still serving the previous one", trigger);
    NotifyReloaded();
    return outcome;
  }
  auto next = std::make_shared<const Config>(std::move(*loaded.config));
  outcome.ok = true;
  outcome.diff = DiffConfigs(*live_.Current(), *next);
  live_.Replace(std::move(next));
  const ConfigDiff& d = outcome.diff;
  if (d.empty()) {
    spdlog::info("{}: no model changed; {} keep running as they are", trigger, d.unchanged.size());
  } else {
    spdlog::info("{}: added: {}; removed: {}; restarted when idle: {}; unchanged: {}", trigger,
                 Join(d.added, ", ", "none"), Join(d.removed, ", ", "none"),
                 Join(d.changed, ", ", "none"), d.unchanged.size());
  }
  NotifyReloaded();
  return outcome;
}

}  // namespace swapd
