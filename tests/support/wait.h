// Waiting on a condition in tests: poll it until it holds or a generous deadline passes (never a
// fixed sleep standing in for "long enough").
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace swapd::testing {

// Polls `condition` every `interval` until it holds (true) or `timeout` passes (false).
inline bool WaitFor(const std::function<bool()>& condition,
                    std::chrono::milliseconds timeout = std::chrono::seconds(20),
                    std::chrono::milliseconds interval = std::chrono::milliseconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(interval);
  }
  return true;
}

}  // namespace swapd::testing
