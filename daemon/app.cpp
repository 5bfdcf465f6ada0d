#include "daemon/app.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "api/service_routes.h"
#include "api/ui_routes.h"
#include "backends/process_backend.h"
#include "backends/router.h"
#include "check/check_command.h"
#include "config/loader.h"
#include "daemon/config_reloader.h"
#include "daemon/config_watcher.h"
#include "daemon/service_notify.h"
#include "frontdoor/front_door.h"
#include "memory/footprint_monitor.h"
#include "memory/page_prefetch.h"
#include "observe/activity_events.h"
#include "observe/event_feed.h"
#include "observe/event_hub.h"
#include "observe/log_events.h"
#include "observe/log_hub.h"
#include "observe/log_hub_sink.h"
#include "observe/metrics.h"
#include "scoreboard/bench_store.h"
#include "store/activity_log.h"

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

// What the Router's events reach: the metrics, the footprint monitor (a model just ready is
// measured while it is fresh) and the /api/events feed.
RouterEvents RouterEventsFor(Metrics& metrics, FootprintMonitor& memory, EventFeed& feed) {
  RouterEvents events = metrics.RouterHooks();
  events.on_start = [&feed, counted = events.on_start](const std::string& model) {
    if (counted) counted(model);
    feed.LoadStarted(model);
  };
  events.on_start_finished = [&memory, &feed, counted = events.on_start_finished](
                                 const std::string& model, bool ok,
                                 std::chrono::steady_clock::duration took) {
    if (counted) counted(model, ok, took);
    if (ok) memory.SampleSoon();
    feed.LoadFinished(model, ok, took);
  };
  events.on_crash = [&feed, counted = events.on_crash](const std::string& model) {
    if (counted) counted(model);
    feed.Poke();
  };
  events.on_stop = [&feed, counted = events.on_stop](const std::string& model, const char* reason) {
    if (counted) counted(model, reason);
    feed.Stopping(model, reason);
  };
  return events;
}

