#include "observe/event_hub.h"

#include <algorithm>
#include <thread>

#include "base/json_text.h"
#include "base/wake_fd.h"

namespace swapd {

// Guarded by the hub's mu_.
struct EventHub::Reader {
  std::vector<EventFrame> pending;
  size_t initial = 0;  // of `pending`: the initial frames, not counted against the bounds
  size_t bytes = 0;    // of the others
  uint64_t dropped = 0;
  std::vector<std::string> types;  // taken; empty: all
  // Readable while something is pending (or lost, or the hub closed): a stream waits for it in
  // poll, with the client's socket (RequestContext::WaitReadable).
  WakeFd ready;

  bool Takes(std::string_view type) const {
    return types.empty() || std::find(types.begin(), types.end(), type) != types.end();
  }
};

EventFrame MakeEventFrame(std::string_view type, const nlohmann::json& data) {
  // Log lines may carry bytes that are not UTF-8: they are replaced, never an exception.
  nlohmann::json envelope = {{"type", type}, {"data", JsonText(data)}};
  return std::make_shared<const std::string>("event:message\ndata:" + JsonText(envelope) + "\n\n");
}

EventHub::EventHub(size_t queue_frames, size_t queue_bytes)
    : queue_frames_(queue_frames), queue_bytes_(queue_bytes) {}

EventHub::~EventHub() = default;

void EventHub::Deliver(std::string_view type, const EventFrame& frame) {
  for (const auto& r : readers_) {
    if (!r->Takes(type)) continue;
    // Signalled once until the reader takes its batch: one wake per batch, not per event.
    r->ready.Signal();
    if (r->pending.size() >= queue_frames_ + r->initial ||
        r->bytes + frame->size() > queue_bytes_) {
      ++r->dropped;
      ++dropped_;
      continue;
    }
    r->bytes += frame->size();
    r->pending.push_back(frame);
  }
}

void EventHub::Publish(std::string_view type, const nlohmann::json& data) {
  if (!Watched(type)) return;  // not rendered for nobody (every log batch passes here)
  EventFrame frame = MakeEventFrame(type, data);
  std::lock_guard lock(mu_);
  Deliver(type, frame);
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
  Deliver(type, frame);
}

std::unique_ptr<EventHub::Subscription> EventHub::Subscribe(std::vector<EventFrame> initial,
                                                            std::vector<EventFrame> trailing,
                                                            std::vector<std::string> types) {
  auto reader = std::make_shared<Reader>();
  reader->pending = std::move(initial);
  reader->types = std::move(types);
  std::function<void()> told;
  {
    std::lock_guard lock(mu_);
    for (const auto& state : states_) {
      if (reader->Takes(state.first)) reader->pending.push_back(state.second);
    }
    for (EventFrame& frame : trailing) reader->pending.push_back(std::move(frame));
    reader->initial = reader->pending.size();
    if (!reader->pending.empty() || closed_) reader->ready.Signal();
    readers_.push_back(reader);
    CountReader(*reader, 1);
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

void EventHub::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  for (const auto& r : readers_) r->ready.Signal();
}

void EventHub::CountReader(const Reader& reader, int delta) {
  if (reader.types.empty()) {
    all_type_readers_.fetch_add(static_cast<size_t>(delta));
    return;
  }
  bool slotted = true;
  for (const std::string& type : reader.types) {
    const size_t slots = typed_slots_.load();
    auto slot = std::find_if(type_readers_.begin(), type_readers_.begin() + slots,
                             [&](const TypeReaders& t) { return t.type == type; });
    if (slot == type_readers_.begin() + slots) {
      if (slots == kTypeSlots) {
        slotted = false;
        continue;
      }
      slot->type = type;  // before the slot counts: Watched reads the names without the lock
      typed_slots_.store(slots + 1);
    }
    slot->readers.fetch_add(static_cast<size_t>(delta));
  }
  if (!slotted) unslotted_readers_.fetch_add(static_cast<size_t>(delta));
}

bool EventHub::Watched(std::string_view type) const {
  if (all_type_readers_.load() > 0) return true;
  const size_t slots = typed_slots_.load();
  for (size_t i = 0; i < slots; ++i) {
    if (type_readers_[i].type == type) {
      if (type_readers_[i].readers.load() > 0) return true;
      break;
    }
  }
  if (unslotted_readers_.load() == 0) return false;
  std::lock_guard lock(mu_);
  return std::any_of(readers_.begin(), readers_.end(),
                     [&](const auto& r) { return r->Takes(type); });
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
  hub_->CountReader(*reader_, -1);
}

int EventHub::Subscription::fd() const { return reader_->ready.fd(); }

std::chrono::steady_clock::time_point PacedAfter(std::chrono::steady_clock::time_point last,
                                                 std::chrono::milliseconds pace) {
  const auto step = std::chrono::duration_cast<std::chrono::steady_clock::duration>(pace);
  if (step.count() <= 0) return last;  // not paced
  return std::chrono::steady_clock::time_point((last.time_since_epoch() / step + 1) * step);
}

void EventHub::Subscription::WaitPace(std::chrono::milliseconds pace) const {
  // Frames that come while it waits are in the queue for the next batch. (No wait when the moment
  // is past: the first batch after a quiet spell goes at once.)
  std::this_thread::sleep_until(PacedAfter(last_batch_, pace));
}

EventHub::Subscription::Batch EventHub::Subscription::Next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(hub_->mu_);
  Reader& r = *reader_;
  if (r.pending.empty() && r.dropped == 0 && timeout.count() > 0) {
    lock.unlock();  // the Deliver that makes `ready` readable takes the lock
    WaitReadable(r.ready.fd(), timeout);
    lock.lock();
  }
  if (!hub_->closed_) r.ready.Clear();  // (closed: stays readable, every wait ends at once)
  Batch batch;
  batch.frames.swap(r.pending);
  r.initial = 0;
  r.bytes = 0;
  batch.dropped = r.dropped;
  if (r.dropped > 0) {
    // What it lost may have been a state: the kept ones bring it up to date.
    for (const auto& state : hub_->states_) {
      if (r.Takes(state.first)) batch.frames.push_back(state.second);
    }
    r.dropped = 0;
  }
  if (!batch.frames.empty()) last_batch_ = std::chrono::steady_clock::now();
  return batch;
}

}  // namespace swapd
