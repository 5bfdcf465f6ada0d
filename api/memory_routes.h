// GET /api/memory/history (?model=, limit 1-500, 100): the footprints recorded of a model in the
// history store, newest first; 503 without a store. The handler runs on the front door's threads;
// `memory` must outlive `door`'s serving.
#pragma once

#include "frontdoor/front_door.h"
#include "memory/footprint_monitor.h"

namespace swapd {

void AddMemoryRoutes(FrontDoor& door, const FootprintMonitor& memory);

}  // namespace swapd
