// Latch: a flag one thread raises and another waits for, with a deadline. Thread safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace swapd::testing {

class Latch {
 public:
  void Raise() {
    std::lock_guard lock(mu_);
    raised_ = true;
    cv_.notify_all();
  }
  bool Wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return raised_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool raised_ = false;
};

}  // namespace swapd::testing
