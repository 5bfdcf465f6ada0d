// Service: every part of the running daemon, made in the order they depend on each other and
// destroyed in the reverse order (the members below, top to bottom). Making it wires them:
//  - the Router's events (starts, stops, crashes) reach the metrics, the memory monitor and the
//    /api/events feed;
//  - the front door's records of requests reach the metrics, the request history and the memory
//    monitor;
//  - a reload (the LiveConfig's subscribers) reaches, in this order, the slot cache, the Router,
//    the memory monitor, the performance sampler, the captures' buffer, the log level and the front
//    door's peers;
//  - the control plane's routes (api/) are added to the front door.
// The App binds, runs and stops it. Not synchronized itself: made and destroyed by the App's
// thread; its parts are thread safe.
#pragma once

#include <atomic>
#include <memory>

#include "backends/router.h"
#include "backends/slot_store.h"
#include "base/status.h"
#include "config/live_config.h"
#include "daemon/cli.h"
#include "daemon/idle_trim.h"
#include "daemon/reload.h"
#include "frontdoor/front_door.h"
#include "memory/footprint_monitor.h"
#include "memory/system_sampler.h"
#include "observe/activity_events.h"
#include "observe/event_feed.h"
#include "observe/event_hub.h"
#include "observe/log_events.h"
#include "observe/log_hub.h"
#include "observe/metrics.h"
#include "scoreboard/bench_store.h"
#include "store/activity_log.h"
#include "store/capture_store.h"
#include "store/load_time_store.h"

namespace swapd {

class Service {
 public:
  // `config` is the validated configuration to serve; `logs` holds swapd's own log already.
  // Fails (the reason logged) when the request history's store cannot be used at all.
  static Result<std::unique_ptr<Service>> Make(const Options& options,
                                               std::shared_ptr<const Config> config,
                                               std::shared_ptr<LogHub> logs);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  FrontDoor& door() { return door_; }
  Router& router() { return router_; }
  Reloader& reloader() { return reloader_; }
  // Requests in flight and queued, over all models.
  int Busy() const;
  // The first step of a shutdown: new requests get 503, and the event and log streams end.
  void RefuseNewRequests();

 private:
  struct Stores;  // what Make opened for it
  Service(const Options& options, std::shared_ptr<const Config> config,
          std::shared_ptr<LogHub> logs, Stores stores);
  void AddApiRoutes();

  const std::shared_ptr<LogHub> logs_;
  const bool config_sets_log_level_;  // no --log-level: the config's logLevel applies
  LiveConfig live_;
  Metrics metrics_;  // before the Router: its events reach the metrics until it is destroyed
  const std::shared_ptr<SlotStore> slot_store_;
  Router router_;
  FootprintMonitor memory_;    // measures the running models; stops before the Router
  SystemSampler performance_;  // samples the machine and memory_'s GPUs; stops before memory_
  const std::shared_ptr<EventHub> events_;
  LogEvents log_events_;               // the log's /api/events; outlives the server
  CaptureStore captures_;              // recent requests' captures, filed under their rows' ids
  ActivityEvents activity_events_;     // outlives the log, which tells it
  ActivityLog activity_;               // the request history; written after the server stopped
  std::atomic<uint64_t> requests_{0};  // proxied or refused so far: IdleTrim's activity
  const std::unique_ptr<BenchStore> bench_store_;  // GET /api/bench; may be null
  FrontDoor door_;
  const std::unique_ptr<LoadTimeStore> load_times_;  // kept by the feed
  EventFeed feed_;  // watches the Router and the profile; stops before the Router
  Reloader reloader_;
  IdleTrim trim_;  // first to stop
};

}  // namespace swapd
