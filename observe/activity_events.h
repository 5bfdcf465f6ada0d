// ActivityEvents: the `activity` events of /api/events, {id: the newest recorded row}, at most one
// per interval. A reader refetches the history on it (GET /api/metrics/activity?min_id=...), so
// one event for all the rows written within the interval tells it as much as one per row (or per
// write batch: under a flood of small requests the history writes thousands of small batches a
// second, and an event each woke every reader for a few bytes). Thread safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

#include "base/pacer.h"
#include "observe/event_hub.h"

namespace swapd {

class ActivityEvents {
 public:
  explicit ActivityEvents(EventHub& hub,
                          std::chrono::milliseconds every = std::chrono::milliseconds(100));
  ~ActivityEvents();  // what is pending is dropped
  ActivityEvents(const ActivityEvents&) = delete;
  ActivityEvents& operator=(const ActivityEvents&) = delete;

  // Rows up to `id` were recorded: an event follows within the interval.
  void Recorded(int64_t id);

 private:
  void Publish();  // on the pacer's thread

  EventHub& hub_;
  std::mutex mu_;
  int64_t newest_ = 0;  // Guarded by mu_
  int64_t told_ = 0;    // Guarded by mu_; the id of the last event
  Pacer pacer_;         // last: its thread stops before the rest goes
};

}  // namespace swapd
