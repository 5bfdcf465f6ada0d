// GET /api/events. On connect: the log history (two logData events), the kept states
// (modelStatus, uiConfig, profileChanged: llama-swap's order), then the in-flight requests
// (inflight snapshot). A reader that lost events gets the kept states and an inflight snapshot
// again. The stream itself is ServeEvents' (api/event_response.h).
#include "api/event_routes.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "api/event_response.h"
#include "observe/event_hub.h"
#include "observe/log_events.h"
#include "observe/log_hub.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

// A busy stream writes at most this often, at the multiples of it (every stream at once,
// PacedAfter): what came in between goes in one write (the first event after a quiet spell goes at
// once). Each proxied request publishes events (inflight, activity, logData); 50 readers woken for
// each took 93% of the throughput (bench/events_bench.sh), woken 10 times a second still 3-7%,
// 4 times 2.8%, 4 times together 1.6%. A dashboard redrawn 4 times a second looks live.
constexpr auto kPace = std::chrono::milliseconds(250);
// A slow reader's losses are logged at most this often: each log line is an event too.
constexpr auto kDropWarningEvery = std::chrono::seconds(10);

// What a stream knows of the events it lost, on the thread that writes it.
struct Losses {
  std::string address;
  Clock::time_point warned_at;  // the last warning about lost events
  uint64_t unwarned = 0;        // lost since then

  void Dropped(uint64_t dropped) {
    unwarned += dropped;
    const auto now = Clock::now();
    if (unwarned == 0 || now - warned_at < kDropWarningEvery) return;
    spdlog::warn("/api/events reader {} is too slow: {} events dropped", address, unwarned);
    unwarned = 0;
    warned_at = now;
  }
};

// The history as llama-swap's two logData events: swapd's own lines, then the backends'.
std::vector<EventFrame> HistoryFrames(const std::vector<LogLine>& history) {
  std::string proxy;
  std::vector<LogLine> upstream;
  for (const LogLine& line : history) {
    if (line.source == LogHub::kSwapdSource) {
      proxy += line.text + '\n';
    } else {
      upstream.push_back(line);
    }
  }
  return {MakeEventFrame("logData", {{"source", "proxy"}, {"data", proxy}}),
          MakeEventFrame("logData", {{"source", "upstream"}, {"data", FormatLogLines(upstream)}})};
}

}  // namespace

void AddEventRoutes(FrontDoor& door, std::shared_ptr<EventHub> events, std::shared_ptr<LogHub> logs,
                    LogEvents& log_events) {
  door.inflight().SetListener(
      {[events] { return events->Watched("inflight"); },
       [events](const nlohmann::json& data) { events->Publish("inflight", data); }});
  door.AddRoute("GET", "/api/events",
                [&door, events, logs, &log_events](const HttpRequest& req, HttpResponse& res,
                                                   RequestContext&) {
                  std::unique_ptr<EventHub::Subscription> subscription;
                  // Under the log's lock: no line is both in the history and sent live; under the
                  // in-flight table's: no request change is both in the snapshot and sent live, or
                  // in neither.
                  logs->WithHistory([&](const std::vector<LogLine>& history) {
                    log_events.Flush();
                    door.inflight().WithSnapshot([&](const nlohmann::json& snapshot) {
                      subscription = events->Subscribe(HistoryFrames(history),
                                                       {MakeEventFrame("inflight", snapshot)});
                    });
                  });
                  ServeEvents(door, res, std::move(subscription), kPace,
                              [&door, losses = Losses{req.remote_addr, {}, 0}](
                                  const EventHub::Subscription::Batch& batch) mutable {
                                losses.Dropped(batch.dropped);
                                std::string text;
                                for (const EventFrame& frame : batch.frames) text += *frame;
                                if (batch.dropped > 0) {
                                  // The hub sent the kept states again; what it lost of the
                                  // requests in flight, a new snapshot replaces (changes told after
                                  // it apply to it).
                                  door.inflight().WithSnapshot([&](const nlohmann::json& snapshot) {
                                    text += *MakeEventFrame("inflight", snapshot);
                                  });
                                }
                                return text;
                              });
                });
}

}  // namespace swapd
