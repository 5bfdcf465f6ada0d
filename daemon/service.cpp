#include "daemon/service.h"

#include <spdlog/spdlog.h>

#include "api/activity_routes.h"
#include "api/bench_routes.h"
#include "api/capture_routes.h"
#include "api/event_routes.h"
#include "api/group_routes.h"
#include "api/hardware_routes.h"
#include "api/inflight_routes.h"
#include "api/load_routes.h"
#include "api/log_routes.h"
#include "api/memory_routes.h"
#include "api/metrics_routes.h"
#include "api/model_routes.h"
#include "api/model_sse_routes.h"
#include "api/peer_routes.h"
#include "api/profile_routes.h"
#include "api/reload_routes.h"
#include "api/status_routes.h"
#include "api/ui_routes.h"
#include "backends/process_backend.h"
#include "frontdoor/ollama_routes.h"
#include "memory/history_store.h"
#include "memory/page_prefetch.h"

namespace swapd {
namespace {

// Requests that stopped this long ago have left free memory behind: it goes back to the system.
constexpr std::chrono::seconds kTrimAfter{2};

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

// How every model's backend runs: its output into the log hub, the shared slot cache, prefetch.
BackendFactory BackendsFor(std::shared_ptr<LogHub> logs, std::shared_ptr<SlotStore> slots) {
  ProcessBackendOptions options;
  options.on_output_line = [logs](const std::string& model_id, std::string_view line) {
    logs->Append(model_id, line);
  };
  options.slot_store = std::move(slots);
  options.prefetch = PrefetchModelFiles;
  return MakeProcessBackendFactory(std::move(options));
}

// The footprint history at store.path; null (footprints not kept) without a store or when it
// cannot be opened (logged).
std::unique_ptr<HistoryStore> OpenHistoryStore(const std::string& path) {
  if (path.empty()) return nullptr;
  auto opened = HistoryStore::Open(path);
  if (opened.ok()) return std::move(opened).value();
  spdlog::warn("{}; swapd runs without history (measured footprints are not kept)",
               opened.status().message());
  return nullptr;
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

FrontDoorSettings DoorSettings(const Options& options) {
  FrontDoorSettings settings;
  settings.dispatch.upstream_idle_timeout = options.upstream_idle_timeout;
  settings.peer_check_interval = options.peer_check_interval;
  return settings;
}

}  // namespace

struct Service::Stores {
  std::unique_ptr<HistoryStore> history;
  std::unique_ptr<ActivityStore> activity;
  std::unique_ptr<BenchStore> bench;
  std::unique_ptr<LoadTimeStore> load_times;
};

Result<std::unique_ptr<Service>> Service::Make(const Options& options,
                                               std::shared_ptr<const Config> config,
                                               std::shared_ptr<LogHub> logs) {
  Stores stores;
  stores.activity = OpenActivityStore(config->store_path);
  if (!stores.activity) {
    return Status::Error(ErrorCode::kInternal, "the request history cannot be kept anywhere");
  }
  stores.history = OpenHistoryStore(config->store_path);
  stores.bench = OpenBenchStore(config->store_path);
  stores.load_times = OpenLoadTimeStore(config->store_path);
  return std::unique_ptr<Service>(
      new Service(options, std::move(config), std::move(logs), std::move(stores)));
}

Service::Service(const Options& options, std::shared_ptr<const Config> config,
                 std::shared_ptr<LogHub> logs, Stores stores)
    : logs_(std::move(logs)),
      config_sets_log_level_(options.log_level.empty()),
      live_(config),
      slot_store_(std::make_shared<SlotStore>(SlotStore::Settings::From(*config))),
      router_(config, BackendsFor(logs_, slot_store_)),
      memory_(router_, live_, std::move(stores.history)),
      performance_(config->performance, [this] { return memory_.View().gpus; }),
      events_(std::make_shared<EventHub>()),
      log_events_(*logs_, *events_),
      captures_(CaptureBufferBytes(config->capture_buffer_mb)),
      activity_events_(*events_),
      activity_(
          std::move(stores.activity), [this](int64_t id) { activity_events_.Recorded(id); },
          &captures_),
      bench_store_(std::move(stores.bench)),
      door_(
          live_, router_,
          FrontDoorEvents{[this](const ProxyRecord& record) {
                            requests_.fetch_add(1, std::memory_order_relaxed);
                            metrics_.RecordRequest(record);
                            if (record.activity) {
                              activity_.Record(ActivityEntryOf(record), record.capture);
                            }
                            memory_.SampleSoon();  // a request may have grown the model's KV cache
                          },
                          [this](const ProxyRecord& record) {
                            requests_.fetch_add(1, std::memory_order_relaxed);
                            metrics_.CountRequest(record.model_id, record.route, record.status);
                            if (record.activity) {
                              activity_.Record(ActivityEntryOf(record), record.capture);
                            }
                          }},
          DoorSettings(options)),
      load_times_(std::move(stores.load_times)),
      feed_(router_, door_.routing(), *events_, load_times_.get()),
      reloader_(LoadOptionsFor(options), live_),
      trim_([this] { return requests_.load(std::memory_order_relaxed); }, kTrimAfter,
            [](uint64_t before, uint64_t after) {
              spdlog::debug("the requests stopped: resident memory {} -> {} MiB (malloc_trim)",
                            before >> 20, after >> 20);
            }) {
  slot_store_->SetObserver([this](const SlotEvent& event) { metrics_.RecordSlotEvent(event); });
  events_->SetOnSubscribe([this] { feed_.Poke(); });
  router_.SetEvents(RouterEventsFor(metrics_, memory_, feed_));
  live_.Subscribe([this](const std::shared_ptr<const Config>& next) {
    slot_store_->Configure(SlotStore::Settings::From(*next));
    router_.Reconfigure(next);
    memory_.ConfigChanged(*next);
    performance_.Configure(next->performance);
    captures_.SetCapacity(CaptureBufferBytes(next->capture_buffer_mb));
    if (config_sets_log_level_) spdlog::set_level(spdlog::level::from_str(next->log_level));
    door_.ConfigChanged(*next);
  });
  AddApiRoutes();
}

Service::~Service() {
  // Every backend stops while what their events reach is still there.
  router_.Shutdown();
}

void Service::AddApiRoutes() {
  AddModelRoutes(door_, router_);
  AddLoadRoutes(door_, router_);
  AddProfileRoutes(door_, [this] { feed_.Poke(); });
  AddPeerRoutes(door_);
  AddInflightRoutes(door_);
  AddMetricsRoute(door_, router_, metrics_, memory_, [this] {
    return EventMetricsText(*events_) + LogEventMetricsText(log_events_) +
           ActivityMetricsText(activity_);
  });
  AddStatusRoutes(door_, router_, metrics_, memory_);
  AddReloadRoute(door_, [this] { return reloader_.Reload("POST /api/config/reload"); });
  AddLogRoutes(door_, logs_);
  AddEventRoutes(door_, events_, logs_, log_events_);
  AddModelSseRoute(door_, events_);
  AddActivityRoutes(door_, activity_, captures_);
  AddCaptureRoutes(door_, captures_);
  AddBenchRoutes(door_, bench_store_.get());
  AddMemoryRoutes(door_, memory_);
  AddHardwareRoutes(door_, memory_, performance_);
  AddUiRoutes(door_);
  AddGroupRoutes(door_, router_);
  AddOllamaRoutes(door_, router_);
}

int Service::Busy() const {
  int n = 0;
  for (const ModelSnapshot& m : router_.Snapshot()) n += m.in_flight + m.queued;
  return n;
}

void Service::RefuseNewRequests() {
  door_.SetShuttingDown();
  events_->Close();  // the /api/events and /models/sse streams end
  logs_->Close();    // and the /logs/stream ones
}

}  // namespace swapd
