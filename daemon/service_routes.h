// The service's own routes, added to the FrontDoor by the App: GET /metrics (Prometheus),
// GET /api/models (every model's state, counters and last log lines), POST /api/config/reload,
// and the log routes GET /logs, GET /logs/stream and GET /logs/stream/{model}.
// The handlers run on the front door's threads; what they use must outlive the FrontDoor.
#pragma once

#include <functional>
#include <memory>

#include "backends/router.h"
#include "daemon/config_reloader.h"
#include "frontdoor/front_door.h"

namespace swapd {

class LogHub;
class Metrics;

// Adds /metrics, /api/models and POST /api/config/reload (which runs `reload`).
void AddServiceRoutes(FrontDoor& door, Router& router, Metrics& metrics,
                      std::function<ReloadOutcome()> reload);

// Adds /logs, /logs/stream and /logs/stream/{model}, read from `hub`.
void AddLogRoutes(FrontDoor& door, std::shared_ptr<LogHub> hub);

}  // namespace swapd
