// EventHub: the frames of GET /api/events (Server-Sent Events), as llama-swap sends them:
// "event:message\ndata:{"type":T,"data":"<the event's JSON, as a string>"}\n\n".
// Each frame is rendered once and shared by every reader. Every reader has a bounded queue: one
// that does not keep up loses events (counted, per reader and in total), and never slows the
// publisher. The latest frame of each state type (modelStatus, profileChanged) is kept: a new
// reader gets those first, and a reader that lost events gets them again, so its picture of the
// models is current again. A reader may take only some types (GET /models/sse wants model states,
// not the log): it is neither queued nor woken for the others, and an event no reader takes is
// not rendered. The queues, losses and wake-ups are a FanOut's (observe/fan_out.h); the frames,
// kept states, type filters and reader counts are the hub's own.
// Thread safe. Publishing never logs (log lines are published from the log sink).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "observe/fan_out.h"

namespace swapd {

using EventFrame = std::shared_ptr<const std::string>;

// The SSE frame of an event of `type` whose payload is `data`.
EventFrame MakeEventFrame(std::string_view type, const nlohmann::json& data);

class EventHub {
 public:
  class Subscription;

  explicit EventHub(size_t queue_frames = 1024, size_t queue_bytes = 8u << 20);
  ~EventHub();

  // Sends to every reader.
  void Publish(std::string_view type, const nlohmann::json& data);
  // Sends to every reader, and keeps it as the state of `type` for readers yet to come.
  void PublishState(std::string_view type, const nlohmann::json& data);

  // A new reader of the events of `types` (none: every type). Its queue starts with `initial`
  // (not counted against the bound), then the kept states it takes, then `trailing` (not counted
  // either). `on_subscribe`, if set, is told afterwards (without the hub's lock).
  std::unique_ptr<Subscription> Subscribe(std::vector<EventFrame> initial = {},
                                          std::vector<EventFrame> trailing = {},
                                          std::vector<std::string> types = {});
  void SetOnSubscribe(std::function<void()> on_subscribe);

  // Swapd is shutting down: every reader's wait ends at once, from now on (a stream then sees the
  // shutdown and ends).
  void Close();

  size_t readers() const;
  // Whether some reader takes events of `type`: quick, for a source that may skip its work (it
  // takes the lock only while readers of some types alone are open).
  bool Watched(std::string_view type) const;
  uint64_t dropped() const;  // frames lost by slow readers, since the start

 private:
  friend class Subscription;
  // The types a reader takes; none: every type.
  struct TypeFilter {
    std::vector<std::string> types;
    bool Takes(std::string_view type) const {
      return types.empty() || std::find(types.begin(), types.end(), type) != types.end();
    }
  };
  using Fan = FanOut<std::string, TypeFilter>;

  Fan fan_;  // the readers and their queues; its lock guards the members below too
  std::vector<std::pair<std::string, EventFrame>> states_;  // Guarded by fan_'s lock; by first use
  std::function<void()> on_subscribe_;                      // Guarded by fan_'s lock
  // Readers of every type, and of each type that readers of some types take. Written under fan_'s
  // lock, read without it by Watched, which every log line and every proxied request's change
  // asks while readers are open (with 50 /models/sse readers, a scan of the readers under the
  // lock for each took 2% of the proxy's throughput, and as much again in waits for the lock).
  // The slots are filled once each, in order, and then only counted: a type's name is written
  // before `typed_slots_` counts its slot.
  struct TypeReaders {
    std::string type;
    std::atomic<size_t> readers{0};
  };
  static constexpr size_t kTypeSlots = 16;
  std::atomic<size_t> all_type_readers_{0};
  std::array<TypeReaders, kTypeSlots> type_readers_;
  std::atomic<size_t> typed_slots_{0};
  // Readers of some types that did not get a slot (more than kTypeSlots types): Watched then
  // asks under the lock.
  std::atomic<size_t> unslotted_readers_{0};
  // Counts a reader of `filter` in or out (`delta` 1 or -1); fan_'s lock held.
  void CountReader(const TypeFilter& filter, int delta);
};

// When a stream paced at `pace` writes again after a batch at `last`: at the first multiple of
// `pace` on the steady clock after it (`last` itself for a pace of 0: not paced). Every busy stream
// of one pace writes at the same moments, so the proxy is interrupted once per pace, not once per
// stream: with 50 /api/events readers, 1.6% of its throughput where each stream's own pace
// took 2.8% (bench/README.md).
std::chrono::steady_clock::time_point PacedAfter(std::chrono::steady_clock::time_point last,
                                                 std::chrono::milliseconds pace);

// The hub's Prometheus lines: swapd_event_readers, swapd_events_dropped_total.
std::string EventMetricsText(const EventHub& hub);

// One reader. Used by one thread at a time.
class EventHub::Subscription {
 public:
  ~Subscription();
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

  struct Batch {
    std::vector<EventFrame> frames;
    uint64_t dropped = 0;  // lost since the last batch (the kept states follow, again)
  };
  // The frames that arrived since the last call, waiting up to `timeout` for at least one.
  Batch Next(std::chrono::milliseconds timeout);
  // Readable while a batch (or a loss) waits, or once the hub closed: to wait for it with other
  // things (RequestContext::WaitReadable), then take it with Next(0ms).
  int fd() const;
  // Sleeps until PacedAfter(the last batch with frames, pace), if that is still to come: a stream
  // that calls it before each wait writes what arrived in between at once, and is not woken for
  // every event.
  void WaitPace(std::chrono::milliseconds pace) const;

 private:
  friend class EventHub;
  Subscription(EventHub* hub, std::unique_ptr<Fan::Reader> reader);

  EventHub* hub_;  // not owned; outlives the subscription
  std::unique_ptr<Fan::Reader> reader_;
  std::chrono::steady_clock::time_point last_batch_;  // the last batch with frames
};

}  // namespace swapd
