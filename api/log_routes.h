// The log routes: GET /logs, GET /logs/stream and GET /logs/stream/{model}, read from `hub`.
// The handlers run on the front door's threads.
#pragma once

#include <memory>

#include "frontdoor/front_door.h"
#include "observe/log_hub.h"

namespace swapd {

void AddLogRoutes(FrontDoor& door, std::shared_ptr<LogHub> hub);

}  // namespace swapd
