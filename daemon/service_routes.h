// The service's own routes, added to the FrontDoor by the App: GET /metrics (Prometheus),
// GET /api/models (every model's state, counters, memory and last log lines; the budgets),
// POST /api/config/reload,
// and the log routes GET /logs, GET /logs/stream and GET /logs/stream/{model}.
// The handlers run on the front door's threads; what they use must outlive the FrontDoor.
#pragma once

#include <functional>
#include <memory>

#include "backends/router.h"
#include "daemon/config_reloader.h"
#include "frontdoor/front_door.h"

namespace swapd {

class FootprintMonitor;
class LogHub;
class Metrics;

// Adds /metrics, /api/models and POST /api/config/reload (which runs `reload`). `memory` adds the
// measured footprints and budgets to both.
void AddServiceRoutes(FrontDoor& door, Router& router, Metrics& metrics,
                      const FootprintMonitor& memory, std::function<ReloadOutcome()> reload);

// Adds /logs, /logs/stream and /logs/stream/{model}, read from `hub`.
void AddLogRoutes(FrontDoor& door, std::shared_ptr<LogHub> hub);

}  // namespace swapd
