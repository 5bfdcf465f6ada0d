#include "daemon/event_response.h"

#include <utility>

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kStreamPoll = std::chrono::milliseconds(200);
constexpr auto kKeepAliveAfter = std::chrono::seconds(15);

// One stream's state, on the thread that writes it.
struct Stream {
  std::unique_ptr<EventHub::Subscription> subscription;
  std::chrono::milliseconds pace;
  EventRender render;
  Clock::time_point quiet_since = Clock::now();  // the last write
};

}  // namespace

void ServeEvents(const FrontDoor& door, HttpResponse& res,
                 std::unique_ptr<EventHub::Subscription> subscription,
                 std::chrono::milliseconds pace, EventRender render) {
  auto stream = std::make_shared<Stream>();
  stream->subscription = std::move(subscription);
  stream->pace = pace;
  stream->render = std::move(render);
  res.headers.Set("Cache-Control", "no-cache");
  res.headers.Set("X-Accel-Buffering", "no");
  res.SetStream("text/event-stream", [&door, stream](BodyWriter& out, RequestContext&) {
    if (door.shutting_down()) {
      out.End();
      return true;
    }
    std::string text = stream->render(stream->subscription->Next(kStreamPoll, stream->pace));
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
