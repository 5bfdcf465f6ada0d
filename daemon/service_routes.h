// The service's own routes, added to the FrontDoor by the App: GET /metrics (Prometheus),
// GET /api/models (every model's state, counters, memory and last log lines; the budgets),
// POST /api/config/reload,
// the log routes GET /logs, GET /logs/stream and GET /logs/stream/{model}, and GET /api/events.
// The handlers run on the front door's threads; what they use must outlive the FrontDoor.
#pragma once

#include <functional>
#include <memory>

#include "backends/router.h"
#include "daemon/config_reloader.h"
#include "frontdoor/front_door.h"

namespace swapd {

class EventHub;
class FootprintMonitor;
class LogHub;
class Metrics;

// Adds /metrics, /api/models and POST /api/config/reload (which runs `reload`). `memory` adds the
// measured footprints and budgets to both; `events` its readers and drops to /metrics.
void AddServiceRoutes(FrontDoor& door, Router& router, Metrics& metrics,
                      const FootprintMonitor& memory, const EventHub& events,
                      std::function<ReloadOutcome()> reload);

// Adds /logs, /logs/stream and /logs/stream/{model}, read from `hub`.
void AddLogRoutes(FrontDoor& door, std::shared_ptr<LogHub> hub);

// Adds GET /api/events (Server-Sent Events, llama-swap's frames): on connect the log history as
// two logData events (source proxy: swapd's own lines; upstream: the backends' lines, each
// "[model] line"), then the kept states of `events`, then every event as it comes. Makes `logs`
// send each new line to `events` as logData.
void AddEventRoutes(FrontDoor& door, std::shared_ptr<EventHub> events,
                    std::shared_ptr<LogHub> logs);

}  // namespace swapd
