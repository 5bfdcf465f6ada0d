#include "observe/activity_events.h"

#include <algorithm>

namespace swapd {

ActivityEvents::ActivityEvents(EventHub& hub, std::chrono::milliseconds every)
    : hub_(hub), pacer_(every, [this] { Publish(); }) {}

ActivityEvents::~ActivityEvents() { pacer_.Stop(); }

void ActivityEvents::Recorded(int64_t id) {
  {
    std::lock_guard lock(mu_);
    newest_ = std::max(newest_, id);
  }
  pacer_.Poke();
}

void ActivityEvents::Publish() {
  int64_t id;
  {
    std::lock_guard lock(mu_);
    if (newest_ <= told_) return;
    id = told_ = newest_;
  }
  hub_.Publish("activity", {{"id", id}});
}

}  // namespace swapd
