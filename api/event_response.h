// ServeEvents: answers a request with a Server-Sent Events stream of an EventHub subscription, as
// GET /api/events and GET /models/sse do: no caching or proxy buffering; `render` makes a batch's
// text ("" when nothing of it is for this stream); an SSE comment after 15 s of silence, so that a
// client that left is noticed and proxies in between keep the connection; the end when swapd
// shuts down (EventHub::Close ends its wait). It waits for frames in poll with the client's socket:
// no timer wakes a quiet stream. A reader that got no wake-up fd (swapd is out of file
// descriptors) is refused with a 503 rather than served late.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "frontdoor/front_door.h"
#include "observe/event_hub.h"

namespace swapd {

// The 503 of a stream whose reader got no wake-up fd (WakeFd::ok() false).
Status NoReaderFdError();

// Called on the stream's thread, one batch at a time: may keep state of its own.
using EventRender = std::function<std::string(const EventHub::Subscription::Batch& batch)>;

// A busy stream writes at the multiples of `pace` on the steady clock; the first batch after a
// quiet spell goes at once (Subscription::WaitPace).
void ServeEvents(const FrontDoor& door, HttpResponse& res,
                 std::unique_ptr<EventHub::Subscription> subscription,
                 std::chrono::milliseconds pace, EventRender render);

}  // namespace swapd
