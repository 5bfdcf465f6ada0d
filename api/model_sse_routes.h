// GET /models/sse: llama.cpp's router-mode model events, from the same hub as /api/events (see
// model_sse_routes.cpp). The handler runs on the front door's threads.
#pragma once

#include <memory>

#include "frontdoor/front_door.h"
#include "observe/event_hub.h"

namespace swapd {

void AddModelSseRoute(FrontDoor& door, std::shared_ptr<EventHub> events);

}  // namespace swapd
