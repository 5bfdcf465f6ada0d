// LiveConfig: the one holder of the configuration swapd serves now, and of who must hear of a new
// one. Current() hands out a snapshot that stays valid while it is held: a reload never changes a
// Config in place, it replaces the pointer. Replace() is a reload's "swap, notify": `next` becomes
// current, then every subscriber is called with it, in the order they subscribed, on the caller's
// thread (validating comes before, in the daemon's reload).
// Thread safe: Current() may be called from any thread and never waits for a subscriber; Replace()
// calls are serialized. Subscribe() is for start-up, before the first Replace().
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "config/config.h"

namespace swapd {

class LiveConfig {
 public:
  using Subscriber = std::function<void(const std::shared_ptr<const Config>& next)>;

  explicit LiveConfig(std::shared_ptr<const Config> initial);
  LiveConfig(const LiveConfig&) = delete;
  LiveConfig& operator=(const LiveConfig&) = delete;

  std::shared_ptr<const Config> Current() const;

  // `subscriber` must outlive this LiveConfig's last Replace().
  void Subscribe(Subscriber subscriber);

  // Makes `next` current, then tells the subscribers. Returns the configuration it replaced.
  std::shared_ptr<const Config> Replace(std::shared_ptr<const Config> next);

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Config> current_;  // Guarded by mu_
  std::mutex replace_mu_;                  // one Replace() at a time
  std::vector<Subscriber> subscribers_;    // Guarded by replace_mu_
};

}  // namespace swapd
