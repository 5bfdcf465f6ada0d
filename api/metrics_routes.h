// GET /metrics: the Prometheus text of swapd: the model-server gauges Kubernetes' endpoint picker
// reads (observe/model_server_gauges.h), the request and model metrics (observe/metrics.h),
// the memory figures (FootprintMonitor), and what `more` adds (the events' and history's own
// counters). The handler runs on the front door's threads; what it is given must outlive
// `door`'s serving.
#pragma once

#include <functional>
#include <string>

#include "backends/router.h"
#include "frontdoor/front_door.h"
#include "memory/footprint_monitor.h"
#include "observe/metrics.h"

namespace swapd {

void AddMetricsRoute(FrontDoor& door, const Router& router, Metrics& metrics,
                     const FootprintMonitor& memory, std::function<std::string()> more);

}  // namespace swapd
