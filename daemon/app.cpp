#include "daemon/app.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <thread>

#include "backends/process_backend.h"
#include "backends/router.h"
#include "config/loader.h"
#include "daemon/http_server.h"
#include "daemon/metrics.h"
#include "daemon/service_notify.h"

namespace swapd {
namespace {

void SetUpLogging(const std::string& level) {
  // Plain lines on stderr (journald adds its own timestamps); colours only on a terminal.
  auto logger = spdlog::stderr_color_mt("swapd");
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level.empty() ? "info" : level));
  spdlog::flush_on(spdlog::level::info);
}

void LogDiagnostics(const LoadResult& result) {
  for (const auto& d : result.diagnostics) {
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

}  // namespace

App::App(Options options) : options_(std::move(options)) {}

int App::Run() {
  // Block the signals swapd handles before any thread exists, so that every thread inherits the
  // mask and only the signal thread (sigtimedwait) receives them.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up must not kill the daemon

  SetUpLogging(options_.log_level);
  Result<ListenAddress> listen = ParseListenAddress(options_.listen);
  if (!listen.ok()) {
    spdlog::error("--listen {}: {}", options_.listen, listen.status().message());
    return 2;
  }

  LoadOptions load_options;
  load_options.config_path = options_.config_path;
  load_options.config_dir = options_.config_dir;
  load_options.strict = options_.strict;
  LoadResult loaded = LoadConfig(load_options);
  LogDiagnostics(loaded);
  if (!loaded.ok()) {
    spdlog::error("the configuration has errors; swapd did not start");
    return 1;
  }
  auto config = std::make_shared<const Config>(std::move(*loaded.config));
  if (options_.log_level.empty()) spdlog::set_level(spdlog::level::from_str(config->log_level));

  Router router(config, MakeProcessBackendFactory());
  Metrics metrics;
  HttpServer server(config, router, &metrics);
  if (Status bound = server.Bind(listen.value().host, listen.value().port); !bound.ok()) {
    spdlog::error("{}", bound.message());
    return 1;
  }
  spdlog::info("swapd listening on http://{}:{} with {} models", listen.value().host, server.port(),
               config->models.size());
  router.Preload();
  if (options_.watch_config) {
    spdlog::warn("--watch-config: reloading the configuration is not implemented yet; ignored");
  }

  std::atomic<bool> serving_done{false};
  std::thread signal_thread([&] {
    int stops = 0;
    while (!serving_done) {
      timespec timeout{0, 200 * 1000 * 1000};
      int sig = sigtimedwait(&signals, nullptr, &timeout);
      if (sig == SIGHUP) {
        spdlog::warn("SIGHUP: reloading the configuration is not supported yet; ignored");
        continue;
      }
      if (sig != SIGTERM && sig != SIGINT) continue;
      if (++stops > 1) {
        // A second signal: leave at once; the guardian kills every backend's process group.
        spdlog::warn("second stop signal: exiting now");
        _exit(1);
      }
      spdlog::info("{}: shutting down (a second signal exits at once)", strsignal(sig));
      NotifyStopping();
      server.SetShuttingDown();
      server.Stop();
    }
  });
  NotifyReady();
  server.Run();  // returns once Stop() was called; in-flight requests are finished by then
  router.Shutdown();
  serving_done = true;
  signal_thread.join();
  spdlog::info("swapd stopped");
  return 0;
}

}  // namespace swapd
