// POST /api/inflight/{id}/cancel: cancels an inference request in flight (see
// frontdoor/inflight_table.h): {"msg":"ok"}, or 404 when there is no such request. The client of
// the cancelled request gets a 499 JSON error, or an error event that ends its stream.
// The handler runs on the front door's threads.
#pragma once

#include "frontdoor/front_door.h"

namespace swapd {

void AddInflightRoutes(FrontDoor& door);

}  // namespace swapd