// The bench store at store.path; null (the scoreboard empty) without a store or when it cannot
// be opened (logged).
std::unique_ptr<BenchStore> OpenBenchStore(const std::string& path) {
  if (path.empty()) return nullptr;
  auto opened = BenchStore::Open(path);
  if (opened.ok()) return std::move(opened).value();
  spdlog::warn("{}; GET /api/bench shows no results", opened.status().message());
  return nullptr;
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
  signal(SIGXFSZ, SIG_IGN);  // past a file-size limit a write fails (and is reported), no more

  auto log_hub = std::make_shared<LogHub>();
  SetUpLogging(options_.log_level, log_hub);
  Result<ListenAddress> listen = ParseListenAddress(options_.listen);
  if (!listen.ok()) {
    spdlog::error("--listen {}: {}", options_.listen, listen.status().message());
    return 2;
  }

  const LoadOptions load_options = LoadOptionsFor(options_);
  LoadResult loaded = LoadConfig(load_options);
  LogDiagnostics(loaded.diagnostics);
  if (!loaded.ok()) {
    spdlog::error("the configuration has errors; swapd did not start");
    return 1;
  }
  auto config = std::make_shared<const Config>(std::move(*loaded.config));
  if (options_.log_level.empty()) spdlog::set_level(spdlog::level::from_str(config->log_level));

  Metrics metrics;  // before the Router: its events reach the metrics until it is destroyed
  auto slot_store = std::make_shared<SlotStore>(SlotStore::Settings::From(*config));
  slot_store->SetObserver([&metrics](const SlotEvent& event) { metrics.RecordSlotEvent(event); });
  ProcessBackendOptions backend_options;
  backend_options.on_output_line = [log_hub](const std::string& model_id, std::string_view line) {
    log_hub->Append(model_id, line);
  };
  backend_options.slot_store = slot_store;
  backend_options.prefetch = PrefetchModelFiles;
  Router router(config, MakeProcessBackendFactory(std::move(backend_options)));
  std::unique_ptr<HistoryStore> store;
  if (!config->store_path.empty()) {
    auto opened = HistoryStore::Open(config->store_path);
    if (opened.ok()) {
      store = std::move(opened).value();
    } else {
      spdlog::warn("{}; swapd runs without history (measured footprints are not kept)",
                   opened.status().message());
    }
  }
  // Measures the running models; stops before the Router.
  FootprintMonitor memory(router, config, std::move(store));
  FrontDoorSettings server_settings;
  server_settings.upstream_idle_timeout = options_.upstream_idle_timeout;
  server_settings.peer_check_interval = options_.peer_check_interval;
  auto events = std::make_shared<EventHub>();  // GET /api/events
  LogEvents log_events(*log_hub, *events);     // its logData; outlives the server
  // The request history (GET /api/metrics/activity); written after the server stopped.
  std::unique_ptr<ActivityStore> activity_store = OpenActivityStore(config->store_path);
  if (!activity_store) return 1;
  // Recent requests' captures (GET /api/captures/{id}), filed under their rows' ids by the log.
  CaptureStore captures(CaptureBufferBytes(config->capture_buffer_mb));
  ActivityEvents activity_events(*events);  // outlives the log, which tells it
  ActivityLog activity(
      std::move(activity_store), [&activity_events](int64_t id) { activity_events.Recorded(id); },
      &captures);
  // `swapd bench`'s results (GET /api/bench); the route reads it, so it outlives the server.
  std::unique_ptr<BenchStore> bench_store = OpenBenchStore(config->store_path);
  FrontDoorEvents server_events;
  server_events.on_proxied = [&metrics, &memory, &activity](const ProxyRecord& record) {
    metrics.RecordRequest(record);
    activity.Record(ActivityEntryOf(record), record.capture);
    memory.SampleSoon();  // a request may have grown the model's KV cache
  };
  server_events.on_refused = [&metrics, &activity](const ProxyRecord& record) {
    metrics.CountRequest(record.model_id, record.route, record.status);
    activity.Record(ActivityEntryOf(record), record.capture);
  };
  FrontDoor server(config, router, server_events, server_settings);
  // Load times, for the expected time of the next load (also after a restart); kept by the feed.
  std::unique_ptr<LoadTimeStore> load_times = OpenLoadTimeStore(config->store_path);
  // The /api/events feed watches the Router and the profile; stops before the Router.
  EventFeed feed(router, server, *events, load_times.get());
  events->SetOnSubscribe([&feed] { feed.Poke(); });
  router.SetEvents(RouterEventsFor(metrics, memory, feed));
  ConfigReloader reloader(load_options, [&](std::shared_ptr<const Config> next) {
    slot_store->Configure(SlotStore::Settings::From(*next));
    ConfigDiff diff = router.Reconfigure(next);
    memory.SetConfig(next);
    captures.SetCapacity(CaptureBufferBytes(next->capture_buffer_mb));
    if (options_.log_level.empty()) spdlog::set_level(spdlog::level::from_str(next->log_level));
    server.SetConfig(std::move(next));
    return diff;
  });
  auto reload = [&](const std::string& trigger) {
    NotifyReloading();
    ReloadOutcome outcome = reloader.Reload(trigger);
    NotifyReloaded();
    return outcome;
  };
  AddServiceRoutes(
      server, router, metrics, memory,
      [&] {
        return EventMetricsText(*events) + LogEventMetricsText(log_events) +
               ActivityMetricsText(activity);
      },
      [&] { return reload("POST /api/config/reload"); });
  AddLogRoutes(server, log_hub);
  AddEventRoutes(server, events, log_hub, log_events);
  AddModelSseRoute(server, events);
  AddActivityRoutes(server, activity, captures);
  AddCaptureRoutes(server, captures);
  AddBenchRoutes(server, bench_store.get());
  AddMemoryRoutes(server, memory);
  AddUiRoutes(server);
  AddGroupRoutes(server, router);
  if (Status bound = server.Bind(listen.value().host, listen.value().port); !bound.ok()) {
    spdlog::error("{}", bound.message());
    return 1;
  }
  std::unique_ptr<ConfigWatcher> watcher;
  if (options_.watch_config) {
    auto started = ConfigWatcher::Start(options_.config_path, options_.config_dir,
                                        std::chrono::milliseconds(300),
                                        [&] { reload("config file changed"); });
    if (!started.ok()) {
      spdlog::error("{}", started.status().message());
      return 1;
    }
    watcher = std::move(started).value();
  }
  spdlog::info("swapd listening on http://{}:{} with {} models", listen.value().host, server.port(),
               config->models.size());
  router.Preload();

  // Shutdown: new requests get 503 at once; the server stops (which would cut streams) only when
  // no request is in flight or queued, or when --shutdown-timeout has passed (then the backends
  // are stopped first, so that streams end with an error event rather than silently).
  auto busy = [&router] {
    int n = 0;
    for (const auto& m : router.Snapshot()) n += m.in_flight + m.queued;
    return n;
  };
  std::atomic<bool> serving_done{false};
  std::thread signal_thread([&] {
    using Clock = std::chrono::steady_clock;
    int stops = 0;
    Clock::time_point drain_deadline = Clock::time_point::max();  // max() = not stopping
    bool stopped = false;
    while (!serving_done) {
      timespec timeout{0, 50 * 1000 * 1000};
      int sig = sigtimedwait(&signals, nullptr, &timeout);
      if (stops > 0 && !stopped) {
        if (Clock::now() >= drain_deadline) {
          spdlog::warn(
              "{} requests still in flight {} s after the stop signal: stopping the "
              "backends",
              busy(), options_.shutdown_timeout.count());
          router.Shutdown();
        }
        if (Clock::now() >= drain_deadline || busy() == 0) {
          stopped = true;
          server.Stop();
        }
      }
      if (sig == SIGHUP) {
        if (stops == 0) reload("SIGHUP");
        continue;
      }
      if (sig != SIGTERM && sig != SIGINT) continue;
      if (++stops > 1) {
        // A second signal: leave at once; the guardian kills every backend's process group.
        spdlog::warn("second stop signal: exiting now");
        _exit(1);
      }
      // Refusing first, so that what the log line says holds once it is written.
      server.SetShuttingDown();
      events->Close();   // the /api/events and /models/sse streams end
      log_hub->Close();  // and the /logs/stream ones
      spdlog::info(
          "{}: shutting down: new requests get 503; in-flight ones may finish for {} s "
          "(a second signal exits at once)",
          strsignal(sig), options_.shutdown_timeout.count());
      NotifyStopping();
      drain_deadline = Clock::now() + options_.shutdown_timeout;
    }
  });
  NotifyReady();
  // WATCHDOG=1 and STATUS= with the running models while under systemd; stops before the Router.
  ServiceHeartbeat heartbeat([&router] { return ModelsStatusText(router.Snapshot()); });
  server.Run();  // returns once Stop() was called and every in-flight request has ended
  watcher.reset();
  serving_done = true;
  signal_thread.join();
  heartbeat.Stop();
  router.Shutdown();
  spdlog::info("swapd stopped");
  return 0;
}

}  // namespace swapd
