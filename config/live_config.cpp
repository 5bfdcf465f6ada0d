#include "config/live_config.h"

#include <utility>

namespace swapd {

LiveConfig::LiveConfig(std::shared_ptr<const Config> initial) : current_(std::move(initial)) {}

std::shared_ptr<const Config> LiveConfig::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

void LiveConfig::Subscribe(Subscriber subscriber) {
  std::lock_guard lock(replace_mu_);
  subscribers_.push_back(std::move(subscriber));
}

std::shared_ptr<const Config> LiveConfig::Replace(std::shared_ptr<const Config> next) {
  std::lock_guard replacing(replace_mu_);
  std::shared_ptr<const Config> previous;
  {
    std::lock_guard lock(mu_);
    previous = std::exchange(current_, next);
  }
  for (const Subscriber& subscriber : subscribers_) subscriber(next);
  return previous;
}

}  // namespace swapd
