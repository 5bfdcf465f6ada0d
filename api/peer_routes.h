// GET /api/peers: each peer of the configuration with what swapd knows of its health: {peers:
// [{id, proxy, models, state (unknown|up|error|down), latency_ms, checked_at (Unix seconds),
// next_check_s, failures, detail, models_listed}]}. The handler runs on the front door's threads.
#pragma once

#include "frontdoor/front_door.h"

namespace swapd {

void AddPeerRoutes(FrontDoor& door);

}  // namespace swapd
