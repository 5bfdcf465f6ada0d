#include "daemon/app.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "backends/containment.h"
#include "backends/leftovers.h"
#include "config/loader.h"
#include "daemon/config_watcher.h"
#include "daemon/reload.h"
#include "daemon/service.h"
#include "daemon/service_notify.h"
#include "daemon/shutdown.h"
#include "observe/log_hub_sink.h"

namespace swapd {
namespace {

void SetUpLogging(const std::string& level, std::shared_ptr<LogHub> hub) {
  // Plain lines on stderr (journald adds its own timestamps); colours only on a terminal.
  auto logger = spdlog::stderr_color_mt("swapd");
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  spdlog::set_default_logger(logger);
  TeeDefaultLoggerInto(std::move(hub));  // GET /logs shows swapd's own lines too
  spdlog::set_level(spdlog::level::from_str(level.empty() ? "info" : level));
  spdlog::flush_on(spdlog::level::info);
}

// What marks this swapd's backends as its config's (SWAPD_CONFIG): the config file's absolute path,
// or the config directory's when there is no file.
std::string ConfigIdentity(const Options& options) {
  const std::string& given = options.config_path.empty() ? options.config_dir : options.config_path;
  std::error_code ec;
  std::filesystem::path path = std::filesystem::weakly_canonical(given, ec);
  if (ec) path = std::filesystem::absolute(given, ec);
  return ec ? given : path.string();
}

// How long a leftover of this config may take to stop on SIGTERM: the models' longest
// unloadTimeout, at most 10 s (swapd does not listen meanwhile).
std::chrono::milliseconds LeftoverGrace(const Config& config) {
  std::chrono::seconds grace{1};
  for (const auto& [id, model] : config.models) grace = std::max(grace, model.unload_timeout);
  return std::min<std::chrono::milliseconds>(grace, std::chrono::seconds(10));
}

}  // namespace

App::App(Options options) : options_(std::move(options)) {}

int App::Run() {
  BlockDaemonSignals();  // before any thread exists
  auto logs = std::make_shared<LogHub>();
  SetUpLogging(options_.log_level, logs);

  LoadResult loaded = LoadConfig(LoadOptionsFor(options_));
  LogDiagnostics(loaded.diagnostics);
  if (!loaded.ok()) {
    spdlog::error("the configuration has errors; swapd did not start");
    return 1;
  }
  auto config = std::make_shared<const Config>(std::move(*loaded.config));
  if (options_.log_level.empty()) spdlog::set_level(spdlog::level::from_str(config->log_level));
  containment::Configure(options_.containment, ConfigIdentity(options_));
  StopLeftovers(ConfigIdentity(options_), LeftoverGrace(*config));

  Result<std::unique_ptr<Service>> made = Service::Make(options_, config, logs);
  if (!made.ok()) {
    spdlog::error("{}; swapd did not start", made.status().message());
    return 1;
  }
  Service& service = *made.value();
  const ListenAddress& listen = options_.listen;
  if (Status bound = service.door().Bind(listen.host, listen.port); !bound.ok()) {
    spdlog::error("{}", bound.message());
    return 1;
  }
  std::unique_ptr<ConfigWatcher> watcher;
  if (options_.watch_config) {
    auto started = ConfigWatcher::Start(
        options_.config_path, options_.config_dir, std::chrono::milliseconds(300),
        [&service] { service.reloader().Reload("config file changed"); });
    if (!started.ok()) {
      spdlog::error("{}", started.status().message());
      return 1;
    }
    watcher = std::move(started).value();
  }
  spdlog::info("swapd listening on http://{}:{} with {} models", listen.host, service.door().port(),
               config->models.size());
  service.router().Preload();

  SignalHandler signals(service, options_.shutdown_timeout);
  NotifyReady();
  // WATCHDOG=1, and STATUS= with the running models, while under systemd.
  ServiceHeartbeat heartbeat([&service] { return ModelsStatusText(service.router().Snapshot()); });
  service.door().Run();  // returns once stopped and every in-flight request has ended
  watcher.reset();
  signals.Stop();
  heartbeat.Stop();
  made.value().reset();  // the backends stop first (Service's destructor)
  spdlog::info("swapd stopped");
  return 0;
}

}  // namespace swapd
