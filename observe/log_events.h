// LogEvents: the log lines as /api/events logData events, without an event per line. A backend
// under a flood of small requests prints a few lines per request; an event for each, rendered and
// queued for every reader, cost a quarter of swapd's throughput with 50 dashboards open
// (bench/events_bench.sh). Here the lines of each source (source "proxy": swapd's own; "upstream":
// the backends', each "[model] line") that come within one interval go out as one event, as
// llama-swap sends one event per log write. A source that writes faster than a reader could read
// is capped (a burst of `burst_bytes`, then `bytes_per_second`): the lines beyond it are not sent
// live, and the event says how many were left out (GET /logs still has the recent ones).
// While it exists it is `logs`'s listener. Thread safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "base/pacer.h"
#include "observe/event_hub.h"
#include "observe/log_hub.h"

namespace swapd {

struct LogEventLimits {
  std::chrono::milliseconds every{100};
  size_t burst_bytes = 256u << 10;      // per source
  size_t bytes_per_second = 16u << 10;  // per source, once the burst is spent
};

class LogEvents {
 public:
  LogEvents(LogHub& logs, EventHub& hub, LogEventLimits limits = {});
  ~LogEvents();  // no longer the listener; what is pending is dropped
  LogEvents(const LogEvents&) = delete;
  LogEvents& operator=(const LogEvents&) = delete;

  // Sends what is pending now. Called under the LogHub's lock (LogHub::WithHistory) before a new
  // reader subscribes: no line is then both in its history and sent to it live.
  void Flush();

  uint64_t skipped() const;  // lines not sent live, since the start

 private:
  using Clock = std::chrono::steady_clock;

  // One source's lines waiting for the next event, and its allowance.
  struct Pending {
    std::string text;
    uint64_t skipped = 0;  // since the last event
    double allowance = 0;  // bytes it may still add
  };

  void Add(const LogLine& line);  // the LogHub's listener: under its lock, quick
  void Publish();                 // publish_mu_ held

  LogHub& logs_;
  EventHub& hub_;
  const LogEventLimits limits_;
  std::mutex publish_mu_;  // one Publish at a time: an event is out before a reader subscribes
  mutable std::mutex mu_;
  Pending proxy_;               // Guarded by mu_
  Pending upstream_;            // Guarded by mu_
  Clock::time_point refilled_;  // Guarded by mu_; when the allowances were last topped up
  uint64_t skipped_ = 0;        // Guarded by mu_
  Pacer pacer_;                 // last: its thread ends before the rest goes
};

// Its Prometheus line: swapd_events_log_lines_skipped_total.
std::string LogEventMetricsText(const LogEvents& log_events);

}  // namespace swapd
