// GET /api/events (Server-Sent Events, llama-swap's frames): on connect the log history as two
// logData events (source proxy: swapd's own lines; upstream: the backends' lines, each "[model]
// line"), then the kept states of `events`, then the in-flight requests, then every event as it
// comes, the new log lines as `log_events` sends them. Makes `events` the in-flight table's
// listener. The handler runs on the front door's threads; what it is given must outlive `door`'s
// serving.
#pragma once

#include <memory>

#include "frontdoor/front_door.h"
#include "observe/event_hub.h"
#include "observe/log_events.h"
#include "observe/log_hub.h"

namespace swapd {

void AddEventRoutes(FrontDoor& door, std::shared_ptr<EventHub> events, std::shared_ptr<LogHub> logs,
                    LogEvents& log_events);

}  // namespace swapd
