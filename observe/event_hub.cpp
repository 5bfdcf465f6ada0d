#include "observe/event_hub.h"

#include <algorithm>
#include <thread>

#include "base/json_text.h"

namespace swapd {

EventFrame MakeEventFrame(std::string_view type, const nlohmann::json& data) {
  // Log lines may carry bytes that are not UTF-8: they are replaced, never an exception.
  nlohmann::json envelope = {{"type", type}, {"data", JsonText(data)}};
  return std::make_shared<const std::string>("event:message\ndata:" + JsonText(envelope) + "\n\n");
}

EventHub::EventHub(size_t queue_frames, size_t queue_bytes) : fan_(queue_frames, queue_bytes) {}

EventHub::~EventHub() = default;

void EventHub::Publish(std::string_view type, const nlohmann::json& data) {
  if (!Watched(type)) return;  // not rendered for nobody (every log batch passes here)
  EventFrame frame = MakeEventFrame(type, data);
  fan_.Publish(frame, frame->size(), [type](const TypeFilter& f) { return f.Takes(type); });
}

void EventHub::PublishState(std::string_view type, const nlohmann::json& data) {
  EventFrame frame = MakeEventFrame(type, data);
  Fan::Held held = fan_.Lock();
  auto kept = std::find_if(states_.begin(), states_.end(),
                           [&](const auto& state) { return state.first == type; });
  if (kept == states_.end()) {
    states_.emplace_back(std::string(type), frame);
  } else {
    kept->second = frame;
  }
  fan_.Publish(held, frame, frame->size(), [type](const TypeFilter& f) { return f.Takes(type); });
}

std::unique_ptr<EventHub::Subscription> EventHub::Subscribe(std::vector<EventFrame> initial,
                                                            std::vector<EventFrame> trailing,
                                                            std::vector<std::string> types) {
  std::function<void()> told;
  std::unique_ptr<Fan::Reader> reader = fan_.Subscribe(
      TypeFilter{std::move(types)}, [&](const TypeFilter& filter, std::vector<EventFrame>& queue) {
        queue = std::move(initial);
        for (const auto& state : states_) {
          if (filter.Takes(state.first)) queue.push_back(state.second);
        }
        for (EventFrame& frame : trailing) queue.push_back(std::move(frame));
        CountReader(filter, 1);
        told = on_subscribe_;
      });
  if (told) told();
  return std::unique_ptr<Subscription>(new Subscription(this, std::move(reader)));
}

void EventHub::SetOnSubscribe(std::function<void()> on_subscribe) {
  Fan::Held held = fan_.Lock();
  on_subscribe_ = std::move(on_subscribe);
}

size_t EventHub::readers() const { return fan_.readers(); }

void EventHub::Close() { fan_.Close(); }

void EventHub::CountReader(const TypeFilter& filter, int delta) {
  if (filter.types.empty()) {
    all_type_readers_.fetch_add(static_cast<size_t>(delta));
    return;
  }
  bool slotted = true;
  for (const std::string& type : filter.types) {
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
  return fan_.AnyReader([type](const TypeFilter& f) { return f.Takes(type); });
}

uint64_t EventHub::dropped() const { return fan_.dropped(); }

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

EventHub::Subscription::Subscription(EventHub* hub, std::unique_ptr<Fan::Reader> reader)
    : hub_(hub), reader_(std::move(reader)) {}

EventHub::Subscription::~Subscription() {
  {
    Fan::Held held = hub_->fan_.Lock();
    hub_->CountReader(reader_->filter(), -1);
  }
  reader_.reset();  // leaves the fan-out (under its lock again)
}

int EventHub::Subscription::fd() const { return reader_->fd(); }

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
  Fan::Reader::Batch taken = reader_->Next(timeout, [this](std::vector<EventFrame>& frames) {
    // What it lost may have been a state: the kept ones bring it up to date. (Under fan_'s lock.)
    for (const auto& state : hub_->states_) {
      if (reader_->filter().Takes(state.first)) frames.push_back(state.second);
    }
  });
  Batch batch{std::move(taken.items), taken.dropped};
  if (!batch.frames.empty()) last_batch_ = std::chrono::steady_clock::now();
  return batch;
}

}  // namespace swapd
