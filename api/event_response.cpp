#include "api/event_response.h"

#include <utility>

#include "frontdoor/error_response.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kKeepAliveAfter = std::chrono::seconds(15);

// One stream's state, on the thread that writes it.
struct Stream {
  std::unique_ptr<EventHub::Subscription> subscription;
  std::chrono::milliseconds pace;
  EventRender render;
  Clock::time_point quiet_since = Clock::now();  // the last write
};

}  // namespace

Status NoReaderFdError() {
  return Status::Error(ErrorCode::kUnavailable,
                       "cannot follow this stream now: swapd has no file descriptor left for one "
                       "more reader; try again later");
}

void ServeEvents(const FrontDoor& door, HttpResponse& res,
                 std::unique_ptr<EventHub::Subscription> subscription,
                 std::chrono::milliseconds pace, EventRender render) {
  if (subscription->fd() < 0) return SetErrorResponse(res, NoReaderFdError());
  auto stream = std::make_shared<Stream>();
  stream->subscription = std::move(subscription);
  stream->pace = pace;
  stream->render = std::move(render);
  res.headers.Set("Cache-Control", "no-cache");
  res.headers.Set("X-Accel-Buffering", "no");
  res.SetStream("text/event-stream", [&door, stream](BodyWriter& out, RequestContext& context) {
    if (door.shutting_down()) {
      out.End();
      return true;
    }
    // No timer wakes a quiet stream: the wait ends with an event, the client's leaving, swapd's
    // shutdown (the hub closes) or the keep-alive's time. 50 streams polled 5 times a second cost
    // 3% of the proxy's throughput on a 2-core machine (bench/events_bench.sh).
    EventHub::Subscription& subscription = *stream->subscription;
    subscription.WaitPace(stream->pace);
    const auto quiet_for = Clock::now() - stream->quiet_since;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        quiet_for < kKeepAliveAfter ? kKeepAliveAfter - quiet_for : Clock::duration::zero());
    if (!context.WaitReadable(subscription.fd(), wait) && context.ClientGone()) return false;
    if (door.shutting_down()) {
      out.End();
      return true;
    }
    std::string text = stream->render(subscription.Next(std::chrono::milliseconds(0)));
    const auto now = Clock::now();
    if (text.empty()) {
      if (now - stream->quiet_since < kKeepAliveAfter) return true;
      text = ":\n\n";
    }
    stream->quiet_since = now;
    return out.Write(text);
  });
}

}  // namespace swapd
