// GET /api/models: every model's state, pid, uptime, requests in flight and queued, last error
// and log lines, speeds and start counts, its definition hash and memory (measured, declared,
// counted), and the budgets: {models: [...], memory: {...}}. GET /api/version: {version, commit,
// build_date, pid}. The handlers run on the front door's threads; what they are given must
// outlive `door`'s serving.
#pragma once

#include "backends/router.h"
#include "frontdoor/front_door.h"
#include "memory/footprint_monitor.h"
#include "observe/metrics.h"

namespace swapd {

void AddStatusRoutes(FrontDoor& door, const Router& router, const Metrics& metrics,
                     const FootprintMonitor& memory);

}  // namespace swapd
