#include "daemon/event_hub.h"

#include <algorithm>
#include <thread>

namespace swapd {

// Guarded by the hub's mu_ (the condition variable waits on it too).
struct EventHub::Reader {
  std::vector<EventFrame> pending;
  size_t initial = 0;  // of `pending`: the initial frames, not counted against the bounds
  size_t bytes = 0;    // of the others
  uint64_t dropped = 0;
  std::condition_variable ready;
};

EventFrame MakeEventFrame(std::string_view type, const nlohmann::json& data) {
  // Log lines may carry bytes that are not UTF-8: they are replaced, never an exception.
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  nlohmann::json envelope = {{"type", type}, {"data", data.dump(-1, ' ', false, kReplace)}};
  return std::make_shared<const std::string>(
      "event:message\ndata:" + envelope.dump(-1, ' ', false, kReplace) + "\n\n");
}

EventHub::EventHub(size_t queue_frames, size_t queue_bytes)
    : queue_frames_(queue_frames), queue_bytes_(queue_bytes) {}

EventHub::~EventHub() = default;

void EventHub::Deliver(const EventFrame& frame) {
  for (const auto& r : readers_) {
    if (r->pending.size() >= queue_frames_ + r->initial ||
        r->bytes + frame->size() > queue_bytes_) {
      ++r->dropped;
      ++dropped_;
      continue;
    }
    r->bytes += frame->size();
    r->pending.push_back(frame);
    // Only an empty queue can have its reader waiting: one wake per batch, not per event.
    if (r->pending.size() == 1) r->ready.notify_one();
  }
}

void EventHub::Publish(std::string_view type, const nlohmann::json& data) {
  {
    std::lock_guard lock(mu_);
    if (readers_.empty()) return;  // not rendered for nobody (every log line passes here)
  }
  EventFrame frame = MakeEventFrame(type, data);
  std::lock_guard lock(mu_);
  Deliver(frame);
}

void EventHub::PublishState(std::string_view type, const nlohmann::json& data) {
  EventFrame frame = MakeEventFrame(type, data);
  std::lock_guard lock(mu_);
  auto kept = std::find_if(states_.begin(), states_.end(),
                           [&](const auto& state) { return state.first == type; });
  if (kept == states_.end()) {
    states_.emplace_back(std::string(type), frame);
  } else {
    kept->second = frame;
  }
  Deliver(frame);
}

std::unique_ptr<EventHub::Subscription> EventHub::Subscribe(std::vector<EventFrame> initial,
                                                            std::vector<EventFrame> trailing) {
  auto reader = std::make_shared<Reader>();
  reader->pending = std::move(initial);
  std::function<void()> told;
  {
    std::lock_guard lock(mu_);
    for (const auto& state : states_) reader->pending.push_back(state.second);
    for (EventFrame& frame : trailing) reader->pending.push_back(std::move(frame));
    reader->initial = reader->pending.size();
    readers_.push_back(reader);
    told = on_subscribe_;
  }
  if (told) told();
  return std::unique_ptr<Subscription>(new Subscription(this, std::move(reader)));
}

void EventHub::SetOnSubscribe(std::function<void()> on_subscribe) {
  std::lock_guard lock(mu_);
  on_subscribe_ = std::move(on_subscribe);
}

size_t EventHub::readers() const {
  std::lock_guard lock(mu_);
  return readers_.size();
}

uint64_t EventHub::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

std::string EventMetricsText(const EventHub& hub) {
  return "# HELP swapd_event_readers Open GET /api/events streams.\n"
         "# TYPE swapd_event_readers gauge\n"
         "swapd_event_readers " +
         std::to_string(hub.readers()) +
         "\n"
         "# HELP swapd_events_dropped_total Events lost by /api/events readers too slow to take "
         "them.\n"
         "# TYPE swapd_events_dropped_total counter\n"
         "swapd_events_dropped_total " +
         std::to_string(hub.dropped()) + "\n";
}

EventHub::Subscription::Subscription(EventHub* hub, std::shared_ptr<Reader> reader)
    : hub_(hub), reader_(std::move(reader)) {}

EventHub::Subscription::~Subscription() {
  std::lock_guard lock(hub_->mu_);
  hub_->readers_.remove(reader_);
}

EventHub::Subscription::Batch EventHub::Subscription::Next(std::chrono::milliseconds timeout,
                                                           std::chrono::milliseconds pace) {
  // Frames that come while it waits out the pace are in the queue for this batch.
  const auto since = std::chrono::steady_clock::now() - last_batch_;
  if (since < pace) std::this_thread::sleep_for(pace - since);
  std::unique_lock lock(hub_->mu_);
  Reader& r = *reader_;
  r.ready.wait_for(lock, timeout, [&] { return !r.pending.empty() || r.dropped > 0; });
  Batch batch;
  batch.frames.swap(r.pending);
  r.initial = 0;
  r.bytes = 0;
  batch.dropped = r.dropped;
  if (r.dropped > 0) {
    // What it lost may have been a state: the kept ones bring it up to date.
    for (const auto& state : hub_->states_) batch.frames.push_back(state.second);
    r.dropped = 0;
  }
  if (!batch.frames.empty()) last_batch_ = std::chrono::steady_clock::now();
  return batch;
}

}  // namespace swapd
